package simulate

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/orkspace/orkestra-cel/operator/external"
)

// Outcome is how a spec ended.
type Outcome int

const (
	// Passed: every expectation held (or the spec has none).
	Passed Outcome = iota
	// Failed: an expectation did not hold (exit status 1).
	Failed
	// Invalid: the spec cannot run as written (exit status 2).
	Invalid
)

func (o Outcome) String() string {
	return [...]string{"passed", "failed", "invalid"}[o]
}

// Options configure RunSpec.
type Options struct {
	// Compile loads and compiles the spec's katalog.
	Compile Compiler
	// Envtest runs against a kube-apiserver and etcd instead of the
	// in-memory cluster; Assets is the directory holding them.
	Envtest bool
	Assets  string
	// Cycles overrides every spec's cycles (0: the spec's own).
	Cycles int
	// Out receives the report.
	Out io.Writer
	// External says where the katalog's external calls may go; its Skip
	// (--skip-external, or a spec's skipExternal) makes none.
	External external.Options
}

// RunSpec runs spec's spec: block (not its imports) and prints what each
// entry did and how each expectation fared. The error is for a run that
// could not be made (the API server did not start).
func RunSpec(ctx context.Context, spec *Spec, o Options) (Outcome, error) {
	w := o.Out
	fmt.Fprintf(w, "── %s (%s)\n", spec.File, spec.Name)
	p, err := prepare(spec, o, w)
	if err != nil {
		return invalid(w, err)
	}
	cycles := spec.Run.Cycles
	if o.Cycles > 0 {
		cycles = o.Cycles
	}
	c, err := newCluster(p, o)
	if err != nil {
		return Failed, err
	}
	defer func() {
		if err := c.stop(); err != nil {
			fmt.Fprintf(w, "stopping the API server: %v\n", err)
		}
	}()
	if err := seed(ctx, c, p.objects); err != nil {
		return invalid(w, err)
	}
	eo := o.External
	eo.Skip = eo.Skip || spec.Run.SkipExternal
	res, err := run(ctx, p.plan, c, cycles, external.New(eo))
	if err != nil {
		return Failed, err
	}
	failures := Check(res, spec.Run.Expect)
	for _, er := range res.Entries {
		printEntry(w, er, cycles, res.Elapsed)
		ex := spec.Run.Expect.For(er.Entry)
		if ex == nil {
			continue
		}
		if _, named := spec.Run.Expect.CRDs[er.Entry]; len(er.Objects) == 0 && !named {
			continue
		}
		var mine []Failure
		for _, f := range failures {
			if f.Entry == er.Entry {
				mine = append(mine, f)
			}
		}
		printChecks(w, ex, mine)
	}
	if spec.Run.Expect == nil {
		fmt.Fprintf(w, "  (no expect: nothing asserted)\n\n")
	}
	if len(failures) > 0 {
		return Failed, nil
	}
	return Passed, nil
}

func invalid(w io.Writer, err error) (Outcome, error) {
	var ie *InvalidError
	if errors.As(err, &ie) {
		fmt.Fprintf(w, "%s\n  INVALID\n\n", ie.Error())
		return Invalid, nil
	}
	fmt.Fprintf(w, "%v\n  INVALID\n\n", err)
	return Invalid, nil
}

// newCluster builds the cluster the spec runs against.
func newCluster(p *prepared, o Options) (*cluster, error) {
	if o.Envtest {
		return envtestCluster(p, o.Assets)
	}
	return memoryCluster(p.crds, p.untyped), nil
}

// seed creates the spec's objects, unrecorded.
func seed(ctx context.Context, c *cluster, objs []*objectWithSource) error {
	for _, o := range objs {
		if err := ensureNamespace(ctx, c, o.obj.GetNamespace()); err != nil {
			return err
		}
		if err := c.client.Create(ctx, o.obj.DeepCopy()); err != nil {
			return fmt.Errorf("%s: creating %s %s: %w", o.file, o.obj.GetKind(), o.obj.GetName(), err)
		}
	}
	return nil
}

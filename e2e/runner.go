package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"time"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// Runner runs E2E specs.
type Runner struct {
	Out io.Writer
	// Compile loads and compiles the katalog under test, the spec's CRD
	// files supplying the schemas of entries without crdFile; its error
	// prints the katalog's problems.
	Compile func(katalog string, crds []string) (*engine.Plan, error)
	// Backends compile the expectations' when:/or: gates.
	Backends engine.Backends
	// Connect provides the cluster of each spec.
	Connect Connector
	// Poll is the interval between two checks of an expectation
	// (default 500ms).
	Poll time.Duration
}

// run is one spec running.
type run struct {
	r       *Runner
	spec    *Spec
	res     *Result
	plan    *engine.Plan
	gates   map[*Expectation]engine.Condition
	cluster *Cluster
	k       *kube
	// applied are the setup objects and CRDs applied, for the teardown of
	// a cluster the run does not own.
	applied []Target
	crsDone bool
}

// Run runs a spec, then its imports, and returns what it showed.
func (r *Runner) Run(ctx context.Context, s *Spec) *Result {
	start := time.Now()
	res := &Result{Spec: s}
	defer func() { res.Elapsed = time.Since(start) }()
	if s.Description != "" {
		fmt.Fprintf(r.Out, "\nRunning E2E: %s — %s\n", s.Name, s.Description)
	} else {
		fmt.Fprintf(r.Out, "\nRunning E2E: %s\n", s.Name)
	}
	if !s.Aggregator() {
		x := &run{r: r, spec: s, res: res}
		if err := x.prepare(); err != nil {
			res.Invalid = err
		} else {
			x.lifecycle(ctx)
		}
		res.Elapsed = time.Since(start)
		res.Summary(r.Out)
	}
	for _, imp := range s.Imports {
		if imp.Wait > 0 {
			fmt.Fprintf(r.Out, "\n→ waiting %s before %s\n", imp.Wait, imp.Path)
			select {
			case <-time.After(imp.Wait):
			case <-ctx.Done():
				return res
			}
		}
		res.Imports = append(res.Imports, r.Run(ctx, imp.Spec))
	}
	if len(s.Imports) > 0 {
		p, f, sk, inv := res.Totals()
		fmt.Fprintf(r.Out, "\nSuite %s: %d passed, %d failed, %d skipped, %d invalid spec(s) (%s)\n", s.Name, p, f, sk, inv, round(time.Since(start)))
	}
	return res
}

// prepare compiles the katalog and the gates: what is invalid is found
// before any cluster starts.
func (x *run) prepare() error {
	var errs []error
	if x.spec.Katalog != "" && !x.spec.Custom {
		plan, err := x.r.Compile(x.spec.Katalog, x.spec.CRDs)
		if err != nil {
			errs = append(errs, fmt.Errorf("the katalog %s does not load: %w", x.spec.Katalog, err))
		}
		x.plan = plan
	}
	x.gates = map[*Expectation]engine.Condition{}
	var diags katalog.Diagnostics
	for i, e := range x.spec.Expect {
		if e.When.Empty() && e.Or.Empty() {
			continue
		}
		cond, d := engine.CompileGate(x.r.Backends, x.spec.Notes, e.When, e.Or, fmt.Sprintf("spec.expect[%d]", i))
		diags = append(diags, d...)
		x.gates[e] = cond
	}
	if err := diags.Err(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// lifecycle runs the spec on its cluster: CRDs, setup, the operator, the
// expectations with the custom resources applied and deleted on the way,
// onFailure, and the teardown.
func (x *run) lifecycle(ctx context.Context) {
	out := x.r.Out
	if skip := x.missingTools(); skip != "" {
		x.abortSetup(skip)
		return
	}
	c, err := x.r.Connect(ctx, x.spec, out)
	if err != nil {
		x.abort("cluster", err)
		return
	}
	x.cluster, x.res.Where = c, c.Where
	defer func() {
		if c.Close != nil {
			if err := c.Close(); err != nil {
				fmt.Fprintf(out, "  ! %v\n", err)
			}
		}
	}()
	if x.k, err = newKube(c.Config, c.Kubeconfig); err != nil {
		x.abort("cluster", err)
		return
	}
	x.k.noNodes = c.NoNodes
	if !c.Owned {
		defer x.teardown(context.WithoutCancel(ctx))
	}
	if err := x.installCRDs(ctx); err != nil {
		x.abort("CRDs", err)
		return
	}
	if err := x.setup(ctx); err != nil {
		x.abort("setup", err)
		return
	}
	if x.plan != nil && c.StartOperator != nil {
		fmt.Fprintf(out, "→ starting the operator of %s in process\n", x.plan.Katalog.Name)
		addr, stop, err := c.StartOperator(ctx, x.plan)
		if err != nil {
			x.abort("operator", err)
			return
		}
		x.k.runtimeHTTP = addr
		defer func() {
			if err := stop(); err != nil {
				fmt.Fprintf(out, "  ! %v\n", err)
			}
		}()
	}
	x.expectations(ctx)
	if x.failed() && x.spec.OnFailure != nil {
		fmt.Fprintln(out, "\n→ onFailure")
		x.onFailure(ctx, x.spec.OnFailure, x.spec.Dir)
	}
}

// missingTools says why the spec cannot run here when its setup needs a
// program that is not on PATH (helm), before any cluster starts.
func (x *run) missingTools() string {
	if h := x.spec.Setup.Helm; len(h) > 0 {
		if _, err := exec.LookPath("helm"); err != nil {
			return "setup.helm needs helm on PATH (to install " + h[0].Chart + "), which is not there"
		}
	}
	return ""
}

func (x *run) failed() bool {
	for _, c := range x.res.Cases {
		if c.Status == Failed {
			return true
		}
	}
	return false
}

// abort records a step that failed before the expectations could run:
// each of them is reported as not run.
func (x *run) abort(step string, err error) {
	x.record(Case{Name: step, Status: Failed, Detail: err.Error()})
	for _, e := range x.spec.Expect {
		x.record(Case{Name: e.Name, Status: Skipped, Detail: step + " failed"})
	}
}

// abortSetup: a setup that cannot run here (helm missing) skips every
// expectation.
func (x *run) abortSetup(skip string) {
	fmt.Fprintf(x.r.Out, "  ~ setup cannot run here: %s\n", skip)
	for _, e := range x.spec.Expect {
		x.record(Case{Name: e.Name, Status: Skipped, Detail: skip})
	}
}

func (x *run) record(c Case) {
	x.res.Cases = append(x.res.Cases, c)
	printCase(x.r.Out, c)
}

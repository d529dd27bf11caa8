package simulate

import (
	"context"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
)

// --envtest runs the same reconcilers against a real kube-apiserver: for a
// simple katalog it must record the op sequence the in-memory cluster
// records, cycle by cycle — the in-memory cluster answers as the API server
// does for what the reconcilers ask.
func TestEnvtestRecordsTheSameOps(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal(`KUBEBUILDER_ASSETS is not set: this test runs a real kube-apiserver (envtest).
    export KUBEBUILDER_ASSETS="$(hack/envtest-assets.sh)"`)
	}
	for _, f := range []string{"testdata/shop/simulate-free.yaml", "testdata/pipeline/simulate.yaml"} {
		t.Run(f, func(t *testing.T) {
			memory := opsOf(t, f, false)
			real := opsOf(t, f, true)
			if !reflect.DeepEqual(memory, real) {
				t.Errorf("in memory:\n%s\nagainst the API server:\n%s", strings.Join(memory, "\n"), strings.Join(real, "\n"))
			}
			if f != "testdata/pipeline/simulate.yaml" {
				return
			}
			// And RunSpec judges it the same.
			if outcome, out := runFile(t, f, Options{Envtest: true, Assets: os.Getenv("KUBEBUILDER_ASSETS")}); outcome != Passed {
				t.Errorf("with --envtest the spec %s:\n%s", outcome, out)
			}
		})
	}
}

// opsOf runs the spec and lists every op of every entry and cycle.
func opsOf(t *testing.T, file string, envtest bool) []string {
	t.Helper()
	spec, err := Read(file)
	if err != nil {
		t.Fatal(err)
	}
	p, err := prepare(spec, Options{Compile: compile, Envtest: envtest}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, err := newCluster(p, Options{Envtest: envtest, Assets: os.Getenv("KUBEBUILDER_ASSETS")})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.stop(); err != nil {
			t.Error(err)
		}
	}()
	if err := seed(ctx, c, p.objects); err != nil {
		t.Fatal(err)
	}
	res, err := run(ctx, p.plan, c, spec.Run.Cycles, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, er := range res.Entries {
		for _, cyc := range er.Cycles {
			for _, op := range cyc.Ops {
				out = append(out, fmt.Sprintf("%s cycle %d: %s %s in %q created=%v failed=%v", er.Entry, op.Cycle, op.Verb, op.path(), op.Namespace, op.Created, op.Failed))
			}
			for _, err := range cyc.Errors {
				out = append(out, fmt.Sprintf("%s cycle %d: error %v", er.Entry, cyc.N, err))
			}
		}
	}
	return out
}

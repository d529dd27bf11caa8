package simulate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	celgo "github.com/google/cel-go/cel"

	"github.com/orkspace/orkestra-cel/engine"
	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/gotmpl"
	"github.com/orkspace/orkestra-cel/katalog"
)

// compile loads and compiles a katalog with the backends orkestra check
// builds (cmd/orkestra compiles with the same calls).
func compile(w io.Writer, file string, crds []string) (*engine.Plan, error) {
	k, diags := katalog.LoadWith(katalog.Options{CRDs: crds}, file)
	if diags.HasErrors() {
		fmt.Fprintln(w, diags.Error())
		return nil, errors.New("the katalog has problems")
	}
	cel, err := celengine.New(celengine.Options{Libraries: []celgo.EnvOption{gotmpl.CELLibrary()}})
	if err != nil {
		return nil, err
	}
	plan, cdiags := engine.Compile(k, engine.Backends{CEL: cel, Legacy: gotmpl.NewWithOptions(cel, gotmpl.Options{})}, engine.CompileOptions{})
	if cdiags.HasErrors() {
		fmt.Fprintln(w, cdiags.Error())
		return nil, errors.New("the katalog has problems")
	}
	return plan, nil
}

// runFile runs the spec in file and returns its outcome and report.
func runFile(t testing.TB, file string, o Options) (Outcome, string) {
	t.Helper()
	var out bytes.Buffer
	o.Compile, o.Out = compile, &out
	loaded := Load(file)
	if len(loaded) != 1 {
		t.Fatalf("Load(%s) = %d specs, want 1", file, len(loaded))
	}
	if loaded[0].Err != nil {
		return Invalid, loaded[0].Err.Error()
	}
	outcome, err := RunSpec(context.Background(), loaded[0].Spec, o)
	if err != nil {
		t.Fatalf("RunSpec: %v", err)
	}
	return outcome, out.String()
}

// writeSpec writes a spec into a new directory and returns its path;
// %[1]s in body is the absolute path of testdata.
func writeSpec(t *testing.T, body string) string {
	t.Helper()
	td, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "simulate.yaml")
	if err := os.WriteFile(p, fmt.Appendf(nil, head+body, td), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// simulated runs the spec in file in memory and returns the cluster after
// the last cycle, for the tests to read its objects.
func simulated(t *testing.T, file string) (*cluster, *Result) {
	t.Helper()
	spec, err := Read(file)
	if err != nil {
		t.Fatal(err)
	}
	p, err := prepare(spec, Options{Compile: compile}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	c := memoryCluster(p.crds, p.untyped)
	if err := seed(context.Background(), c, p.objects); err != nil {
		t.Fatal(err)
	}
	res, err := run(context.Background(), p.plan, c, spec.Run.Cycles, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c, res
}

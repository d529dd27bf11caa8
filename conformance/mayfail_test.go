package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	celgo "github.com/google/cel-go/cel"

	"github.com/orkspace/orkestra-cel/engine"
	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/gotmpl"
	"github.com/orkspace/orkestra-cel/katalog"
)

const (
	mayFailKatalog        = "testdata/mayfail/katalog.yaml"
	unacknowledgedKatalog = "testdata/mayfail/unacknowledged.yaml"
)

// compileStrict compiles a katalog as the CLI's conformance does (check
// --strict), after edit changes the loaded katalog; it returns the plan
// and every diagnostic, errors included.
func compileStrict(t *testing.T, file string, edit func(*katalog.Katalog)) (*engine.Plan, katalog.Diagnostics) {
	t.Helper()
	k, diags := katalog.Load(file)
	if diags.HasErrors() {
		t.Fatalf("loading %s:\n%v", file, diags)
	}
	if edit != nil {
		edit(k)
	}
	cel, err := celengine.New(celengine.Options{Libraries: []celgo.EnvOption{gotmpl.CELLibrary()}})
	if err != nil {
		t.Fatal(err)
	}
	plan, cdiags := engine.Compile(k, engine.Backends{CEL: cel, Legacy: gotmpl.New(cel)}, engine.CompileOptions{StrictTotality: true})
	return plan, append(diags, cdiags...)
}

func oneCheck(t *testing.T, r *Report, id string) Check {
	t.Helper()
	cs := r.Find(id)
	if len(cs) != 1 {
		t.Fatalf("%d checks %q, want 1", len(cs), id)
	}
	return cs[0]
}

// A katalog with one conversion that can fail on objects its source schema
// accepts fails static/compile, and every other group still runs: the
// objects the conversion fails on show in the outputs and edit checks, the
// round trips, the protocol and the API server are checked all the same.
func TestStrictFindingRunsEveryGroup(t *testing.T) {
	plan, diags := compileStrict(t, unacknowledgedKatalog, nil)
	if errs := diags.Errors(); len(errs) != 1 || !strings.Contains(errs[0].Message, "can fail on objects v1 accepts: the label takes spec.tier") {
		t.Fatalf("diagnostics: %v", diags)
	}
	r := run(t, plan, Options{Count: 30, Seed: 1, Diagnostics: diags, APIServer: true, APIServerCount: 1, Environment: apiEnv(t)})
	c := oneCheck(t, r, "static/compile")
	if c.Passed || c.Failed != 1 || !strings.HasPrefix(c.Failures[0].Message, unacknowledgedKatalog+":22:26: [gadget-v1] conversion.paths[0].metadata.labels.tier: expression ${self.spec.?tier} can fail on objects v1 accepts") {
		t.Errorf("static/compile: %+v", c)
	}
	out := oneCheck(t, r, "static/outputs gadgets.conformance.orkestra.io v1→v2")
	if out.Passed || !strings.Contains(out.Failures[0].Message, "path v1→v2 failed (not acknowledged: the path has no mayFail)") {
		t.Errorf("outputs: %+v", out)
	}
	mustHave(t, r,
		"roundtrip/gadgets.conformance.orkestra.io v1→v2→v1", "roundtrip/gadgets.conformance.orkestra.io v2→v1→v2",
		"protocol/gadgets.conformance.orkestra.io review v1", "protocol/gadgets.conformance.orkestra.io failure v1",
		"protocol/metadata guard", "apiserver/install gadgets.conformance.orkestra.io",
		"apiserver/gadgets.conformance.orkestra.io read v2→v1 [v1,v1beta1]")
	if len(r.Find("apiserver/gadgets.conformance.orkestra.io write via v1")) == 0 {
		t.Error("the apiserver group did not write through v1")
	}
	// The text and JUnit reports list every failing check.
	var text, junit strings.Builder
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteJUnit(&junit); err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Checks {
		if !c.Passed && (!strings.Contains(text.String(), "FAIL  "+c.ID()) || !strings.Contains(junit.String(), `name="`+xmlEscaped(c.Name)+`"`)) {
			t.Errorf("failing check %s missing from a report", c.ID())
		}
	}
}

func xmlEscaped(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;").Replace(s)
}

// The same katalog with its path acknowledged (mayFail): static/compile
// passes, counting the findings; the objects the path rejects are left out
// of the round trips, the protocol and the API server, and counted with
// the reason; everything passes.
func TestMayFailLeavesObjectsOut(t *testing.T) {
	plan, diags := compileStrict(t, mayFailKatalog, nil)
	if diags.HasErrors() || len(diags.Acknowledged()) != 5 {
		t.Fatalf("diagnostics: %v", diags)
	}
	r := run(t, plan, Options{Count: 40, Seed: 1, Diagnostics: diags, APIServer: true, APIServerCount: 2, Environment: apiEnv(t)})
	mustPass(t, r)
	if c := oneCheck(t, r, "static/compile"); !strings.HasSuffix(c.Note, "; 1 path may fail (mayFail), 5 acknowledged findings") {
		t.Errorf("static/compile note: %s", c.Note)
	}
	mf := oneCheck(t, r, "static/may fail gadgets.conformance.orkestra.io")
	reason := "v1 takes free text: a tier that is not a label value, an endpoint without a name, a priority that is not an integer or a timeout that is not a duration has no v2 spelling"
	prefix := `path v1→v2 (mayFail "` + reason + `"): left out `
	if !strings.HasPrefix(mf.Note, prefix) || !strings.Contains(mf.Note, ", e.g. Gadget default/") || mf.Cases != 80 {
		t.Fatalf("static/may fail: %d cases, note %s", mf.Cases, mf.Note)
	}
	var left, of int
	var at string
	if _, err := fmt.Sscanf(strings.TrimPrefix(mf.Note, prefix), "%d of %d at %s", &left, &of, &at); err != nil || at != "v1," || left == 0 || of != 40 {
		t.Fatalf("left out %d of %d at %q (%v): %s", left, of, at, err, mf.Note)
	}
	trip := oneCheck(t, r, "roundtrip/gadgets.conformance.orkestra.io v1→v2→v1")
	if trip.Cases != 40-left || !strings.Contains(trip.Note, "; "+strconv.Itoa(left)+" left out: a mayFail path rejects them") {
		t.Errorf("round trip: %d cases, note %s; want %d", trip.Cases, trip.Note, 40-left)
	}
	if back := oneCheck(t, r, "roundtrip/gadgets.conformance.orkestra.io v2→v1→v2"); back.Cases != 40 || strings.Contains(back.Note, "left out") {
		t.Errorf("v2 round trip: %d cases, %s", back.Cases, back.Note)
	}
	mustHave(t, r, "protocol/gadgets.conformance.orkestra.io review v1", "apiserver/gadgets.conformance.orkestra.io write via v1 [v1,v1beta1]")
}

// The same path unacknowledged: its five findings fail static/compile and
// the objects it rejects fail the checks they reach.
func TestMayFailRemovedFails(t *testing.T) {
	plan, diags := compileStrict(t, mayFailKatalog, func(k *katalog.Katalog) {
		k.CRDs[0].Conversion.Paths[0].MayFail = ""
	})
	if len(diags.Errors()) != 5 {
		t.Fatalf("diagnostics: %v", diags)
	}
	r := run(t, plan, Options{Count: 40, Seed: 1, Diagnostics: diags})
	if c := oneCheck(t, r, "static/compile"); c.Passed || c.Failed != 5 || len(c.Failures) != 5 {
		t.Errorf("static/compile: %+v", c)
	}
	if len(r.Find("static/may fail")) != 0 {
		t.Error("a may-fail check without mayFail")
	}
	out := oneCheck(t, r, "static/outputs gadgets.conformance.orkestra.io v1→v2")
	if out.Passed || out.Cases != 40 || !strings.Contains(out.Failures[0].Message, "(not acknowledged: the path has no mayFail)") {
		t.Errorf("outputs: %d cases, %+v", out.Cases, out.Failures)
	}
}

// A conversion that does not compile fails static/compile; the other CRDs'
// checks and the protocol checks that need no CRD still run.
func TestBrokenConversionIsLeftOut(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"crd.yaml", "katalog.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata/mayfail", f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "katalog.yaml" {
			data = []byte(strings.Replace(string(data), "int(p)", "int(p.nope)", 1))
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plan, diags := compileStrict(t, filepath.Join(dir, "katalog.yaml"), nil)
	r := run(t, plan, Options{Count: 5, Seed: 1, Diagnostics: diags})
	c := oneCheck(t, r, "static/compile")
	if c.Passed || !strings.Contains(c.Failures[0].Message, "conversion.paths[0].spec.priority") || !strings.Contains(c.Note, "the conversion of gadgets.conformance.orkestra.io does not compile: no other check ran on it") {
		t.Errorf("static/compile: %+v", c)
	}
	if len(r.Find("gadgets.conformance.orkestra.io")) != 0 {
		t.Errorf("checks ran on the broken conversion: %v", r.Find("gadgets"))
	}
	mustHave(t, r, "protocol/metadata guard", "protocol/malformed requests")
}

package engine_test

import (
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// mayFailBody has two paths: v1alpha1→v1 reads spec.image, which v1alpha1
// does not require (one finding, line 13; 14 with a mayFail line), and v1→v1alpha1, which cannot
// fail. mayFail lines are inserted after each path's `to:`.
func mayFailBody(first, second string) string {
	line := func(s string) string {
		if s == "" {
			return ""
		}
		return "            mayFail: " + s + "\n"
	}
	return `      conversion:
        storageVersion: v1
        paths:
          - from: v1alpha1
            to: v1
` + line(first) + `            spec: {image: "${self.spec.image.lowerAscii()}"}
          - from: v1
            to: v1alpha1
` + line(second) + `            spec: {image: "${self.spec.image}"}
`
}

// compileStrict compiles the katalog at p as check --strict does.
func compileStrict(t *testing.T, p string) (*engine.Plan, katalog.Diagnostics) {
	t.Helper()
	k, diags := katalog.Load(p)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return engine.Compile(k, backends(t), engine.CompileOptions{StrictTotality: true})
}

func path(plan *engine.Plan, from, to string) *engine.Path {
	for _, c := range plan.Conversions {
		return c.Paths[[2]string{from, to}]
	}
	return nil
}

// A finding of a path without mayFail is a warning that says how to
// acknowledge it, and an error under StrictTotality; the path keeps it.
func TestUnacknowledgedFinding(t *testing.T) {
	p, plan, diags := compileBody(t, mayFailBody("", ""))
	want := `:13:40: warning: [app] conversion.paths[0].spec.image: expression ${self.spec.image.lowerAscii()} can fail on objects v1alpha1 accepts: spec.image is not required, so an object without it fails here (no such key); make it required or give it a default in the schema, or guard it: has(self.spec.image) ? … : …, or self.spec.?image.orValue(…); or declare that the path may fail: mayFail: "why" on conversion.paths[0]`
	if len(diags) != 1 || diags[0].Error() != p+want {
		t.Fatalf("diagnostics %v\nwant %s%s", diags, p, want)
	}
	if f := path(plan, "v1alpha1", "v1").Findings; len(f) != 1 || f[0] != diags[0] {
		t.Errorf("the path's findings: %v", f)
	}
	_, sdiags := compileStrict(t, p)
	if errs := sdiags.Errors(); len(errs) != 1 || errs[0].Error() != p+strings.Replace(want, "warning: ", "", 1) {
		t.Errorf("strict: %v", sdiags)
	}
}

// With mayFail the finding is acknowledged, with the reason, under
// StrictTotality too; the expression compiles and the path runs.
func TestAcknowledgedFinding(t *testing.T) {
	p, plan, diags := compileBody(t, mayFailBody(`"v1alpha1 objects may lack an image"`, ""))
	want := p + `:14:40: acknowledged: [app] conversion.paths[0].spec.image: expression ${self.spec.image.lowerAscii()} can fail on objects v1alpha1 accepts: spec.image is not required, so an object without it fails here (no such key); make it required or give it a default in the schema, or guard it: has(self.spec.image) ? … : …, or self.spec.?image.orValue(…) (mayFail: "v1alpha1 objects may lack an image")`
	if len(diags) != 1 || diags[0].Error() != want {
		t.Fatalf("diagnostics %v\nwant %s", diags, want)
	}
	splan, sdiags := compileStrict(t, p)
	if len(sdiags) != 1 || sdiags[0].Error() != want {
		t.Fatalf("strict: %v", sdiags)
	}
	for _, pl := range []*engine.Plan{plan, splan} {
		pa := path(pl, "v1alpha1", "v1")
		if pa.MayFail() != "v1alpha1 objects may lack an image" || len(pa.Findings) != 1 || pa.Findings[0].Severity != katalog.Acknowledged || pa.CompileFailed || pa.Spec == nil || !pa.Spec.Get("image").IsExpr() {
			t.Errorf("path: mayFail %q, findings %v, compile failed %v", pa.MayFail(), pa.Findings, pa.CompileFailed)
		}
		if back := path(pl, "v1", "v1alpha1"); back.MayFail() != "" || len(back.Findings) != 0 {
			t.Errorf("the way back: %q %v", back.MayFail(), back.Findings)
		}
	}
}

// A mayFail on a path without findings acknowledges nothing: a warning,
// an error under StrictTotality.
func TestMayFailWithoutFindings(t *testing.T) {
	p, _, diags := compileBody(t, mayFailBody(`"v1alpha1 objects may lack an image"`, `"cannot happen"`))
	want := `:17:22: warning: [app] conversion.paths[1].mayFail: the path from v1 to v1alpha1 declares mayFail, but none of its expressions can fail on an object the v1 schema accepts (check --strict finds nothing to acknowledge); remove mayFail, so that a failure a later edit brings in is reported`
	if w := diags.Warnings(); len(w) != 1 || w[0].Error() != p+want {
		t.Fatalf("warnings %v\nwant %s%s", w, p, want)
	}
	_, sdiags := compileStrict(t, p)
	if errs := sdiags.Errors(); len(errs) != 1 || errs[0].Error() != p+strings.Replace(want, "warning: ", "", 1) {
		t.Errorf("strict: %v", sdiags)
	}
}

// A path whose value does not compile says so (the conformance suite does
// not run it), and its mayFail is not judged.
func TestPathCompileFailed(t *testing.T) {
	body := strings.Replace(mayFailBody(`"v1alpha1 objects may lack an image"`, ""), "self.spec.image.", "self.spec.imagee.", 1)
	_, plan, diags := compileBody(t, body)
	if errs := diags.Errors(); len(errs) != 1 || !strings.Contains(errs[0].Message, "undefined field 'imagee'") || len(diags) != 1 {
		t.Fatalf("diagnostics %v", diags)
	}
	if pa := path(plan, "v1alpha1", "v1"); !pa.CompileFailed || len(pa.Findings) != 0 {
		t.Errorf("path: compile failed %v, findings %v", pa.CompileFailed, pa.Findings)
	}
	if back := path(plan, "v1", "v1alpha1"); back.CompileFailed {
		t.Error("the way back compiled")
	}
}

package katalog

import (
	"strings"
	"testing"
)

// conversionWith is the website entry with one path v1alpha1→v1 whose
// mayFail line is given (line 19 of the katalog; its value at column 22).
func conversionWith(mayFail string) string {
	return header + entry + `      conversion:
        storageVersion: v1
        paths:
          - from: v1alpha1
            to: v1
            mayFail: ` + mayFail + `
            spec: {image: "${self.spec.image}"}
`
}

// A path acknowledges that it may fail with the reason, a non-empty
// string: plain, quoted or a folded block, trimmed.
func TestMayFailDecodes(t *testing.T) {
	cases := map[string]string{
		`spec.image is free text`:          "spec.image is free text",
		`"  quoted, with spaces around  "`: "quoted, with spaces around",
		">-\n              v1alpha1 takes free text,\n              v1 does not\n": "v1alpha1 takes free text, v1 does not",
	}
	for in, want := range cases {
		k, diags := Load(writeKatalog(t, conversionWith(in)))
		if diags.HasErrors() {
			t.Fatalf("%q: %v", in, diags)
		}
		p := k.CRDs[0].Conversion.Paths[0]
		if p.MayFail != want || p.MayFailPos.Line != 19 || p.MayFailPos.Col != 22 {
			t.Errorf("mayFail: %q → %q at %s, want %q at line 19, column 22", in, p.MayFail, p.MayFailPos, want)
		}
	}
}

// The reason is what check, explain, conformance and a failed conversion
// show: an empty one, or a value that is not a string (`true`, the form
// other converters take), is a load error at the value.
func TestMayFailErrors(t *testing.T) {
	example := `(e.g. mayFail: "spec.tier is free text at v1alpha1; objects whose tier is not a label value do not convert")`
	empty := `19:22: [site] conversion.paths[0].mayFail: mayFail needs the reason the path may fail on objects the v1alpha1 schema accepts ` + example + `; remove mayFail if it cannot fail`
	cases := map[string]string{
		`""`:       empty,
		`"   "`:    empty,
		`null`:     empty,
		`true`:     `19:22: [site] conversion.paths[0].mayFail: mayFail takes the reason as a string, got bool "true" ` + example,
		`3`:        `19:22: [site] conversion.paths[0].mayFail: mayFail takes the reason as a string, got int "3" ` + example,
		`[a, b]`:   `19:22: [site] conversion.paths[0].mayFail: mayFail takes the reason as a string, got a list ` + example,
		`{why: x}`: `19:22: [site] conversion.paths[0].mayFail: mayFail takes the reason as a string, got a map ` + example,
	}
	for in, want := range cases {
		p := writeKatalog(t, conversionWith(in))
		k, diags := Load(p)
		errs := diags.Errors()
		if len(errs) != 1 || errs[0].Error() != p+":"+want {
			t.Errorf("mayFail: %s:\n got %v\nwant %s:%s", in, errs, p, want)
			continue
		}
		if k != nil && len(k.CRDs) > 0 && k.CRDs[0].Conversion != nil && len(k.CRDs[0].Conversion.Paths) > 0 && k.CRDs[0].Conversion.Paths[0].MayFail != "" {
			t.Errorf("mayFail: %s: decoded as %q", in, k.CRDs[0].Conversion.Paths[0].MayFail)
		}
	}
}

// An acknowledged diagnostic prints its severity and the reason.
func TestAcknowledgedDiagnostic(t *testing.T) {
	d := Diagnostic{Pos: Pos{File: "k.yaml", Line: 3, Col: 4}, Severity: Acknowledged, Entry: "e", Field: "conversion.paths[0].spec.x", Message: "expression ${…} can fail", Reason: "free text"}
	want := `k.yaml:3:4: acknowledged: [e] conversion.paths[0].spec.x: expression ${…} can fail (mayFail: "free text")`
	if d.Error() != want {
		t.Errorf("got  %s\nwant %s", d.Error(), want)
	}
	ds := Diagnostics{d, {Severity: Warning}, {Severity: Error}}
	if len(ds.Acknowledged()) != 1 || len(ds.Warnings()) != 1 || len(ds.Errors()) != 1 || !strings.Contains(ds.Error(), "acknowledged:") {
		t.Errorf("filters: %v", ds)
	}
}

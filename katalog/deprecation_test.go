package katalog

import (
	"strings"
	"testing"
)

func TestDeprecationErrors(t *testing.T) {
	long := strings.Repeat("w", 257)
	cases := []struct {
		name, body, want string
	}{
		{"warning without deprecated", header + entry + "      deprecationWarning: use v2\n",
			"14:7: [site] deprecationWarning: deprecationWarning needs deprecated: true on the same entry (the API server accepts a warning only for a deprecated version)"},
		{"warning with deprecated: false", header + entry + "      deprecated: false\n      deprecationWarning: use v2\n",
			"15:7: [site] deprecationWarning: deprecationWarning needs deprecated: true on the same entry (the API server accepts a warning only for a deprecated version)"},
		{"empty warning", header + entry + "      deprecated: true\n      deprecationWarning: \"\"\n",
			"15:27: [site] deprecationWarning: deprecationWarning is empty; write the text clients should see, or remove the key for the API server's default warning"},
		{"warning too long", header + entry + "      deprecated: true\n      deprecationWarning: " + long + "\n",
			"15:27: [site] deprecationWarning: deprecationWarning is 257 bytes long; the API server allows at most 256"},
		{"control character", header + entry + "      deprecated: true\n      deprecationWarning: \"use\\tv2\"\n",
			"15:27: [site] deprecationWarning: deprecationWarning holds a non-printable character at byte 3 (U+0009); the API server allows printable characters only"},
		{"deprecated not a boolean", header + entry + "      deprecated: soon\n",
			"14:19: [site] deprecated: must be true or false, got str \"soon\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := writeKatalog(t, tc.body)
			_, diags := Load(p)
			errs := diags.Errors()
			if len(errs) != 1 {
				t.Fatalf("errors %v, want one", errs)
			}
			if got, want := errs[0].Error(), p+":"+tc.want; !strings.HasPrefix(got, want) {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
		})
	}
}

func TestDeprecationMarksTheEntrysVersion(t *testing.T) {
	p := writeKatalog(t, header+entry+"      deprecated: true\n      deprecationWarning: demo.orkestra.io/v1 Website is deprecated; use v2\n")
	k, diags := Load(p)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e := k.Entry("site")
	if !e.Deprecated || e.DeprecationWarning == nil || *e.DeprecationWarning != "demo.orkestra.io/v1 Website is deprecated; use v2" {
		t.Fatalf("entry: deprecated %v, warning %v", e.Deprecated, e.DeprecationWarning)
	}
	spec := e.CRD.Object.Spec.DeepCopy()
	k.ApplyDeprecations(e.CRD, spec)
	for _, v := range spec.Versions {
		switch v.Name {
		case "v1":
			if !v.Deprecated || v.DeprecationWarning == nil || *v.DeprecationWarning != *e.DeprecationWarning {
				t.Errorf("v1: deprecated %v, warning %v; want the entry's", v.Deprecated, v.DeprecationWarning)
			}
		default:
			if v.Deprecated || v.DeprecationWarning != nil {
				t.Errorf("%s: deprecated %v, warning %v; want it left alone", v.Name, v.Deprecated, v.DeprecationWarning)
			}
		}
	}
	// The manifest itself is not changed.
	for _, v := range e.CRD.Object.Spec.Versions {
		if v.Deprecated {
			t.Errorf("the loaded manifest's %s was marked deprecated", v.Name)
		}
	}
}

func TestDeprecationWithoutWarningKeepsTheDefault(t *testing.T) {
	k, diags := Load(writeKatalog(t, header+entry+"      deprecated: true\n"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e := k.Entry("site")
	dep, warning := k.Deprecation(e.CRD, "v1")
	if !dep || warning != nil {
		t.Fatalf("Deprecation(v1) = %v, %v; want deprecated with the API server's default warning (nil)", dep, warning)
	}
}

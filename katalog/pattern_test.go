package katalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// patternKatalog is a katalog named legacy-site, version 1.4.0 by acme,
// with the given top-level lifecycle block (at line 7).
func patternKatalog(t *testing.T, lifecycle string) string {
	t.Helper()
	return writeKatalog(t, `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata:
  name: legacy-site
  author: acme
  version: 1.4.0
`+lifecycle+`spec:
  crds:
`+strings.TrimPrefix(entry, "\n"))
}

// Upstream's rules (orkspace/orkestra pkg/katalog/validate/lifecycle.go):
// alpha and beta warn, deprecated without a block warns, a deprecation
// needs a message, dates are YYYY-MM-DD with from before to, ranges are
// semantic version ranges, and accept belongs to a Komposer.
func TestPatternLifecycleDecode(t *testing.T) {
	cases := []struct{ name, block, want string }{
		{"alpha", "lifecycle:\n  maturity: alpha\n", "warning: lifecycle.maturity: maturity is alpha: this pattern is experimental"},
		{"beta", "lifecycle:\n  maturity: beta\n", "warning: lifecycle.maturity: maturity is beta"},
		{"deprecated without a block", "lifecycle:\n  maturity: deprecated\n", "warning: lifecycle.maturity: maturity is deprecated but lifecycle.deprecation is not set, so the katalog starts"},
		{"bad maturity", "lifecycle:\n  maturity: retired\n", `8:13: lifecycle.maturity: maturity must be one of [alpha beta stable deprecated], got "retired"`},
		{"no message", "lifecycle:\n  deprecation:\n    migratedTo: site-v2\n", "8:3: lifecycle.deprecation.message: a deprecation needs message:"},
		{"bad date", "lifecycle:\n  deprecation:\n    message: m\n    timeline: {from: 01/01/2026}\n", `10:22: lifecycle.deprecation.timeline.from: "01/01/2026" is not a date; write YYYY-MM-DD`},
		{"from after to", "lifecycle:\n  deprecation:\n    message: m\n    timeline: {from: 2027-06-01, to: 2027-01-01}\n", "10:5: lifecycle.deprecation.timeline: from (2027-06-01) must be before to (2027-01-01)"},
		{"eol without beforeEol", "lifecycle:\n  deprecation:\n    message: m\n    accept: {eol: true}\n", "10:14: lifecycle.deprecation.accept.eol: eol: true acknowledges the end of life on top of the deprecation; set beforeEol: true as well"},
		{"bad range", "lifecycle:\n  compatibility:\n    kubernetes: \"!!!\"\n", `9:17: lifecycle.compatibility.kubernetes: "!!!" is not a semantic version range`},
		{"accept on a Katalog", "lifecycle:\n  accept:\n    patterns: [{name: x}]\n", "8:3: lifecycle.accept: lifecycle.accept is only valid in a Komposer"},
		{"unknown key", "lifecycle:\n  maturty: beta\n", `8:3: lifecycle.maturty: unknown key "maturty"; did you mean "maturity"?`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := patternKatalog(t, tc.block)
			_, diags := Load(p)
			var got []string
			for _, d := range diags {
				s := strings.ReplaceAll(d.Error(), p+":", "")
				got = append(got, s)
				if strings.Contains(s, tc.want) {
					return
				}
			}
			t.Fatalf("want %q in\n%s", tc.want, strings.Join(got, "\n"))
		})
	}
}

func TestPatternStartGate(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	gate := func(block string) (string, *Katalog) {
		k, diags := Load(patternKatalog(t, block))
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		if err := k.StartGate(now); err != nil {
			return err.Error(), k
		}
		return "", k
	}
	cases := []struct{ name, block, want string }{
		{"not deprecated", "lifecycle:\n  maturity: stable\n", ""},
		{"deprecated", "lifecycle:\n  deprecation:\n    message: use site-v2\n    migratedTo: site-v2:2.0.0\n",
			`katalog "legacy-site" is deprecated and does not start without an explicit acknowledgement: use site-v2; migrate to site-v2:2.0.0. To run it anyway, import it from a Komposer that accepts it:` + "\n  lifecycle:\n    accept:\n      patterns:\n        - name: legacy-site"},
		{"window not open yet", "lifecycle:\n  deprecation:\n    message: m\n    timeline: {from: 2027-01-01, to: 2027-06-01}\n", ""},
		{"window open", "lifecycle:\n  deprecation:\n    message: m\n    timeline: {from: 2026-01-01, to: 2026-12-27}\n", "is deprecated and does not start without an explicit acknowledgement: m; end of life in 29 days (2026-12-27)"},
		{"end of life", "lifecycle:\n  deprecation:\n    message: m\n    timeline: {to: 2026-06-01}\n", "is end-of-life and does not start without an explicit acknowledgement: m; its end of life was 2026-06-01"},
		{"own acknowledgement", "lifecycle:\n  deprecation:\n    message: m\n    accept: {beforeEol: true}\n", ""},
		{"own acknowledgement, past end of life", "lifecycle:\n  deprecation:\n    message: m\n    timeline: {to: 2026-06-01}\n    accept: {beforeEol: true}\n", "is end-of-life"},
		{"own acknowledgement of end of life", "lifecycle:\n  deprecation:\n    message: m\n    timeline: {to: 2026-06-01}\n    accept: {beforeEol: true, eol: true}\n", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := gate(tc.block)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Fatalf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// A Komposer accepts a deprecated katalog it imports by name, and by
// author and version range when it gives them.
func TestKomposerAcceptsDeprecatedKatalog(t *testing.T) {
	now := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	base := patternKatalog(t, "lifecycle:\n  deprecation:\n    message: use site-v2\n")
	for _, tc := range []struct {
		accept string
		starts bool
	}{
		{"- name: legacy-site", true},
		{"- name: legacy-site\n          author: acme\n          version: \">= 1.0.0, < 2.0.0\"", true},
		{"- name: other", false},
		{"- name: legacy-site\n          author: someone-else", false},
		{"- name: legacy-site\n          version: \"^2\"", false},
	} {
		p := filepath.Join(filepath.Dir(base), "komposer.yaml")
		body := "apiVersion: orkestra.orkspace.io/v1\nkind: Komposer\nmetadata:\n  name: platform\nlifecycle:\n  accept:\n    patterns:\n        " + tc.accept + "\nimports:\n  files: [./katalog.yaml]\n"
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		k, diags := Load(p)
		if diags.HasErrors() {
			t.Fatalf("%s: %v", tc.accept, diags)
		}
		err := k.StartGate(now)
		if (err == nil) != tc.starts {
			t.Errorf("accept %s: start error %v, want starts=%v", tc.accept, err, tc.starts)
		}
		warned := strings.Contains(k.Warnings.Error(), `katalog "legacy-site" is deprecated: orkestra run and dev refuse to start it`)
		if warned == tc.starts {
			t.Errorf("accept %s: load warning %v, want %v:\n%v", tc.accept, warned, !tc.starts, k.Warnings)
		}
	}
}

// A deprecation in force marks every version of the katalog's CRDs
// deprecated, with the message as the Warning clients get.
func TestPatternDeprecationMarksCRDVersions(t *testing.T) {
	k, diags := Load(patternKatalog(t, "lifecycle:\n  deprecation:\n    message: use site-v2\n"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	crd := k.CRDs[0].CRD
	for _, v := range crd.Object.Spec.Versions {
		dep, w := k.Deprecation(crd, v.Name)
		if !dep || w == nil || *w != "use site-v2" {
			t.Errorf("%s: deprecated %v, warning %v", v.Name, dep, w)
		}
	}
	k, _ = Load(patternKatalog(t, "lifecycle:\n  deprecation:\n    message: use site-v2\n    timeline: {from: 2999-01-01}\n"))
	crd = k.CRDs[0].CRD
	if dep, _ := k.Deprecation(crd, "v1"); dep {
		t.Error("deprecated before its timeline.from")
	}
}

package gotmpl

import (
	"testing"
)

// Issue 18 item 4: `default FIELD LITERAL`. The newest original takes the
// fallback first (pkg/note/conditional.go noteDefault(dflt, val)), so
// `default .spec.replicas 1` always gave 1 there and `default .spec.suspend
// false` the field itself; older releases and the docs (docs/03-conditional
// "default .spec.replicas 2 → spec.replicas absent → 2") read it value
// first. This runtime keeps the evident reading and warns.
func TestDefaultOrderWarning(t *testing.T) {
	cases := []struct{ src, want string }{
		{`{{ default .spec.replicas 1 }}`, "k.yaml:10:23: warning: [things] spec.x: default .spec.replicas 1 is read as \".spec.replicas, else 1\" (the older original engine and its docs); the newest original engine takes the first argument as the fallback and always gives 1; write `.spec.replicas | default 1`, which both read the same way (orkestra migrate rewrites it)"},
		{`{{ default .spec.debug false }}`, "k.yaml:10:23: warning: [things] spec.x: default .spec.debug false is read as \".spec.debug, else false\" (the older original engine and its docs); the newest original engine takes the first argument as the fallback and gives .spec.debug itself, even when empty; write `.spec.debug | default false`, which both read the same way (orkestra migrate rewrites it)"},
		{`{{ .spec.replicas | default 1 }}`, ""},
		{`{{ default 1 .spec.replicas }}`, ""},
	}
	for _, tc := range cases {
		if got := compileErrs(t, tc.src, testCtx(t)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.src, got, tc.want)
		}
	}
	// The value is the field, else the literal.
	if got, err := render(t, `{{ default .spec.count 5 }}`, testObject()); err != nil || got != "5" {
		t.Errorf("got %q, %v", got, err)
	}
}

func TestCanonicalDefaults(t *testing.T) {
	cases := []struct {
		src, want string
		changed   bool
	}{
		{`{{ default .spec.replicas 1 }}`, `{{ .spec.replicas | default 1 }}`, true},
		{`x-{{ default (toUpper .spec.tier) "FREE" | toLower }}-{{ default .spec.env "dev" }}`, `x-{{ (toUpper .spec.tier) | default "FREE" | toLower }}-{{ .spec.env | default "dev" }}`, true},
		{`{{ if default .spec.enabled false }}on{{ end }}`, `{{ if .spec.enabled | default false }}on{{ end }}`, true},
		{`{{ .spec.x | default "y" }}`, `{{ .spec.x | default "y" }}`, false},
		{`{{ default "y" .spec.x }}`, `{{ default "y" .spec.x }}`, false},
	}
	for _, tc := range cases {
		got, changed, err := CanonicalDefaults(tc.src)
		if err != nil || got != tc.want || changed != tc.changed {
			t.Errorf("%s: got %q %v %v, want %q %v", tc.src, got, changed, err, tc.want, tc.changed)
		}
	}
}

package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// normalize's load errors name the field and how to fix it
// (upstream semantics: iAlexeze/orkestra examples/use-cases/normalize).
func TestNormalizeErrors(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"a field below a scalar", "      normalize:\n        spec:\n          image.tag: x\n",
			`10:11: [app] normalize.spec.image.tag: spec.image is a string, which has no field "tag"; normalize a field of an object`},
		{"a value of the wrong type", "      normalize:\n        spec:\n          replicas: \"${self.spec.image}\"\n",
			`10:22: [app] normalize.spec.replicas: expression ${self.spec.image} yields string, but normalize.spec.replicas expects an integer`},
		{"no spec", "      normalize:\n        audit: true\n",
			`8:7: [app] normalize.spec: normalize needs spec: a map of spec field paths`},
		{"types of a field not rewritten", "      normalize:\n        spec:\n          image: x\n        types:\n          replicas: int\n",
			`[app] normalize.types.replicas: types names spec.replicas, which normalize.spec does not rewrite`},
		{"an unknown type", "      normalize:\n        spec:\n          image: x\n        types:\n          image: text\n",
			`[app] normalize.types.image: type "text" is not one of string, int, integer, float, number, bool, boolean`},
		{"an empty path segment", "      normalize:\n        spec:\n          a..b: x\n",
			`10:11: [app] normalize.spec.a..b: field path "a..b" has an empty segment`},
		{"an unknown key", "      normalize:\n        specs: {}\n",
			`[app] normalize.specs: unknown key "specs"; did you mean "spec"?`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, _, diags := compileBody(t, tc.body)
			got := strings.ReplaceAll(diags.Error(), p+":", "")
			if !strings.Contains(got, tc.want) {
				t.Fatalf("want\n  %s\ngot\n  %s", tc.want, got)
			}
		})
	}
}

// Every value reads the object as stored (not the other rewrites), typed
// by the schema; an empty string is written as upstream writes it; a field the CRD does not declare is added to the copy and readable
// by the entry's expressions; the original object is not touched.
func TestNormalizeApply(t *testing.T) {
	_, plan, diags := compileBody(t, `      normalize:
        audit: true
        spec:
          image: '{{ .spec.image | toLower }}'
          tier: '{{ if eq .spec.image "X" }}pro{{ end }}'
          replicas: "{{ default 2 .spec.replicas }}"
          extra.note: '{{ .spec.image }}-seen'
          label.value: '${self.spec.image + "!"}'
      operatorBox:
        status:
          fields:
            - path: phase
              value: '${self.spec.label.value}'
`)
	if diags.HasErrors() {
		t.Fatalf("compile: %v", diags.Errors())
	}
	e := plan.Entry("app")
	in := map[string]any{"spec": map[string]any{"image": "NGINX"}}
	out, err := e.Normalize.Apply(in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"spec": map[string]any{"image": "nginx", "tier": "", "replicas": int64(2), "extra": map[string]any{"note": "NGINX-seen"}, "label": map[string]any{"value": "NGINX!"}},
		"_normalizeChanges": []any{
			map[string]any{"field": "image", "from": "NGINX", "to": "nginx"},
			map[string]any{"field": "tier", "from": nil, "to": ""},
			map[string]any{"field": "replicas", "from": nil, "to": int64(2)},
			map[string]any{"field": "extra.note", "from": nil, "to": "NGINX-seen"},
			map[string]any{"field": "label.value", "from": nil, "to": "NGINX!"},
		},
	}
	if !jsonval.Equal(out, want) {
		t.Errorf("normalized\n  %v\nwant\n  %v", out, want)
	}
	if in["spec"].(map[string]any)["image"] != "NGINX" || len(in) != 1 {
		t.Errorf("the stored object was modified: %v", in)
	}
	// Nothing changes: no audit root.
	out, err = e.Normalize.Apply(map[string]any{"spec": map[string]any{"image": "nginx", "tier": "", "replicas": int64(2), "extra": map[string]any{"note": "nginx-seen"}, "label": map[string]any{"value": "nginx!"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out["_normalizeChanges"]; ok {
		t.Errorf("audit root without a change: %v", out["_normalizeChanges"])
	}
}

// A normalize value that reads the clock makes the entry time-dependent:
// what its children and status read changes with the clock alone.
func TestNormalizeReadingTheClockIsTimed(t *testing.T) {
	_, plan, diags := compileBody(t, `      normalize:
        spec:
          tier: '{{ if weekday }}business{{ else }}weekend{{ end }}'
`)
	if diags.HasErrors() {
		t.Fatalf("compile: %v", diags.Errors())
	}
	e := plan.Entry("app")
	if len(e.Timed) != 1 {
		t.Fatalf("Timed = %v, want the normalize value", e.Timed)
	}
	now := time.Date(2026, 7, 14, 10, 0, 0, 0, time.UTC) // a Tuesday
	if next := engine.NextChange(now, e.Timed); !next.Equal(time.Date(2026, 7, 15, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("next change = %v, want the next midnight", next)
	}
}

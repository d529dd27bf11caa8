package objgen

import (
	"strings"
	"testing"
)

// edit returns a copy of obj with the value at a dotted path set (or removed
// when v is the remove marker).
func edit(obj map[string]any, dotted string, v any) map[string]any {
	out := deepCopyMap(obj)
	keys := strings.Split(dotted, ".")
	m := out
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	if _, del := v.(removeMarker); del {
		delete(m, keys[len(keys)-1])
	} else {
		m[keys[len(keys)-1]] = v
	}
	return out
}

type removeMarker struct{}

var removed = removeMarker{}

func website(t *testing.T) versionSchema {
	t.Helper()
	for _, vs := range loadVersions(t, examplesDir+"/website/crd.yaml") {
		if vs.gvk.Version == "v1" {
			return vs
		}
	}
	t.Fatal("website CRD has no v1")
	return versionSchema{}
}

func TestValidateAcceptsHandWrittenObjects(t *testing.T) {
	ws := website(t)
	obj := map[string]any{
		"apiVersion": "demo.orkestra.io/v1",
		"kind":       "Website",
		"metadata":   map[string]any{"name": "site", "namespace": "default", "labels": map[string]any{"app": "site"}},
		"spec": map[string]any{
			"image": "nginx:1.27", "replicas": int64(3), "tier": "pro",
			"seo": map[string]any{"enabled": true, "keywords": []any{"a", "b"}},
		},
		"status": map[string]any{"phase": "Ready", "readyReplicas": int64(3)},
	}
	if err := Validate(ws.s, obj); err != nil {
		t.Fatal(err)
	}
	// ints decoded as float64 by encoding/json are fine too
	if err := Validate(ws.s, edit(obj, "spec.replicas", float64(3))); err != nil {
		t.Fatal(err)
	}
	// as on the API server: a null in a non-nullable field is defaulted, or
	// dropped when the field has no default
	if err := Validate(ws.s, edit(obj, "spec.replicas", nil)); err != nil {
		t.Fatal(err)
	}
	if err := Validate(ws.s, edit(obj, "status.phase", nil)); err != nil {
		t.Fatal(err)
	}
	g := gadget(t)
	gobj := map[string]any{
		"apiVersion": "test.orkestra.io/v1",
		"kind":       "Gadget",
		"metadata":   map[string]any{"name": "g"},
		"spec": map[string]any{
			"name": "abc", "mode": "fast", "replicas": int64(1),
			"window":   map[string]any{"min": int64(1), "max": int64(2)},
			"nickname": nil,
			"tags":     []any{"a", "b"},
			"ports": []any{
				map[string]any{"name": "http", "protocol": "TCP", "port": int64(80)},
				map[string]any{"name": "http", "protocol": "UDP", "port": int64(80)},
			},
			"template": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"x": "y"}},
			"extra":    map[string]any{"anything": []any{int64(1), "two"}},
			"choice":   map[string]any{"left": "l"},
		},
	}
	if err := Validate(g.s, gobj); err != nil {
		t.Fatal(err)
	}
}

// TestValidateRejects checks hand-written invalid objects: each must be
// rejected with a message naming the field.
func TestValidateRejects(t *testing.T) {
	ws := website(t)
	site := map[string]any{
		"apiVersion": "demo.orkestra.io/v1",
		"kind":       "Website",
		"metadata":   map[string]any{"name": "site", "namespace": "default"},
		"spec":       map[string]any{"image": "nginx:1.27", "replicas": int64(3)},
	}
	g := gadget(t)
	gad := map[string]any{
		"apiVersion": "test.orkestra.io/v1",
		"kind":       "Gadget",
		"metadata":   map[string]any{"name": "g", "namespace": "default"},
		"spec": map[string]any{
			"name": "abc", "mode": "fast", "replicas": int64(1),
			"window": map[string]any{"min": int64(1), "max": int64(2)},
		},
	}
	cases := []struct {
		name  string
		vs    versionSchema
		obj   map[string]any
		wants []string // substrings of the error
	}{
		{"maximum", ws, edit(site, "spec.replicas", int64(51)), []string{"spec.replicas", "less than or equal to 50"}},
		{"minimum", ws, edit(site, "spec.port", int64(0)), []string{"spec.port", "greater than or equal to 1"}},
		{"required", ws, edit(site, "spec.image", removed), []string{"spec.image: Required value"}},
		{"enum", ws, edit(site, "spec.tier", "gold"), []string{"spec.tier: Unsupported value: \"gold\"", "\"free\", \"pro\", \"enterprise\""}},
		{"maxLength", ws, edit(site, "spec.image", strings.Repeat("x", 257)), []string{"spec.image: Too long", "256"}},
		{"type", ws, edit(site, "spec.replicas", "3"), []string{"spec.replicas: Invalid value", "must be of type integer"}},
		{"non-nullable null", ws, edit(site, "spec.image", nil), []string{"spec.image: Required value"}},
		{"maxItems", ws, edit(site, "spec.seo", map[string]any{"keywords": make([]any, 33)}), []string{"spec.seo.keywords: Too many: 33: must have at most 32 items"}},
		{"unknown field", ws, edit(site, "spec.colour", "red"), []string{"spec.colour: Forbidden: unknown field"}},
		{"unknown metadata field", ws, edit(site, "metadata.nmae", "x"), []string{"metadata.nmae: Forbidden: unknown field"}},
		{"bad name", ws, edit(site, "metadata.name", "Bad_Name"), []string{"metadata.name: Invalid value: \"Bad_Name\""}},
		{"no name", ws, edit(site, "metadata.name", removed), []string{"metadata.name: Required value"}},
		{"no kind", ws, edit(site, "kind", removed), []string{"kind: Required value"}},
		{"bad apiVersion", ws, edit(site, "apiVersion", "a/b/c"), []string{"apiVersion: Invalid value"}},
		{"bad label", ws, edit(site, "metadata.labels", map[string]any{"app": "not valid!"}), []string{"metadata.labels: Invalid value: \"not valid!\""}},

		{"pattern", g, edit(gad, "spec.name", "Not_OK"), []string{"spec.name", "should match '^[a-z0-9-]+$'"}},
		{"minLength", g, edit(gad, "spec.name", "ab"), []string{"spec.name", "should be at least 3 chars long"}},
		{"exclusiveMinimum", g, edit(gad, "spec.exclusive", int64(0)), []string{"spec.exclusive", "greater than 0"}},
		{"multipleOf", g, edit(gad, "spec.step", int64(7)), []string{"spec.step", "multiple of 5"}},
		{"integer enum", g, edit(gad, "spec.level", int64(4)), []string{"spec.level: Unsupported value: 4"}},
		{"format email", g, edit(gad, "spec.formats", map[string]any{"email": "not an email"}), []string{"spec.formats.email", "must be of type email"}},
		{"format date-time", g, edit(gad, "spec.formats", map[string]any{"createdAt": "yesterday"}), []string{"spec.formats.createdAt", "date-time"}},
		{"defaulted list-map key", g, edit(gad, "spec.ports", []any{
			map[string]any{"name": "http", "port": int64(1)},
			map[string]any{"name": "http", "protocol": "TCP", "port": int64(2)},
		}), []string{"spec.ports[1]: Duplicate value"}},
		{"int-or-string", g, edit(gad, "spec.maxUnavailable", true), []string{"spec.maxUnavailable", "integer", "string"}},
		{"int-or-string pattern", g, edit(gad, "spec.targetPort", "10"), []string{"spec.targetPort", "should match"}},
		{"list-type set", g, edit(gad, "spec.tags", []any{"a", "a"}), []string{"spec.tags[1]: Duplicate value: \"a\""}},
		{"list-type map", g, edit(gad, "spec.ports", []any{
			map[string]any{"name": "http", "protocol": "TCP", "port": int64(1)},
			map[string]any{"name": "http", "protocol": "TCP", "port": int64(2)},
		}), []string{"spec.ports[1]: Duplicate value"}},
		{"minItems", g, edit(gad, "spec.ports", []any{map[string]any{"name": "http", "protocol": "TCP", "port": int64(1)}}), []string{"spec.ports", "should have at least 2 items"}},
		{"minProperties", g, edit(gad, "spec.selector", map[string]any{"a": "x"}), []string{"spec.selector", "should have at least 2 properties"}},
		{"maxProperties", g, edit(gad, "spec.settings", map[string]any{"a": "", "b": "", "c": "", "d": "", "e": ""}), []string{"spec.settings: Too many: 5: must have at most 4 items"}},
		{"map value", g, edit(gad, "spec.limits", map[string]any{"cpu": int64(-1)}), []string{"spec.limits.cpu", "greater than or equal to 0"}},
		{"embedded kind", g, edit(gad, "spec.template", map[string]any{"apiVersion": "v1"}), []string{"spec.template.kind: Required value"}},
		{"embedded metadata", g, edit(gad, "spec.template", map[string]any{"apiVersion": "v1", "kind": "X", "metadata": map[string]any{"name": "a/b"}}), []string{"spec.template.metadata.name", "a/b"}},
		{"embedded unknown field", g, edit(gad, "spec.podTemplate", map[string]any{"apiVersion": "v1", "kind": "X", "spec": map[string]any{}, "extra": int64(1)}), []string{"spec.podTemplate.extra: Forbidden: unknown field"}},
		{"CEL rule", g, edit(gad, "spec.window", map[string]any{"min": int64(5), "max": int64(4)}), []string{"spec.window: Invalid value", "min must not exceed max"}},
		{"oneOf", g, edit(gad, "spec.choice", map[string]any{"left": "l", "right": int64(1)}), []string{"spec.choice", "oneOf"}},
		{"root metadata schema", g, edit(gad, "metadata.name", strings.Repeat("a", 41)), []string{"metadata.name: Too long"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Validate(c.vs.s, c.obj)
			if err == nil {
				t.Fatalf("accepted:\n%s", dump(c.obj))
			}
			t.Log(err)
			for _, w := range c.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestValidateDoesNotModify: Validate prunes and coerces copies only.
func TestValidateDoesNotModify(t *testing.T) {
	ws := website(t)
	obj := map[string]any{
		"apiVersion": "demo.orkestra.io/v1",
		"kind":       "Website",
		"metadata":   map[string]any{"name": "site", "unknown": "x"},
		"spec":       map[string]any{"image": "nginx", "colour": "red"},
	}
	before := dump(obj)
	if err := Validate(ws.s, obj); err == nil {
		t.Fatal("accepted unknown fields")
	}
	if after := dump(obj); after != before {
		t.Fatalf("Validate modified its argument:\n%s\n%s", before, after)
	}
}

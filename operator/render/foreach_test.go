package render

import (
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// varRef reads a variable of the scope (each, index, value, an alias).
func varRef(name, path string) *engine.Node {
	return engine.NewExpr("", &fakeExpr{src: "${" + name + "}", f: nil, scoped: func(s *engine.Scope) (any, error) {
		v := s.Vars[name]
		if path != "" {
			m, _ := v.(map[string]any)
			v = m[path]
		}
		return v, nil
	}})
}

// One child per item of a list (in order) or entry of a map (by key), each
// labelled with its declaration; the item is the CEL variables each/index/
// value and the legacy roots .item/.index/.value. Upstream:
// pkg/runtime/reconciler/docs/05-foreach.md.
func TestForEachExpands(t *testing.T) {
	e := entry(
		decl{kind: "configMaps", fields: map[string]any{
			"name": varRef("each", "name"),
			"data": map[string]any{"index": varRef("index", ""), "legacy": ref("item.name")},
		}},
		decl{kind: "secrets", fields: map[string]any{
			"name": varRef("each", ""),
			"data": map[string]any{"size": varRef("value", "size"), "alias": varRef("shard", "")},
		}},
	)
	e.Hooks[katalog.OnReconcile][0].ForEach = &engine.ForEach{Field: "spec.regions", Iterators: []*engine.Iterator{{Field: "spec.regions", Path: []string{"spec", "regions"}}}, Limit: 3}
	e.Hooks[katalog.OnReconcile][1].ForEach = &engine.ForEach{Field: "spec.shards", Iterators: []*engine.Iterator{{Field: "spec.shards", Path: []string{"spec", "shards"}, Map: true, As: "shard"}}, Limit: 10}
	res := renderOne(t, e, widget(map[string]any{
		"regions": []any{map[string]any{"name": "eu"}, map[string]any{"name": "us"}},
		"shards":  map[string]any{"b": map[string]any{"size": "2"}, "a": map[string]any{"size": "1"}},
	}))
	var got []string
	for _, c := range res.Hooks[katalog.OnReconcile] {
		got = append(got, c.Name+" "+c.Item+" "+c.Object.GetLabels()[LabelDeclaration]+" "+strings.Join(sortedValues(c.Fields["data"]), ","))
	}
	want := []string{
		"eu item 0 onReconcile.configMaps.0 0,eu",
		"us item 1 onReconcile.configMaps.0 1,us",
		"a entry a onReconcile.secrets.0 a,1",
		"b entry b onReconcile.secrets.0 b,2",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("children:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// More items than the declaration may make: an error naming the bound.
	_, err := Render(e, widget(map[string]any{"regions": []any{"a", "b", "c", "d"}}))
	if err == nil || !strings.Contains(err.Error(), "operatorBox.onReconcile.configMaps[0].forEach: spec.regions has 4 items; one forEach declaration makes at most 3 children (bound spec.regions with maxItems (or maxProperties) in the CRD, or raise --max-foreach)") {
		t.Errorf("err = %v", err)
	}
}

func sortedValues(v any) []string {
	m, _ := v.(map[string]any)
	var out []string
	for _, k := range sortedKeys(m) {
		out = append(out, describeScalar(m[k]))
	}
	return out
}

func describeScalar(v any) string {
	s, ok := scalarString(v)
	if !ok {
		return "?"
	}
	return s
}

package render

import (
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// Several iterators make one child per combination, the first the outer
// loop (kro's order); an empty iterator makes none, and more combinations
// than the limit fail before any is made.
func TestForEachProductExpands(t *testing.T) {
	e := entry(decl{kind: "configMaps", fields: map[string]any{
		"name": engine.NewExpr("", &fakeExpr{src: "${region}-${tier}", scoped: func(s *engine.Scope) (any, error) {
			return s.Vars["region"].(string) + "-" + s.Vars["tier"].(string), nil
		}}),
		"data": map[string]any{"index": varRef("index", ""), "legacy": ref("tier")},
	}})
	e.Hooks[katalog.OnReconcile][0].ForEach = &engine.ForEach{Field: "spec.regions × spec.tiers", Limit: 4, Iterators: []*engine.Iterator{
		{Field: "spec.regions", Path: []string{"spec", "regions"}, As: "region"},
		{Field: "spec.tiers", Path: []string{"spec", "tiers"}, As: "tier"},
	}}
	res := renderOne(t, e, widget(map[string]any{"regions": []any{"eu", "us"}, "tiers": []any{"web", "api"}}))
	var got []string
	for _, c := range res.Hooks[katalog.OnReconcile] {
		got = append(got, c.Name+" | "+c.Item+" | "+strings.Join(sortedValues(c.Fields["data"]), ","))
	}
	want := []string{
		"eu-web | region item 0 × tier item 0 | 0,web",
		"eu-api | region item 0 × tier item 1 | 1,api",
		"us-web | region item 1 × tier item 0 | 2,web",
		"us-api | region item 1 × tier item 1 | 3,api",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("children:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	res = renderOne(t, e, widget(map[string]any{"regions": []any{"eu", "us"}, "tiers": []any{}}))
	if n := len(res.Hooks[katalog.OnReconcile]); n != 0 {
		t.Errorf("an empty iterator made %d children, want none", n)
	}

	_, err := Render(e, widget(map[string]any{"regions": []any{"eu", "us", "ap"}, "tiers": []any{"web", "api"}}))
	if err == nil || !strings.Contains(err.Error(), "operatorBox.onReconcile.configMaps[0].forEach: spec.regions × spec.tiers has 6 combinations; one forEach declaration makes at most 4 children (bound spec.regions × spec.tiers with maxItems (or maxProperties) in the CRD, or raise --max-foreach)") {
		t.Errorf("err = %v", err)
	}
}

package gotmpl

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/engine"
)

// Issue 18: for templates in the documented subset, our render and the
// upstream rules, written down independently here, agree on generated
// objects. The subset: a field chain, optionally piped through default,
// toLower, toUpper or trimSpace, in a status field without type: over an
// untyped object (upstream runs without a CRD). The rules, from the
// upstream resolver (iAlexeze/orkestra pkg/resources/template/resolver.go
// and resolver_status.go) and function library:
//   - a missing or non-map parent fails the evaluation (issue 18 item 1);
//   - a missing or null last field prints as "" (text/template's
//     "<no value>", removed) — upstream writes "", ours leaves a plain
//     reference unset (documented difference), compared as "";
//   - values print with %v; the output is trimmed; status fields without
//     type are strings (item 2);
//   - default takes the fallback for a missing, null, "", 0, false value;
//   - toLower, toUpper and trimSpace take a string, and fail on anything
//     else (text/template cannot pass it).
func TestUpstreamRulesProperty(t *testing.T) {
	untyped := &structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Extensions: structuralschema.Extensions{XPreserveUnknownFields: true}}
	ctx := &engine.Context{Entry: "things", Field: "operatorBox.status.fields[0].value", Pos: testPos, Self: untyped, SelfVersion: "v1", Coerce: engine.CoerceString}
	r := rand.New(rand.NewPCG(18, 18))
	paths := [][]string{{"spec", "a"}, {"spec", "b"}, {"spec", "c", "d"}, {"spec", "c", "e"}, {"status", "x"}}
	pipes := []string{"", "default \"fb\"", "toLower", "toUpper", "trimSpace"}
	b := New(nil)
	compiled := map[string]*Template{}
	checked := 0
	for i := 0; i < 3000; i++ {
		path := paths[r.IntN(len(paths))]
		pipe := pipes[r.IntN(len(pipes))]
		src := "{{ ." + strings.Join(path, ".") + " }}"
		if pipe != "" {
			src = "{{ ." + strings.Join(path, ".") + " | " + pipe + " }}"
		}
		tm, ok := compiled[src]
		if !ok {
			e, diags := b.CompileValue(src, ctx)
			if diags.HasErrors() {
				t.Fatalf("%s does not compile: %v", src, diags)
			}
			tm = e.(*Template)
			compiled[src] = tm
		}
		obj := randomObject(r)
		want, wantErr := upstreamRule(obj, path, pipe)
		got, err := tm.Eval(engine.NewScope(obj))
		if errors.Is(err, engine.ErrAbsent) {
			got, err = "", nil // the documented plain-reference difference
		}
		switch {
		case wantErr != nil || err != nil:
			if (wantErr == nil) != (err == nil) {
				t.Fatalf("%s on %v: upstream %q, %v; ours %v, %v", src, obj, want, wantErr, got, err)
			}
		case got != want:
			t.Fatalf("%s on %v: upstream %q; ours %#v", src, obj, want, got)
		}
		checked++
	}
	if checked != 3000 {
		t.Fatalf("checked %d", checked)
	}
}

// upstreamRule evaluates the subset by the rules above.
func upstreamRule(obj map[string]any, path []string, pipe string) (string, error) {
	var cur any = obj
	for i, seg := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			if i == 0 || cur == nil {
				return "", fmt.Errorf("nil pointer evaluating interface {}.%s", seg)
			}
			return "", fmt.Errorf("can't evaluate field %s", seg)
		}
		cur = m[seg]
	}
	switch pipe {
	case "":
	case "default \"fb\"":
		switch x := cur.(type) {
		case nil:
			cur = "fb"
		case string:
			if x == "" {
				cur = "fb"
			}
		case int64:
			if x == 0 {
				cur = "fb"
			}
		case float64:
			if x == 0 {
				cur = "fb"
			}
		case bool:
			if !x {
				cur = "fb"
			}
		}
	default:
		s, ok := cur.(string)
		if !ok {
			return "", fmt.Errorf("%s takes a string, got %T", pipe, cur)
		}
		cur = map[string]func(string) string{"toLower": strings.ToLower, "toUpper": strings.ToUpper, "trimSpace": strings.TrimSpace}[pipe](s)
	}
	if cur == nil {
		return "", nil
	}
	return strings.TrimSpace(fmt.Sprint(cur)), nil
}

// randomObject makes spec and status with each field absent, null, a
// string (padded, empty, mixed case), an integer, a float, a boolean, or a
// map, and spec.c sometimes a scalar.
func randomObject(r *rand.Rand) map[string]any {
	scalar := func() (any, bool) {
		switch r.IntN(9) {
		case 0:
			return nil, false // absent
		case 1:
			return nil, true // null
		case 2:
			return " MiXed ", true
		case 3:
			return "", true
		case 4:
			return int64(r.IntN(3)), true
		case 5:
			return []float64{0, 2.5, 1e6}[r.IntN(3)], true
		case 6:
			return r.IntN(2) == 0, true
		case 7:
			return "plain", true
		}
		return map[string]any{"k": "v"}, true
	}
	fill := func(keys ...string) map[string]any {
		m := map[string]any{}
		for _, k := range keys {
			if v, ok := scalar(); ok {
				m[k] = v
			}
		}
		return m
	}
	obj := map[string]any{}
	if r.IntN(8) != 0 {
		spec := fill("a", "b")
		switch r.IntN(4) {
		case 0:
		case 1:
			spec["c"] = "scalar"
		default:
			spec["c"] = fill("d", "e")
		}
		obj["spec"] = spec
	}
	if r.IntN(3) != 0 {
		obj["status"] = fill("x")
	}
	return obj
}

package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// Hand-built plans: a fake expression language whose expressions are
// functions of the CR, so that the builders are tested without a backend.

type fakeExpr struct {
	src string
	f   func(self map[string]any) (any, error)
	// scoped, when set, reads the whole scope (variables besides self).
	scoped func(s *engine.Scope) (any, error)
}

func (e *fakeExpr) Eval(s *engine.Scope) (any, error) {
	if e.scoped != nil {
		return e.scoped(s)
	}
	return e.f(s.Self)
}
func (e *fakeExpr) Source() string   { return e.src }
func (e *fakeExpr) Pos() katalog.Pos { return katalog.Pos{File: "test.yaml", Line: 1, Col: 1} }
func (e *fakeExpr) Engine() string   { return "fake" }

type fakeCond struct {
	src string
	f   func(self map[string]any) (bool, error)
}

func (c *fakeCond) Eval(s *engine.Scope) (bool, error) { return c.f(s.Self) }
func (c *fakeCond) Source() string                     { return c.src }
func (c *fakeCond) Pos() katalog.Pos                   { return katalog.Pos{File: "test.yaml", Line: 1, Col: 1} }

// lookup follows a dot path in obj; ok is false when a segment is absent.
func lookup(obj map[string]any, path string) (any, bool) {
	var cur any = obj
	for _, seg := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[seg]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// ref is `${self.<path>}`: absent fields are engine.ErrAbsent.
func ref(path string) *engine.Node {
	return engine.NewExpr("", &fakeExpr{src: "${self." + path + "}", f: func(self map[string]any) (any, error) {
		v, ok := lookup(self, path)
		if !ok {
			return nil, engine.ErrAbsent
		}
		return v, nil
	}})
}

// tmpl is a string interpolation: %s are replaced by the paths' values.
func tmpl(format string, paths ...string) *engine.Node {
	return engine.NewExpr("", &fakeExpr{src: format, f: func(self map[string]any) (any, error) {
		args := make([]any, len(paths))
		for i, p := range paths {
			v, _ := lookup(self, p)
			args[i] = v
		}
		return fmt.Sprintf(format, args...), nil
	}})
}

// failing is an expression whose evaluation fails.
func failing(msg string) *engine.Node {
	return engine.NewExpr("", &fakeExpr{src: "${boom}", f: func(map[string]any) (any, error) { return nil, errors.New(msg) }})
}

func cond(path string, want any) engine.Condition {
	return &fakeCond{src: fmt.Sprintf("self.%s == %v", path, want), f: func(self map[string]any) (bool, error) {
		v, _ := lookup(self, path)
		return reflect.DeepEqual(v, want), nil
	}}
}

// lit turns plain Go data into literal nodes.
func lit(v any) *engine.Node {
	switch x := v.(type) {
	case *engine.Node:
		return x
	case map[string]any:
		var fields []engine.NodeField
		for _, k := range sortedKeys(x) {
			fields = append(fields, engine.NodeField{Key: k, Value: lit(x[k])})
		}
		return engine.NewMap("", katalog.Pos{}, fields)
	case []any:
		items := make([]*engine.Node, len(x))
		for i, item := range x {
			items[i] = lit(item)
		}
		return engine.NewList("", katalog.Pos{}, items)
	case int:
		return engine.NewLiteral("", katalog.Pos{}, int64(x))
	}
	return engine.NewLiteral("", katalog.Pos{}, v)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if keys[j] < keys[i] {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	return keys
}

// decl is one declared child for a test plan.
type decl struct {
	hook      string
	kind      string
	fields    map[string]any // values: plain data or *engine.Node
	when      engine.Condition
	reconcile bool
	once      bool
	rotate    time.Duration
}

// entry builds an engine.Entry from declarations, with the field paths the
// compiler would give them.
func entry(decls ...decl) *engine.Entry {
	e := &engine.Entry{
		Name:       "widget",
		GVK:        schema.GroupVersionKind{Group: "test.orkestra.io", Version: "v1", Kind: "Widget"},
		Namespaced: true,
		Enabled:    true,
		Reconciles: true,
		Hooks:      map[string][]*engine.Resource{},
		HasBox:     true,
	}
	counts := map[string]int{}
	for _, d := range decls {
		hook := d.hook
		if hook == "" {
			hook = katalog.OnReconcile
		}
		kind := katalog.ResourceKinds[d.kind]
		idx := counts[hook+d.kind]
		counts[hook+d.kind]++
		base := fmt.Sprintf("operatorBox.%s.%s[%d]", hook, d.kind, idx)
		fields := map[string]any{}
		for k, v := range d.fields {
			fields[k] = v
		}
		if _, ok := fields["name"]; !ok {
			fields["name"] = tmpl("%s-"+kind.NameSuffix, "metadata.name")
		}
		node := lit(fields)
		setFieldPaths(node, base)
		src := &katalog.Resource{Kind: d.kind, Hook: hook, Index: idx}
		if d.reconcile {
			src.Reconcile = &katalog.Switch{Value: true}
		}
		e.Hooks[hook] = append(e.Hooks[hook], &engine.Resource{
			Source:      src,
			Kind:        kind,
			Hook:        hook,
			Fields:      node,
			When:        d.when,
			Modes:       (&katalog.OperatorBox{}).ModesOf(src),
			Once:        d.once,
			RotateAfter: d.rotate,
		})
	}
	return e
}

// widget is a custom resource.
func widget(spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "test.orkestra.io/v1",
		"kind":       "Widget",
		"metadata": map[string]any{
			"name":      "shop",
			"namespace": "prod",
			"uid":       "0a1b2c3d-0000-4000-8000-000000000001",
		},
		"spec": spec,
	}}
}

// ownerRefYAML is the owner reference every child of widget() carries.
const ownerRefYAML = `
  ownerReferences:
    - apiVersion: test.orkestra.io/v1
      kind: Widget
      name: shop
      uid: 0a1b2c3d-0000-4000-8000-000000000001
      controller: true
      blockOwnerDeletion: true`

// normalize turns objects into comparable JSON data.
func normalize(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// assertObject compares a rendered object with a hand-written manifest.
func assertObject(t *testing.T, got *unstructured.Unstructured, wantYAML string) {
	t.Helper()
	var want map[string]any
	if err := yaml.Unmarshal([]byte(wantYAML), &want); err != nil {
		t.Fatalf("bad expected YAML: %v\n%s", err, wantYAML)
	}
	if got == nil {
		t.Fatalf("no object rendered; want\n%s", wantYAML)
	}
	g, w := normalize(t, got.Object), normalize(t, want)
	if !reflect.DeepEqual(g, w) {
		gy, _ := yaml.Marshal(g)
		wy, _ := yaml.Marshal(w)
		t.Fatalf("rendered object differs\n%s", lineDiff(string(wy), string(gy)))
	}
}

func renderOne(t *testing.T, e *engine.Entry, cr *unstructured.Unstructured) *Result {
	t.Helper()
	res, err := Render(e, cr)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return res
}

func child(t *testing.T, res *Result, hook, name string) *Child {
	t.Helper()
	for _, c := range res.Hooks[hook] {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no child %q in %s", name, hook)
	return nil
}

// sf is a status field at path.
func sf(path string, v *engine.Node, when engine.Condition) *engine.StatusField {
	v.Field = "operatorBox.status.fields[" + path + "].value"
	return &engine.StatusField{Path: strings.Split(path, "."), Value: v, When: when}
}

// lineDiff shows the lines only in want (-) or only in got (+).
func lineDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	count := map[string]int{}
	for _, l := range gl {
		count[l]++
	}
	var b strings.Builder
	for _, l := range wl {
		if count[l] > 0 {
			count[l]--
			continue
		}
		b.WriteString("- " + l + "\n")
	}
	wc := map[string]int{}
	for _, l := range wl {
		wc[l]++
	}
	for _, l := range gl {
		if wc[l] > 0 {
			wc[l]--
			continue
		}
		b.WriteString("+ " + l + "\n")
	}
	return b.String() + "--- got\n" + got
}

// setFieldPaths gives every node its field path, as the compiler does.
func setFieldPaths(n *engine.Node, path string) {
	n.Field = path
	for _, f := range n.Fields {
		setFieldPaths(f.Value, path+"."+f.Key)
	}
	for i, item := range n.Items {
		setFieldPaths(item, fmt.Sprintf("%s[%d]", path, i))
	}
}

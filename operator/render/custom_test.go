package render

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/katalog"
)

// A custom child as the loader decodes upstream's form (identity lifted out
// of metadata:, labels normalised to a map; hasStatus and metadata.namespaced
// kept out of the fields): the object carries no control key, and status is
// set aside for the status subresource. Upstream: pkg/types/custom_resource.go.
func TestCustomUpstreamFormBuildsTheObjectWithoutControlKeys(t *testing.T) {
	e := entry(decl{kind: "custom", fields: map[string]any{
		"apiVersion": "example.io/v1", "kind": "Cache",
		"name":      tmpl("%s-cache", "metadata.name"),
		"namespace": ref("metadata.namespace"),
		"metadata":  map[string]any{"labels": map[string]any{"tier": ref("spec.tier")}},
		"spec":      map[string]any{"size": 3},
		"status":    map[string]any{"phase": "Pending"},
	}})
	yes := true
	e.Hooks[katalog.OnReconcile][0].Source.Namespaced = &yes
	res := renderOne(t, e, widget(map[string]any{"tier": "gold"}))
	c := child(t, res, katalog.OnReconcile, "shop-cache")
	assertObject(t, c.Object, `
apiVersion: example.io/v1
kind: Cache
metadata:
  name: shop-cache
  namespace: prod
  labels: {tier: gold, orkestra-owner: shop, orkestra.orkspace.io/managed: "true"}`+ownerRefYAML+`
spec: {size: 3}
`)
	if c.Status["phase"] != "Pending" {
		t.Errorf("status = %v", c.Status)
	}
	no := false
	e.Hooks[katalog.OnReconcile][0].Source.HasStatus = &no
	if c := child(t, renderOne(t, e, widget(map[string]any{"tier": "gold"})), katalog.OnReconcile, "shop-cache"); c.Status != nil {
		t.Errorf("hasStatus: false still writes status %v", c.Status)
	}
}

func TestCustomDeclaredScopeMustMatchTheAPIServer(t *testing.T) {
	e := entry(decl{kind: "custom", fields: map[string]any{"apiVersion": "example.io/v1", "kind": "Cache"}})
	no := false
	src := e.Hooks[katalog.OnReconcile][0].Source
	src.Namespaced, src.NamespacedPos = &no, katalog.Pos{File: "k.yaml", Line: 9, Col: 21}
	// Offline: the declared scope decides.
	if c := child(t, renderOne(t, e, widget(nil)), katalog.OnReconcile, "shop-custom"); c.Namespace != "" {
		t.Errorf("a child declared cluster-scoped got namespace %q", c.Namespace)
	}
	_, err := RenderWith(e, widget(nil), Options{IsNamespaced: func(schema.GroupVersionKind) (bool, error) { return true, nil }})
	want := "rendering Widget prod/shop: operatorBox.onReconcile.custom[0]: metadata.namespaced says Cache is cluster-scoped, but the API server serves it namespaced; correct or remove metadata.namespaced (at k.yaml:9:21)"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

// Two declarations whose conditions both hold and that name one object: a
// reconcile error (the provable cases are load errors, see engine).
func TestTwoPassingDeclarationsOfOneObjectFail(t *testing.T) {
	e := entry(
		decl{kind: "custom", fields: map[string]any{"apiVersion": "example.io/v1", "kind": "Cache", "name": ref("spec.a")}},
		decl{kind: "custom", fields: map[string]any{"apiVersion": "example.io/v1", "kind": "Cache", "name": ref("spec.b")}},
		// Same name, another kind: another object.
		decl{kind: "custom", fields: map[string]any{"apiVersion": "example.io/v1", "kind": "Index", "name": ref("spec.a")}},
	)
	if _, err := Render(e, widget(map[string]any{"a": "x", "b": "y"})); err != nil {
		t.Fatalf("distinct names: %v", err)
	}
	_, err := Render(e, widget(map[string]any{"a": "x", "b": "x"}))
	want := "rendering Widget prod/shop: operatorBox.onReconcile.custom[1]: names the same object, Cache prod/x, as operatorBox.onReconcile.custom[0], and both conditions hold: one would overwrite the other; give each its own name, or make their conditions exclusive"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

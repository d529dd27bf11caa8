package objgen

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func replicasAbove10(obj map[string]any) bool {
	r, ok := lookup(obj, "spec", "replicas")
	n, isInt := r.(int64)
	return ok && isInt && n > 10
}

// TestShrinkReplicas: "spec.replicas > 10" shrinks every failing website to
// exactly the required image (emptied), replicas 11 and the object's identity.
func TestShrinkReplicas(t *testing.T) {
	ws := website(t)
	shrunk := 0
	for i, obj := range Generate(ws.s, ws.gvk, 200, Options{Seed: 5, OptionalProbability: 1}) {
		if !replicasAbove10(obj) {
			continue
		}
		before := dump(obj)
		got := Shrink(ws.s, obj, replicasAbove10)
		if dump(obj) != before {
			t.Fatalf("object %d: Shrink modified its argument", i)
		}
		name, _ := lookup(obj, "metadata", "name")
		want := map[string]any{
			"apiVersion": "demo.orkestra.io/v1",
			"kind":       "Website",
			"metadata":   map[string]any{"name": name, "namespace": "default"},
			"spec":       map[string]any{"image": "", "replicas": int64(11)},
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("object %d shrank to\n%s\nwant\n%s\nfrom\n%s", i, dump(got), dump(want), before)
		}
		if err := Validate(ws.s, got); err != nil {
			t.Fatalf("object %d: the shrunk object is invalid: %v", i, err)
		}
		shrunk++
	}
	if shrunk < 10 {
		t.Fatalf("only %d of 200 objects had replicas > 10", shrunk)
	}
}

// TestShrinkGadget: on the keyword-rich schema, shrinking keeps validity and
// reaches the minimum each keyword allows.
func TestShrinkGadget(t *testing.T) {
	g := gadget(t)
	// fails when spec.step > 12 and there are at least three ports
	prop := func(obj map[string]any) bool {
		step, _ := lookup(obj, "spec", "step")
		ports, _ := lookup(obj, "spec", "ports")
		n, _ := step.(int64)
		l, _ := ports.([]any)
		return n > 12 && len(l) >= 3
	}
	found := 0
	for i, obj := range Generate(g.s, g.gvk, 300, Options{Seed: 11, OptionalProbability: 1, MaxItems: 5}) {
		if !prop(obj) {
			continue
		}
		if found++; found > 4 {
			break // shrinking validates every candidate: keep the test quick
		}
		got := Shrink(g.s, obj, prop)
		if err := Validate(g.s, got); err != nil {
			t.Fatalf("object %d: shrunk object invalid: %v\n%s", i, err, dump(got))
		}
		spec := got["spec"].(map[string]any)
		keys := sortedKeys(spec)
		if want := []string{"mode", "name", "ports", "replicas", "step", "window"}; !slices.Equal(keys, want) {
			t.Fatalf("object %d: spec keeps %v, want %v:\n%s", i, keys, want, dump(got))
		}
		origName := obj["spec"].(map[string]any)["name"].(string)
		wantSpec := map[string]any{
			"mode":     "fast",       // first enum value
			"name":     origName[:3], // minLength 3
			"replicas": int64(1),     // minimum 1
			"step":     int64(15),    // smallest multiple of 5 above 12
			"window":   map[string]any{"min": int64(0), "max": int64(0)},
		}
		for k, v := range wantSpec {
			if !reflect.DeepEqual(spec[k], v) {
				t.Errorf("object %d: spec.%s = %#v, want %#v", i, k, spec[k], v)
			}
		}
		ports := spec["ports"].([]any)
		if len(ports) != 3 {
			t.Fatalf("object %d: %d ports, want 3", i, len(ports))
		}
		for _, p := range ports {
			// protocol, a list-map key with a default, goes too, unless
			// it keeps two items with the same name apart (then it is UDP:
			// TCP is the default)
			pm := p.(map[string]any)
			if pm["port"] != int64(1) || (len(pm) != 2 && pm["protocol"] != "UDP") {
				t.Errorf("object %d: port %v not minimal (name and port 1)\n%s", i, pm, dump(ports))
			}
		}
		if _, ok := lookup(got, "metadata", "labels"); ok {
			t.Errorf("object %d: labels survived", i)
		}
		if _, ok := got["status"]; ok {
			t.Errorf("object %d: status survived", i)
		}
	}
	if found == 0 {
		t.Fatal("no generated gadget has the property")
	}
}

// TestShrinkStringAndList: strings shrink to the shortest failing prefix,
// lists to the fewest failing items, and map entries go.
func TestShrinkStringAndList(t *testing.T) {
	s := schemaFromYAML(t, `
type: object
properties:
  spec:
    type: object
    properties:
      text:
        type: string
      items:
        type: array
        items:
          type: integer
      labels:
        type: object
        additionalProperties:
          type: string
      raw:
        x-kubernetes-preserve-unknown-fields: true
`)
	obj := map[string]any{
		"apiVersion": "x.io/v1", "kind": "X", "metadata": map[string]any{"name": "x", "labels": map[string]any{"a": "b"}},
		"spec": map[string]any{
			"text":   "hello, wonderful world",
			"items":  []any{int64(5), int64(50), int64(7), int64(99), int64(3)},
			"labels": map[string]any{"k1": "v1", "k2": "v2"},
			"raw":    map[string]any{"deep": map[string]any{"list": []any{true, "s", 3.5}}},
		},
	}
	fails := func(o map[string]any) bool {
		text, _ := lookup(o, "spec", "text")
		items, _ := lookup(o, "spec", "items")
		l, _ := items.([]any)
		big := 0
		for _, e := range l {
			if n, _ := e.(int64); n >= 40 {
				big++
			}
		}
		str, _ := text.(string)
		return strings.Contains(str, ",") && big >= 2
	}
	got := Shrink(s, obj, fails)
	want := map[string]any{
		"apiVersion": "x.io/v1", "kind": "X", "metadata": map[string]any{"name": "x"},
		"spec": map[string]any{
			"text":  "hello,",
			"items": []any{int64(40), int64(40)},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("shrank to\n%s\nwant\n%s", dump(got), dump(want))
	}
}

// TestShrinkInvalidStart: an object that is already invalid still shrinks
// (validity is not required then).
func TestShrinkInvalidStart(t *testing.T) {
	ws := website(t)
	obj := map[string]any{
		"apiVersion": "demo.orkestra.io/v1", "kind": "Website", "metadata": map[string]any{"name": "w"},
		"spec": map[string]any{"image": "nginx", "replicas": int64(500), "tier": "gold"},
	}
	got := Shrink(ws.s, obj, replicasAbove10)
	want := map[string]any{
		"apiVersion": "demo.orkestra.io/v1", "kind": "Website", "metadata": map[string]any{"name": "w"},
		"spec": map[string]any{"image": "", "replicas": int64(11)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("shrank to\n%s\nwant\n%s", dump(got), dump(want))
	}
}

// TestShrinkNotFailing returns a copy unchanged.
func TestShrinkNotFailing(t *testing.T) {
	ws := website(t)
	obj := Generate(ws.s, ws.gvk, 1, Options{})[0]
	got := Shrink(ws.s, obj, func(map[string]any) bool { return false })
	if !reflect.DeepEqual(got, obj) {
		t.Fatal("Shrink changed an object that does not fail")
	}
	got["kind"] = "changed"
	if obj["kind"] == "changed" {
		t.Fatal("Shrink returned its argument, not a copy")
	}
}

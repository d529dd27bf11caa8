package conversion_test

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/conversion"
	"github.com/orkspace/orkestra-cel/objgen"
)

// Katalogs whose paths default (orValue), remap (enum maps, renames, moves
// between spec and metadata), change case, and whose routes disagree
// (threeway: v1alpha1→v1 writes mode, v1beta1→v1 does not).
var propertyKatalogs = []string{
	computed,
	"testdata/annotation/katalog.yaml",
	"testdata/threeway/katalog.yaml",
	"../../conformance/testdata/retention/katalog.yaml",
	"../../conformance/testdata/lossy/katalog.yaml",
	website,
}

// generated returns settled objects of every served version of the plan's
// conversions, as the API server would hold them.
func generated(t *testing.T, plan *engine.Plan, n int) map[string][]*unstructured.Unstructured {
	t.Helper()
	out := map[string][]*unstructured.Unstructured{}
	for gk, conv := range plan.Conversions {
		for i, v := range conv.Versions {
			gvk := schema.GroupVersionKind{Group: gk.Group, Version: v, Kind: gk.Kind}
			for _, o := range objgen.Generate(conv.Schemas[v], gvk, n, objgen.Options{Seed: int64(7 + i)}) {
				defaulting.Default(o, conv.Schemas[v])
				out[v] = append(out[v], &unstructured.Unstructured{Object: o})
			}
		}
	}
	return out
}

// emptyMetadataMap names an empty labels or annotations map, or "".
func emptyMetadataMap(u *unstructured.Unstructured) string {
	meta, _ := u.Object["metadata"].(map[string]any)
	for _, k := range []string{"labels", "annotations"} {
		if m, ok := meta[k].(map[string]any); ok && len(m) == 0 {
			return k
		}
	}
	return ""
}

// Any sequence of conversions that returns to the starting version gives
// the object back exactly: no difference, no stash, no empty labels or
// annotations map — and no step leaves an empty map either.
func TestConversionSequencesComeBackExactly(t *testing.T) {
	for _, path := range propertyKatalogs {
		plan := compile(t, path)
		c := conversion.New(plan, conversion.Options{})
		rng := rand.New(rand.NewSource(1))
		for gk, conv := range plan.Conversions {
			for start, objs := range generated(t, plan, 60) {
				for i, in := range objs {
					orig := in.DeepCopy()
					cur, trail := in, start
					for hop, hops := 0, 1+rng.Intn(4); hop <= hops; hop++ {
						next := conv.Versions[rng.Intn(len(conv.Versions))]
						if hop == hops {
							next = start
						}
						out, err := c.Convert(cur, gk.Group+"/"+next)
						if err != nil {
							t.Fatalf("%s object %d (%s): %s→%s: %v", path, i, start, trail, next, err)
						}
						trail += "→" + next
						if m := emptyMetadataMap(out); m != "" {
							t.Fatalf("%s object %d: %s leaves an empty %s map:\n%v", path, i, trail, m, out.Object)
						}
						cur = out
					}
					if !reflect.DeepEqual(cur.Object, orig.Object) {
						t.Fatalf("%s object %d: %s does not come back:\n got %v\nwant %v", path, i, trail, cur.Object, orig.Object)
					}
				}
			}
		}
	}
}

// An edit at the other version is always visible: every field of A that the
// path computes differently from the edited object takes the computed value,
// and the edited object survives the way back.
func TestEditsAtTheOtherVersionAreVisible(t *testing.T) {
	for _, path := range propertyKatalogs {
		plan := compile(t, path)
		c := conversion.New(plan, conversion.Options{})
		objs := generated(t, plan, 40)
		edits := 0
		for gk, conv := range plan.Conversions {
			gv := func(v string) string { return gk.Group + "/" + v }
			for _, a := range conv.Versions {
				for _, b := range conv.Versions {
					if a == b {
						continue
					}
					for i, in := range objs[a] {
						mid, err := c.Convert(in, gv(b))
						if err != nil {
							t.Fatal(err)
						}
						donor := objs[b][(i+1)%len(objs[b])]
						for key := range unionKeys(mid, donor) {
							edited := replaceSpecField(mid, donor, key)
							defaulting.Default(edited.Object, conv.Schemas[b])
							if objgen.Validate(conv.Schemas[b], withoutStash(edited.Object)) != nil {
								continue
							}
							edits++
							what := fmt.Sprintf("%s %s→%s, spec.%s edited at %s, →%s (object %d)", path, a, b, key, b, a, i)
							checkEditVisible(t, c, what, mid, edited, gv(a), gv(b))
						}
					}
				}
			}
		}
		if edits < 10 {
			t.Errorf("%s: %d edits tried, want at least 10", path, edits)
		}
	}
}

func checkEditVisible(t *testing.T, c *conversion.Converter, what string, mid, edited *unstructured.Unstructured, a, b string) {
	t.Helper()
	back, err := c.Convert(edited, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	plain := func(u *unstructured.Unstructured) map[string]any {
		out, err := c.Convert(&unstructured.Unstructured{Object: withoutStash(u.Object)}, a)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return withoutStash(out.Object)
	}
	before, after := plain(mid), plain(edited)
	got := withoutStash(back.Object)
	for _, top := range []string{"spec", "metadata"} {
		changed := differingLeaves(before[top], after[top], top)
		for p := range changed {
			if g, w := leaf(got, p), leaf(after, p); !reflect.DeepEqual(g, w) {
				t.Fatalf("%s: %s is %v, want %v (computed from the edit)", what, p, g, w)
			}
		}
	}
	again, err := c.Convert(back, b)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !reflect.DeepEqual(again.Object["spec"], edited.Object["spec"]) {
		t.Fatalf("%s: the edit is lost on the way back:\n got %v\nwant %v", what, again.Object["spec"], edited.Object["spec"])
	}
}

func unionKeys(a, b *unstructured.Unstructured) map[string]bool {
	out := map[string]bool{}
	for _, u := range []*unstructured.Unstructured{a, b} {
		spec, _ := u.Object["spec"].(map[string]any)
		for k := range spec {
			out[k] = true
		}
	}
	return out
}

func replaceSpecField(mid, donor *unstructured.Unstructured, key string) *unstructured.Unstructured {
	out := mid.DeepCopy()
	v, found, _ := unstructured.NestedFieldCopy(donor.Object, "spec", key)
	if found {
		_ = unstructured.SetNestedField(out.Object, v, "spec", key)
	} else {
		unstructured.RemoveNestedField(out.Object, "spec", key)
	}
	return out
}

// differingLeaves lists the paths (segments joined by "\x00") where a and
// b differ, down to scalars and lists.
func differingLeaves(a, b any, path string) map[string]bool {
	out := map[string]bool{}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		if !reflect.DeepEqual(a, b) {
			out[path] = true
		}
		return out
	}
	for k := range am {
		for p := range differingLeaves(am[k], bm[k], path+"\x00"+k) {
			out[p] = true
		}
	}
	for k := range bm {
		if _, ok := am[k]; !ok {
			out[path+"\x00"+k] = true
		}
	}
	return out
}

func leaf(obj map[string]any, path string) any {
	var cur any = obj
	start := 0
	for i := 0; i <= len(path); i++ {
		if i == len(path) || path[i] == '\x00' {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			cur = m[path[start:i]]
			start = i + 1
		}
	}
	return cur
}

// An absent spec reads as an empty object: `self.spec.?x` works on an
// object without spec, a path that computes something writes a spec, and
// one that writes only literals (or nothing) writes none.
func TestAbsentSpec(t *testing.T) {
	c := conversion.New(compile(t, "testdata/annotation/katalog.yaml"), conversion.Options{})
	metaOnly := obj(t, `{apiVersion: test.orkestra.io/v2, kind: Note, metadata: {name: n, namespace: d, annotations: {example.org/description: hello}}}`)
	v1 := convert(t, c, metaOnly, "v1")
	if d, _, _ := unstructured.NestedString(v1.Object, "spec", "description"); d != "hello" {
		t.Fatalf("spec = %v: the value restored from the annotation must land in a new spec", v1.Object["spec"])
	}
	if _, ok := v1.Object["metadata"].(map[string]any)["annotations"]; ok {
		t.Fatalf("annotations = %v: the moved annotation is removed and no empty map is left", v1.GetAnnotations())
	}
	if back := convert(t, c, v1, "v2"); !reflect.DeepEqual(back.Object, metaOnly.Object) {
		t.Fatalf("round trip:\n got %v\nwant %v", back.Object, metaOnly.Object)
	}
	noSpec := obj(t, `{apiVersion: test.orkestra.io/v1, kind: Note, metadata: {name: n, namespace: d}}`)
	v2 := convert(t, c, noSpec, "v2")
	if !reflect.DeepEqual(v2.Object["metadata"], noSpec.Object["metadata"]) || v2.Object["spec"] != nil {
		t.Fatalf("v2 = %v: nothing to write, no spec and no stash", v2.Object)
	}
	// Where the source schema requires fields in spec, an object without
	// spec converts without one: the paths rely on the required fields.
	tc := conversion.New(compile(t, "testdata/threeway/katalog.yaml"), conversion.Options{})
	bare := obj(t, `{apiVersion: test.orkestra.io/v1alpha1, kind: Gadget, metadata: {name: g, namespace: d}}`)
	out, err := tc.Convert(bare, "test.orkestra.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out.Object["spec"]; ok {
		t.Fatalf("spec = %v, want none", out.Object["spec"])
	}
}

package conversion_test

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/orkestra-cel/engine/conversion"
)

const computed = "testdata/computed/katalog.yaml"

func convert(t *testing.T, c *conversion.Converter, in *unstructured.Unstructured, version string) *unstructured.Unstructured {
	t.Helper()
	out, err := c.Convert(in, "test.orkestra.io/"+version)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func specOf(u *unstructured.Unstructured) map[string]any {
	s, _ := u.Object["spec"].(map[string]any)
	return s
}

// Without an edit in between, every computed field comes back exactly:
// case, a many-to-one enum, defaults of absent fields, a label that moved.
func TestComputedFieldsRoundTripExactly(t *testing.T) {
	c := conversion.New(compile(t, computed), conversion.Options{})
	for _, src := range []string{
		`{apiVersion: test.orkestra.io/v1, kind: Cache, metadata: {name: a, namespace: d}, spec: {name: Redis, size: huge, owner: ada}}`,
		`{apiVersion: test.orkestra.io/v1, kind: Cache, metadata: {name: b, namespace: d}, spec: {}}`,
		`{apiVersion: test.orkestra.io/v1, kind: Cache, metadata: {name: c, namespace: d, labels: {owner: other}}, spec: {name: X, ttlSeconds: 300}}`,
		`{apiVersion: test.orkestra.io/v1, kind: Cache, metadata: {name: e, namespace: d}}`,
	} {
		in := obj(t, src)
		mid := convert(t, c, in, "v2")
		back := convert(t, c, mid, "v1")
		if !reflect.DeepEqual(back.Object, in.Object) {
			t.Errorf("%s:\n via %v\n got %v", src, mid.Object, back.Object)
		}
	}
}

// The stash holds the original and what the way back read: the label it
// computes the owner from, the display name the name came from.
func TestStashRecordsWhatTheWayBackRead(t *testing.T) {
	c := conversion.New(compile(t, computed), conversion.Options{})
	mid := convert(t, c, obj(t, `{apiVersion: test.orkestra.io/v1, kind: Cache, metadata: {name: a, namespace: d}, spec: {name: Redis}}`), "v2")
	want := `{"v1":{"if":[{"at":["spec","name"],"read":[[["spec","displayName"],"redis"]]},` +
		`{"at":["spec","owner"],"read":[[["metadata","labels","owner"],"nobody"]]},` +
		`{"at":["spec","ttlSeconds"],"read":[[["spec","ttl"],300]]}],` +
		`"set":{"spec":{"name":"Redis"}},"unset":[["spec","owner"],["spec","ttlSeconds"]],"via":"v2"}}`
	if got := mid.GetAnnotations()[conversion.StashAnnotation]; got != want {
		t.Fatalf("stash:\n got %s\nwant %s", got, want)
	}
}

// An edit at the other version wins wherever the way back computes from
// the edited field; fields the edit does not touch are still restored.
func TestEditAtOtherVersionWins(t *testing.T) {
	c := conversion.New(compile(t, computed), conversion.Options{})
	in := obj(t, `{apiVersion: test.orkestra.io/v1, kind: Cache, metadata: {name: a, namespace: d}, spec: {name: Redis, size: huge}}`)
	mid := convert(t, c, in, "v2")
	for _, tc := range []struct {
		name string
		edit func(u *unstructured.Unstructured)
		want map[string]any
	}{
		{"display name", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "memcached", "spec", "displayName")
		},
			map[string]any{"name": "memcached", "size": "huge"}},
		{"tier", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, int64(1), "spec", "tier")
		},
			map[string]any{"name": "Redis", "size": "small"}},
		{"ttl set where the original had none", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, int64(60), "spec", "ttl")
		},
			map[string]any{"name": "Redis", "size": "huge", "ttlSeconds": int64(60)}},
		{"owner label", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"owner": "bob"}) },
			map[string]any{"name": "Redis", "size": "huge", "owner": "bob"}},
		{"display name removed", func(u *unstructured.Unstructured) { unstructured.RemoveNestedField(u.Object, "spec", "displayName") },
			map[string]any{"size": "huge"}},
	} {
		edited := mid.DeepCopy()
		tc.edit(edited)
		back := convert(t, c, edited, "v1")
		if !reflect.DeepEqual(specOf(back), tc.want) {
			t.Errorf("%s: spec = %v, want %v", tc.name, specOf(back), tc.want)
		}
		// The edit survives the way back to v2.
		again := convert(t, c, back, "v2")
		if !reflect.DeepEqual(specOf(again), specOf(edited)) || again.GetLabels()["owner"] != edited.GetLabels()["owner"] {
			t.Errorf("%s: v2 again = %v %v, want %v %v", tc.name, specOf(again), again.GetLabels(), specOf(edited), edited.GetLabels())
		}
	}
}

// An entry an edit overrode is gone: a later round trip does not bring the
// old original back.
func TestStaleEntryIsNotResurrected(t *testing.T) {
	c := conversion.New(compile(t, computed), conversion.Options{})
	mid := convert(t, c, obj(t, `{apiVersion: test.orkestra.io/v1, kind: Cache, metadata: {name: a, namespace: d}, spec: {name: Redis}}`), "v2")
	_ = unstructured.SetNestedField(mid.Object, "valkey", "spec", "displayName")
	back := convert(t, c, mid, "v1")
	if _, ok := back.GetAnnotations()[conversion.StashAnnotation]; ok {
		t.Fatalf("v1 needs no stash: %v", back.GetAnnotations())
	}
	// The client sets the name back to what v2 first showed: still its edit.
	_ = unstructured.SetNestedField(back.Object, "redis", "spec", "name")
	final := convert(t, c, convert(t, c, back, "v2"), "v1")
	if got, _, _ := unstructured.NestedString(final.Object, "spec", "name"); got != "redis" {
		t.Fatalf("name = %q: the stale original came back", got)
	}
}

// A metadata key mapped to null is removed; no path leaves an empty labels
// or annotations map on an object that had none.
func TestMetadataKeyMappedToNullIsRemoved(t *testing.T) {
	c := conversion.New(compile(t, computed), conversion.Options{})
	in := obj(t, `{apiVersion: test.orkestra.io/v2, kind: Cache, metadata: {name: a, namespace: d, labels: {owner: ada}}, spec: {displayName: x}}`)
	out := convert(t, c, in, "v1")
	if _, ok := out.Object["metadata"].(map[string]any)["labels"]; ok {
		t.Fatalf("labels = %v: the owner label moved into spec, and no empty map is left", out.GetLabels())
	}
	if owner, _, _ := unstructured.NestedString(out.Object, "spec", "owner"); owner != "ada" {
		t.Fatalf("spec.owner = %q", owner)
	}
	back := convert(t, c, out, "v2")
	if !reflect.DeepEqual(back.Object, in.Object) {
		t.Fatalf("round trip:\n got %v\nwant %v", back.Object, in.Object)
	}
}

// An invalid label value fails the conversion with the field, the
// expression and its position, instead of an object the API server rejects.
func TestInvalidLabelValueFails(t *testing.T) {
	c := conversion.New(compile(t, computed), conversion.Options{})
	in := obj(t, `{apiVersion: test.orkestra.io/v1, kind: Cache, metadata: {name: a, namespace: d}, spec: {owner: ""}}`)
	_ = unstructured.SetNestedField(in.Object, "not ok!", "spec", "owner")
	_, err := c.Convert(in, "test.orkestra.io/v2")
	if err == nil {
		t.Fatal("an invalid label value must fail")
	}
	for _, want := range []string{"Cache d/a", "from v1 to v2", "conversion.paths[0].metadata.labels.owner", "${self.spec.?owner.orValue('nobody')}", "katalog.yaml:23:25", `label "owner" is not valid`, `value "not ok!"`, "format.labelValue()"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// The stash is bounded; past the limit the error says which version cannot
// hold which field.
func TestStashLimitNamesVersionAndField(t *testing.T) {
	c := conversion.New(compile(t, computed), conversion.Options{MaxStashBytes: 64})
	in := obj(t, `{apiVersion: test.orkestra.io/v1, kind: Cache, metadata: {name: a, namespace: d}, spec: {name: ABCDEFGHIJKLMNOP, note: "0123456789abcdef"}}`)
	_, err := c.Convert(in, "test.orkestra.io/v2")
	if err == nil {
		t.Fatal("a stash over the limit must fail")
	}
	for _, want := range []string{"over the 64-byte limit", "v1 cannot hold spec.name (18 bytes), spec.note (18 bytes)", conversion.StashAnnotation} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

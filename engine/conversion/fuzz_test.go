package conversion_test

import (
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/engine/conversion"
)

// FuzzStash converts website objects carrying an arbitrary round-trip
// annotation both ways: the stash reader refuses what it cannot use with
// an error naming the annotation, and never panics; what converts keeps
// the object's identity and lands at the desired version.
func FuzzStash(f *testing.F) {
	for _, s := range []string{
		`{"v1alpha1":{"set":{"spec":{"theme":"dark"}}}}`, `{"v1":{"set":{"spec":{"seo":{"enabled":true,"keywords":["a"]}}},"unset":[["spec","tier"]]}}`,
		`{"v1alpha1":null}`, `{"v1alpha1":{"unset":[[]]}}`, `{"v1":{"set":{"metadata":{"labels":{"a":"b"}}}}}`, `{"v1":{"set":{"spec":1}}}`,
		`{"v1alpha1":{"set":{"status":{"x":[1,2]}},"unset":[["spec"],["metadata","name"]]}}`, `[]`, `{`, ``,
	} {
		f.Add(s)
	}
	c := conversion.New(compile(f, website), conversion.Options{})
	up := readObj(f, "../../examples/website/website-v1alpha1.yaml")
	down := readObj(f, "../../examples/website/website-v1.yaml")
	f.Fuzz(func(t *testing.T, raw string) {
		for _, tc := range []struct {
			in, to string
		}{{"v1alpha1", "v1"}, {"v1", "v1alpha1"}} {
			obj := up.DeepCopy()
			if tc.in == "v1" {
				obj = down.DeepCopy()
			}
			ann := obj.GetAnnotations()
			if ann == nil {
				ann = map[string]string{}
			}
			ann[conversion.StashAnnotation] = raw
			obj.SetAnnotations(ann)
			out, err := c.Convert(obj, "demo.orkestra.io/"+tc.to)
			if err != nil {
				continue
			}
			if out.GetAPIVersion() != "demo.orkestra.io/"+tc.to || out.GetName() != obj.GetName() || out.GetNamespace() != obj.GetNamespace() {
				t.Fatalf("%s→%s with stash %q: %s %s/%s", tc.in, tc.to, raw, out.GetAPIVersion(), out.GetNamespace(), out.GetName())
			}
		}
	})
}

// Found by FuzzStash: an empty unset path panicked (index out of range; main
// refuses it too now), and a stash could rename the object. Both are
// refused with the reason.
func TestStashRefusesWhatNoConversionWrites(t *testing.T) {
	c := conversion.New(compile(t, website), conversion.Options{})
	const only = ", which no conversion writes (only spec, status, metadata.labels and metadata.annotations)"
	for raw, want := range map[string]string{
		`{"v1alpha1":{"unset":[[]]}}`:                       `entry "v1alpha1" unsets an empty path`,
		`{"v1alpha1":{"set":{"metadata":{"name":"evil"}}}}`: `entry "v1alpha1" holds metadata.name` + only,
		// found by FuzzStash: an empty metadata map replaced the object's
		// metadata, name and namespace included
		`{"v1alpha1":{"set":{"metadata":{}}}}`:        `entry "v1alpha1" holds metadata` + only,
		`{"v1alpha1":{"set":{"apiVersion":"x/v9"}}}`:  `entry "v1alpha1" holds "apiVersion"` + only,
		`{"v1alpha1":{"unset":[["metadata","uid"]]}}`: `entry "v1alpha1" holds unset path metadata.uid` + only,
	} {
		obj := readObj(t, "../../examples/website/website-v1.yaml")
		obj.SetAnnotations(map[string]string{conversion.StashAnnotation: raw})
		_, err := c.Convert(obj, "demo.orkestra.io/v1alpha1")
		full := "annotation " + conversion.StashAnnotation + ": " + want + "; remove the annotation or restore it from the object's history"
		if err == nil || !strings.HasSuffix(err.Error(), full) {
			t.Errorf("stash %s: %v\nwant …%s", raw, err, full)
		}
	}
}

package render

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/katalog"
)

// requiredSamples gives a value to every field some kind requires, so that
// each kind can be built from its required fields alone. A kind that starts
// requiring a field missing here fails TestEveryKindIsComplete.
var requiredSamples = map[string]any{
	"image":          "nginx:1.27",
	"schedule":       "*/5 * * * *",
	"serviceName":    "shop",
	"storage":        "1Gi",
	"apiVersion":     "example.io/v1",
	"kind":           "Thing",
	"capacity":       "1Gi",
	"roleRef":        map[string]any{"name": "reader"},
	"scaleTargetRef": map[string]any{"name": "web"},
	"maxReplicas":    int64(3),
}

// minimalSamples complete the required fields of kinds whose smallest
// valid object needs one of several fields (a PersistentVolume's source).
var minimalSamples = map[string]map[string]any{
	"persistentVolumes": {"hostPath": "/data"},
}

// TestEveryKindIsComplete ranges over every resource kind the katalog format
// knows and fails when one lacks a part: a builder, drift rules (unless it is
// created once), a place in the apply order, recreate fields that exist. Each
// kind is then built from its required fields alone, the object's
// apiVersion and kind must be the catalogue's, and comparing it with itself
// must find no drift.
func TestEveryKindIsComplete(t *testing.T) {
	for key := range Kinds {
		if katalog.ResourceKinds[key] == nil {
			t.Errorf("render.Kinds has %q, which katalog.ResourceKinds does not declare", key)
		}
	}
	for _, key := range katalogKinds() {
		spec := katalog.ResourceKinds[key]
		k, ok := Kinds[key]
		if !ok {
			t.Errorf("%s: no entry in render.Kinds (add it to its family's kind_*.go)", key)
			continue
		}
		if k.Build == nil {
			t.Errorf("%s: no builder", key)
		}
		if k.Drift == nil && k.Lifecycle != CreateOnly {
			t.Errorf("%s: no drift rules, and it is not CreateOnly", key)
		}
		if !containsString(katalog.ApplyOrder, key) {
			t.Errorf("%s: missing from katalog.ApplyOrder", key)
		}
		for _, f := range k.Recreates {
			if spec.Fields[f] == nil {
				t.Errorf("%s: recreate field %q is not one of its katalog fields", key, f)
			}
		}
		if spec.NameSuffix == "" || (!spec.Open && (spec.APIVersion == "" || spec.Kind == "")) {
			t.Errorf("%s: the catalogue lacks its apiVersion, kind or name suffix", key)
		}
		if spec.Children.Plural == "" || spec.Children.Singular == "" {
			t.Errorf("%s: the catalogue lacks its .children keys (a kind without them is missing from .children)", key)
		}
		if spec.ClusterScoped && spec.Fields["namespace"] != nil {
			t.Errorf("%s: cluster-scoped, yet it takes namespace:", key)
		}
		t.Run(key, func(t *testing.T) { buildAndCompare(t, key, spec, k) })
	}
}

func buildAndCompare(t *testing.T, key string, spec *katalog.KindSpec, k *Kind) {
	fields := map[string]any{}
	for _, req := range spec.Required {
		v, ok := requiredSamples[req]
		if !ok {
			t.Fatalf("required field %q has no sample in requiredSamples", req)
		}
		fields[req] = v
	}
	for k, v := range minimalSamples[key] {
		fields[k] = v
	}
	res := renderOne(t, entry(decl{kind: key, fields: fields}), widget(nil))
	c := res.Hooks[katalog.OnReconcile][0]
	want := schema.FromAPIVersionAndKind(spec.APIVersion, spec.Kind)
	if spec.Open {
		want = schema.FromAPIVersionAndKind("example.io/v1", "Thing")
	}
	if got := c.Object.GroupVersionKind(); got != want {
		t.Errorf("built a %s, the catalogue says %s", got, want)
	}
	if spec.ClusterScoped && (c.Object.GetNamespace() != "" || len(c.Object.GetOwnerReferences()) > 0) {
		t.Errorf("a cluster-scoped %s got namespace %q, owner references %v", key, c.Object.GetNamespace(), c.Object.GetOwnerReferences())
	}
	if (c.Typed == nil) != spec.Open {
		t.Errorf("typed object: %T (only custom children are unstructured)", c.Typed)
	}
	if k.Lifecycle == CreateOnly {
		return
	}
	var live client.Object = c.Object.DeepCopy()
	if c.Typed != nil {
		live = c.Typed.DeepCopyObject().(client.Object)
	}
	d, err := Diff(c, live)
	if err != nil || !d.None() {
		t.Errorf("an object compared with itself: drift %v, err %v", d.Fields, err)
	}
}

func katalogKinds() []string {
	keys := make([]string, 0, len(katalog.ResourceKinds))
	for k := range katalog.ResourceKinds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestReadmeKindTable checks the README's resource kind table against the
// catalogue: one row per kind, each naming the object it builds.
func TestReadmeKindTable(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "#### Resource kinds")
	if start < 0 {
		t.Fatal("README.md has no \"#### Resource kinds\" section")
	}
	section := text[start:]
	if end := strings.Index(section[1:], "\n#"); end >= 0 {
		section = section[:end+1]
	}
	row := regexp.MustCompile("(?m)^\\| `([A-Za-z]+)` \\| ([^|]+) \\|")
	documented := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		documented[m[1]] = strings.TrimSpace(m[2])
	}
	for _, key := range katalogKinds() {
		spec := katalog.ResourceKinds[key]
		builds, ok := documented[key]
		if !ok {
			t.Errorf("README's kind table has no row for %s", key)
			continue
		}
		if !spec.Open && builds != spec.APIVersion+" "+spec.Kind {
			t.Errorf("README says %s builds %q; it builds %s %s", key, builds, spec.APIVersion, spec.Kind)
		}
		delete(documented, key)
	}
	for key := range documented {
		t.Errorf("README's kind table documents %s, which is not a resource kind", key)
	}
}

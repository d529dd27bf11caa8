package migrate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/engine/conversion"
	"github.com/orkspace/orkestra-cel/objgen"
)

// TestConversionKatalog migrates conversion paths (untyped coercion into
// the target version's schema), status fields, template and structured
// `when`/`or` conditions, then converts generated objects of both versions
// with the legacy plan and the migrated one: the same objects come out.
func TestConversionKatalog(t *testing.T) {
	dir := copyDir(t, "testdata/conversion")
	path := filepath.Join(dir, "katalog.yaml")
	res, err := Run(Options{Files: []string{path}})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res.Summary())
	if !res.Equivalent() || len(res.Check) > 0 {
		t.Fatalf("mismatches %v, check %v", res.Mismatches, res.Check)
	}
	if len(res.Translated) != 18 || len(res.Left) != 0 {
		var b strings.Builder
		res.WriteReport(&b)
		t.Fatalf("translated %d, left %d:\n%s", len(res.Translated), len(res.Left), b.String())
	}
	got := string(res.Files[0].Migrated)
	for _, want := range []string{
		`value: "${self.spec.replicas > 0 ? 'Running' : 'Idle'}"`,
		`value: "https://${self.metadata.name}.example.com"`,
		`- "self.spec.replicas != 0"`,
		`- "self.?spec.?seo.?enabled.orValue(false) == true"`,
		`- "self.?spec.?replicas.orValue(0) >= 2"`,
		// The legacy engine wrote null for an empty owner, which the API
		// server prunes (owner is not nullable): none leaves it unset too.
		`owner: "${self.spec.?owner.optFlatMap(v, v.trim() != '' ? optional.of(v.trim()) : optional.none())}"       # may be empty: null`,
		`enabled: "${self.spec.?theme.orValue('') == 'seo'}"`,
		`theme: "${self.spec.?theme.orValue('default')}"`,
		`converted-from: "v1-${self.metadata.name}"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("migrated katalog lacks %s", want)
		}
	}
	oldPlan := compile(t, path)
	if err := os.WriteFile(path, res.Files[0].Migrated, 0o644); err != nil {
		t.Fatal(err)
	}
	newPlan := compile(t, path)
	oldConv, newConv := conversion.New(oldPlan, conversion.Options{}), conversion.New(newPlan, conversion.Options{})
	crd := oldPlan.Entries[0].Source.CRD
	converted := 0
	for _, pair := range [][2]string{{"v1alpha1", "v1"}, {"v1", "v1alpha1"}} {
		gvk := schema.GroupVersionKind{Group: "demo.orkestra.io", Version: pair[0], Kind: "Site"}
		for _, o := range objgen.Generate(crd.Schemas[pair[0]], gvk, 150, objgen.Options{Seed: 5}) {
			want := "demo.orkestra.io/" + pair[1]
			a, aerr := oldConv.Convert(&unstructured.Unstructured{Object: deepCopy(o).(map[string]any)}, want)
			b, berr := newConv.Convert(&unstructured.Unstructured{Object: deepCopy(o).(map[string]any)}, want)
			if (aerr == nil) != (berr == nil) {
				t.Fatalf("%s→%s on %v: legacy error %v, cel error %v", pair[0], pair[1], o, aerr, berr)
			}
			if aerr != nil {
				continue
			}
			// as the API server stores converted objects: nulls of
			// non-nullable fields pruned, defaults applied
			for _, u := range []*unstructured.Unstructured{a, b} {
				defaulting.PruneNonNullableNullsWithoutDefaults(u.Object, crd.Schemas[pair[1]])
				defaulting.Default(u.Object, crd.Schemas[pair[1]])
			}
			// The stash's guards record what each expression reads: all of
			// the object for a legacy template, the fields it names for CEL.
			x, _ := json.Marshal(stashSetUnset(t, a))
			y, _ := json.Marshal(stashSetUnset(t, b))
			if string(x) != string(y) {
				t.Fatalf("%s→%s differ on %v:\nlegacy: %s\ncel:    %s", pair[0], pair[1], o, x, y)
			}
			converted++
		}
	}
	if converted < 200 {
		t.Errorf("only %d objects converted", converted)
	}
}

// stashSetUnset is obj with only the values and removals of its stash
// annotation, without the guards.
func stashSetUnset(t *testing.T, obj *unstructured.Unstructured) map[string]any {
	t.Helper()
	out := obj.DeepCopy()
	ann := out.GetAnnotations()
	raw, ok := ann[conversion.StashAnnotation]
	if !ok {
		return out.Object
	}
	var stash map[string]map[string]any
	if err := json.Unmarshal([]byte(raw), &stash); err != nil {
		t.Fatal(err)
	}
	for _, e := range stash {
		delete(e, "if")
		delete(e, "via")
	}
	b, _ := json.Marshal(stash)
	ann[conversion.StashAnnotation] = string(b)
	out.SetAnnotations(ann)
	return out.Object
}

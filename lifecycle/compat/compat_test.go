package compat

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	celgo "github.com/google/cel-go/cel"

	"github.com/orkspace/orkestra-cel/engine"
	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/gotmpl"
	"github.com/orkspace/orkestra-cel/katalog"
)

func compile(t *testing.T, b engine.Backends, dir string) *engine.Plan {
	t.Helper()
	k, diags := katalog.Load(filepath.Join("testdata", dir))
	if diags.HasErrors() {
		t.Fatalf("loading %s: %v", dir, diags)
	}
	plan, cdiags := engine.Compile(k, b, engine.CompileOptions{})
	if cdiags.HasErrors() {
		t.Fatalf("compiling %s: %v", dir, cdiags)
	}
	return plan
}

// Each revision in testdata is a katalog with its CRD; the cases walk the
// steps of the Kubernetes "Versions in CustomResourceDefinitions" page
// (deprecate, stop serving, remove; change the storage version) and the
// mistakes around them.
func TestCompare(t *testing.T) {
	cel, err := celengine.New(celengine.Options{Libraries: []celgo.EnvOption{gotmpl.CELLibrary()}})
	if err != nil {
		t.Fatal(err)
	}
	b := engine.Backends{CEL: cel, Legacy: gotmpl.New(cel)}
	cases := []struct {
		name, old, new string
		want           []string
	}{
		{"nothing changes", "base", "base", nil},
		{"a version is deprecated", "base", "deprecated", nil},
		{"a version stops being served without deprecation", "base", "unserved", []string{
			"testdata/unserved/crd.yaml:11:7: [gadget-v1] spec.versions[v1alpha1].served: version v1alpha1 stops being served without having been deprecated: its clients fail without a warning; mark it deprecated: true (with a deprecationWarning) in one release and stop serving it in a later one",
		}},
		{"a deprecated version stops being served", "deprecated", "deprecated-unserved", []string{
			"testdata/deprecated-unserved/crd.yaml:11:7: warning: [gadget-v1] spec.versions[v1alpha1].served: version v1alpha1 stops being served: clients still using it fail; orkestra versions says whether any conversion to it was seen lately",
		}},
		{"a version no longer served is removed", "deprecated-unserved", "removed", []string{
			"testdata/removed/crd.yaml:9:3: warning: [gadget-v1] spec.versions[v1alpha1]: version v1alpha1 is removed; the API server refuses the CRD if status.storedVersions still lists it — orkestra versions says whether it is safe to remove",
		}},
		{"a served version is removed", "base", "removed", []string{
			"testdata/removed/crd.yaml:9:3: [gadget-v1] spec.versions[v1alpha1]: version v1alpha1 is removed while it is served: its clients fail, and objects may still be stored at it (the API server refuses the CRD while status.storedVersions lists it); stop serving it first (served: false) and remove it once orkestra versions says it is safe to remove",
		}},
		{"the storage version is removed", "base", "storage-removed", []string{
			"testdata/storage-removed/crd.yaml:9:3: [gadget-v1alpha1] spec.versions[v1]: version v1 is removed, but it was the storage version: objects are stored at it, and the API server refuses a CRD whose status.storedVersions lists a version missing from spec.versions; keep v1 (served: false if need be) until a storage migration has moved every object and orkestra versions says it is safe to remove",
		}},
		{"the storage version changes", "base", "storage-switched", []string{
			"testdata/storage-switched/crd.yaml:12:7: warning: [gadget-v1alpha1] spec.versions[v1alpha1].storage: the storage version changes from v1 to v1alpha1: objects stay stored at v1 until a storage migration rewrites them (orkestra run does it on the leader, or run orkestra storage migrate), and status.storedVersions lists v1 until then",
		}},
		{"a field is removed from the storage version", "base", "field-removed-storage", []string{
			"testdata/field-removed-storage/crd.yaml:31:15: [gadget-v1] spec.versions[v1].schema: spec.label is removed from version v1, which objects are stored at: the API server prunes it from every stored object on its next read or write; keep it, or move it to a new version with a conversion that carries it",
		}},
		{"a field is removed from a served version, a conversion carries it", "base", "field-removed-served", []string{
			"testdata/field-removed-served/crd.yaml:19:15: warning: [gadget-v1alpha1] spec.versions[v1alpha1].schema: spec.size is removed from version v1alpha1: clients at v1alpha1 no longer see it; the conversion keeps it for the other versions (in its stash)",
		}},
		{"a field is removed from a served version, no conversion", "noconv", "noconv-field-removed", []string{
			"testdata/noconv-field-removed/crd.yaml:19:15: [gadget-v1alpha1] spec.versions[v1alpha1].schema: spec.label is removed from version v1alpha1 and no conversion carries it: objects written at v1alpha1 lose it; keep the field, or declare a conversion (its stash keeps what a version cannot hold)",
		}},
		{"the new storage version lacks a stored field, no conversion", "noconv-field-removed", "noconv-storage-switched", []string{
			"testdata/noconv-storage-switched/crd.yaml:12:7: warning: [gadget-v1alpha1] spec.versions[v1alpha1].storage: the storage version changes from v1 to v1alpha1: objects stay stored at v1 until a storage migration rewrites them (orkestra run does it on the leader, or run orkestra storage migrate), and status.storedVersions lists v1 until then",
			"testdata/noconv-storage-switched/crd.yaml:19:15: [gadget-v1alpha1] spec.versions[v1alpha1].schema: objects stored at v1 hold spec.label, which v1alpha1, the new storage version, does not declare, and no conversion carries it: the storage migration drops it; declare a conversion between v1 and v1alpha1, or add the field to v1alpha1",
		}},
		{"a field becomes required (one without a default)", "base", "required", []string{
			"testdata/required/crd.yaml:35:17: [gadget-v1] spec.versions[v1].schema: spec.label becomes required in version v1 without a default: existing objects without it fail validation on their next write (the storage migration's too), and clients that do not send it get 422; give it a default, or leave it optional",
		}},
		{"the conversion is dropped", "base", "no-conversion", []string{
			"testdata/no-conversion/katalog.yaml:10:5: [gadget-v1] conversion: the conversion of CRD gadgets.compat.orkestra.io is removed while its versions (v1alpha1, v1) have different schemas: the API server will only rewrite apiVersion between them; keep the conversion block",
		}},
		{"a conversion path is dropped", "three", "three-path-removed", []string{
			"testdata/three-path-removed/katalog.yaml:17:9: warning: [gadget-v1] conversion.paths: the path from v1alpha1 to v1beta1 is removed: objects now convert v1alpha1→v1→v1beta1 through the storage version; check the results (orkestra conformance)",
		}},
		{"a CRD leaves the katalog", "base", "other-crd", []string{
			"testdata/base/katalog.yaml:7:5: warning: [gadget-v1alpha1] CRD gadgets.compat.orkestra.io is no longer in the katalog: orkestra manifests stops installing it, and deleting the CRD from the cluster deletes every object of it",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Compare(compile(t, b, tc.old), compile(t, b, tc.new))
			var lines []string
			for _, d := range got {
				lines = append(lines, d.Error())
			}
			if !slices.Equal(lines, tc.want) {
				t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

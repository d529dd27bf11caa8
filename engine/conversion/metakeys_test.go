package conversion_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/engine/conversion"
)

// The metadata keys a CRD's conversions read are what their expressions
// read of metadata, and labels where a path maps them; all of them where an
// expression reads metadata (or the object) whole or a legacy template runs.
func TestMetadataKeys(t *testing.T) {
	crd, err := os.ReadFile("testdata/cookbook/fromLabel/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// fromLabel's paths with the v1 → v2 value of zone replaced.
	fromLabel := func(zone string, mapsLabels bool) string {
		src, err := os.ReadFile("testdata/cookbook/fromLabel/katalog.yaml")
		if err != nil {
			t.Fatal(err)
		}
		k := strings.Replace(string(src), `"${self.metadata.?labels[?'example.com/zone']}"`, zone, 1)
		if !mapsLabels {
			k = strings.ReplaceAll(k, "            metadata:\n              labels:\n                example.com/zone: \"${self.spec.?zone}\"\n", "")
			k = strings.ReplaceAll(k, "            metadata:\n              labels:\n                example.com/zone: null\n", "")
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), crd, 0o644); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "katalog.yaml")
		if err := os.WriteFile(path, []byte(k), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	gk := schema.GroupKind{Group: "cookbook.orkestra.io", Kind: "FromLabel"}
	for name, c := range map[string]struct {
		katalog string
		gk      schema.GroupKind
		keys    []string
		all     bool
	}{
		"spec only":                  {"../../webhook/testdata/website/katalog.yaml", schema.GroupKind{Group: "demo.orkestra.io", Kind: "Website"}, nil, false},
		"an annotation read":         {"testdata/cookbook/fromAnnotation/katalog.yaml", schema.GroupKind{Group: "cookbook.orkestra.io", Kind: "FromAnnotation"}, nil, false},
		"a label read and mapped":    {"testdata/cookbook/fromLabel/katalog.yaml", gk, []string{"labels"}, false},
		"the name read":              {fromLabel(`"${self.metadata.name}"`, false), gk, []string{"name"}, false},
		"the name and labels":        {fromLabel(`"${self.metadata.name}"`, true), gk, []string{"labels", "name"}, false},
		"metadata whole":             {fromLabel(`"${[self.metadata].size() == 1 ? 'a' : 'b'}"`, false), gk, nil, true},
		"the object whole":           {fromLabel(`"${[self].size() == 1 ? 'a' : 'b'}"`, false), gk, nil, true},
		"legacy templates":           {"../../webhook/testdata/legacy-website/katalog.yaml", schema.GroupKind{Group: "demo.orkestra.io", Kind: "Website"}, nil, true},
		"a kind it does not convert": {"testdata/cookbook/fromLabel/katalog.yaml", schema.GroupKind{Group: "cookbook.orkestra.io", Kind: "Other"}, nil, true},
	} {
		t.Run(name, func(t *testing.T) {
			conv := conversion.New(compile(t, c.katalog), conversion.Options{})
			keys, all := conv.MetadataKeys(c.gk)
			if all != c.all || !slices.Equal(keys, c.keys) {
				t.Errorf("MetadataKeys = %v, all %v; want %v, all %v", keys, all, c.keys, c.all)
			}
		})
	}
}

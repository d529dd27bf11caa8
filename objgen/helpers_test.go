package objgen

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/orkspace/orkestra-cel/katalog"
)

// examplesDir holds the project's example katalogs and CRDs.
const examplesDir = "../examples"

// versionSchema is one served version of a CRD.
type versionSchema struct {
	name string // file:version, for test names
	gvk  schema.GroupVersionKind
	s    *structuralschema.Structural
}

// readCRD reads the first CustomResourceDefinition in a YAML file.
func readCRD(t testing.TB, path string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(doc, &crd); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if crd.Kind == "CustomResourceDefinition" {
			return &crd
		}
	}
	t.Fatalf("%s holds no CustomResourceDefinition", path)
	return nil
}

// loadVersions returns the structural schema of every version of the CRD at
// path, built the way the katalog loader builds them.
func loadVersions(t testing.TB, path string) []versionSchema {
	t.Helper()
	crd := readCRD(t, path)
	var out []versionSchema
	for _, v := range crd.Spec.Versions {
		s, err := katalog.StructuralSchema(v.Schema.OpenAPIV3Schema)
		if err != nil {
			t.Fatalf("%s version %s: %v", path, v.Name, err)
		}
		out = append(out, versionSchema{
			name: filepath.Base(filepath.Dir(path)) + "/" + filepath.Base(path) + ":" + v.Name,
			gvk:  schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind},
			s:    s,
		})
	}
	return out
}

// schemaFromYAML builds a structural schema from an openAPIV3Schema in YAML.
func schemaFromYAML(t testing.TB, src string) *structuralschema.Structural {
	t.Helper()
	var props apiextensionsv1.JSONSchemaProps
	if err := yaml.Unmarshal([]byte(src), &props); err != nil {
		t.Fatal(err)
	}
	s, err := katalog.StructuralSchema(&props)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// allSchemas returns every version of the shared example CRDs and the
// gadget test CRD.
func allSchemas(t testing.TB) []versionSchema {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(examplesDir, "*", "crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no CRDs under %s", examplesDir)
	}
	paths = append(paths, gadgetCRD)
	var out []versionSchema
	for _, p := range paths {
		out = append(out, loadVersions(t, p)...)
	}
	return out
}

const gadgetCRD = "testdata/gadget-crd.yaml"

func gadget(t testing.TB) versionSchema {
	t.Helper()
	return loadVersions(t, gadgetCRD)[0]
}

// lookup returns the value at a dotted path of plain keys.
func lookup(obj map[string]any, keys ...string) (any, bool) {
	var cur any = obj
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

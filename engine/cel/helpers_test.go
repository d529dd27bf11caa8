package cel

import (
	"os"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// crdSchemas reads a CRD manifest and returns the structural schema of each
// version, the way the katalog loader does: v1 → internal → structural.
func crdSchemas(t testing.TB, path string) map[string]*structuralschema.Structural {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		t.Fatal(err)
	}
	out := map[string]*structuralschema.Structural{}
	for _, v := range crd.Spec.Versions {
		out[v.Name] = toStructural(t, v.Schema.OpenAPIV3Schema)
	}
	return out
}

func toStructural(t testing.TB, props *apiextensionsv1.JSONSchemaProps) *structuralschema.Structural {
	t.Helper()
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(props, internal, nil); err != nil {
		t.Fatal(err)
	}
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// schemaYAML builds a structural schema from an openAPIV3Schema in YAML.
func schemaYAML(t testing.TB, src string) *structuralschema.Structural {
	t.Helper()
	var props apiextensionsv1.JSONSchemaProps
	if err := yaml.UnmarshalStrict([]byte(src), &props); err != nil {
		t.Fatal(err)
	}
	return toStructural(t, &props)
}

// objYAML decodes an object the way apimachinery does (int64, float64, …).
func objYAML(t testing.TB, src string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := utilyaml.Unmarshal([]byte(src), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func newBackend(t testing.TB, opts Options) *Backend {
	t.Helper()
	b, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var testPos = katalog.Pos{File: "katalog.yaml", Line: 10, Col: 20}

func ctxFor(self, expected *structuralschema.Structural) *engine.Context {
	return &engine.Context{Entry: "website-v1", Field: "spec.replicas", Pos: testPos, Self: self, SelfVersion: "v1", Expected: expected}
}

package conversion_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/orkspace/orkestra-cel/engine"
	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/conversion"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/objgen"
)

// The 29 strategies of a declarative CRD converter (TeraSky-OSS
// declarative-conversion-operator, docs/strategies), each written as
// Orkestra CEL paths in testdata/cookbook/<strategy>: the README's
// conversion cookbook shows these paths.
var cookbookStrategies = []string{
	"fieldRename", "scalarToObject", "objectToScalar", "singletonArrayToObject", "objectToSingletonArray",
	"fieldsToMap", "mapToFields", "mapKeyRename", "arrayToMapByKey", "mapToArrayByKey",
	"toAnnotation", "fromAnnotation", "toLabel", "fromLabel", "enumRemap", "defaultValue", "constant",
	"delete", "typeCoerce", "numericScale", "quantity", "duration", "scalarToFields", "fieldsToScalar",
	"listJoin", "listSplit", "forEach", "jsonPatch", "cel",
}

// compileClean compiles a katalog and fails on any diagnostic, warnings
// included: a cookbook conversion cannot fail on a valid object.
func compileClean(t *testing.T, path string) *engine.Plan {
	t.Helper()
	k, diags := katalog.Load(path)
	if len(diags) > 0 {
		t.Fatalf("load %s: %v", path, diags)
	}
	cel, err := celengine.New(celengine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	plan, cdiags := engine.Compile(k, engine.Backends{CEL: cel}, engine.CompileOptions{StrictTotality: true})
	if len(cdiags) > 0 {
		t.Fatalf("compile %s: %v", path, cdiags)
	}
	return plan
}

func readDocs(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, obj(t, string(mustYAML(t, m))))
	}
	return out
}

func mustYAML(t *testing.T, v any) []byte {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Every cookbook example converts its documented objects as shown, brings
// them back exactly, and round-trips generated objects exactly.
func TestCookbook(t *testing.T) {
	for _, name := range cookbookStrategies {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata/cookbook", name)
			plan := compileClean(t, filepath.Join(dir, "katalog.yaml"))
			c := conversion.New(plan, conversion.Options{})
			docs := readDocs(t, filepath.Join(dir, "cases.yaml"))
			if len(docs) == 0 || len(docs)%2 != 0 {
				t.Fatalf("cases.yaml holds %d documents, want pairs", len(docs))
			}
			for i := 0; i < len(docs); i += 2 {
				in, want := docs[i], docs[i+1]
				out, err := c.Convert(in, want.GetAPIVersion())
				if err != nil {
					t.Fatal(err)
				}
				if got := withoutStash(out.Object); !sameJSON(t, got, want.Object) {
					t.Errorf("case %d: %s → %s\n got %v\nwant %v", i/2+1, in.GetAPIVersion(), want.GetAPIVersion(), got, want.Object)
				}
				back, err := c.Convert(out, in.GetAPIVersion())
				if err != nil {
					t.Fatal(err)
				}
				if !sameJSON(t, back.Object, in.Object) {
					t.Errorf("case %d: the round trip does not give the object back:\n got %v\nwant %v", i/2+1, back.Object, in.Object)
				}
			}
			for gk, conv := range plan.Conversions {
				for _, a := range conv.Versions {
					b := "v1"
					if a == "v1" {
						b = "v2"
					}
					gvk := schema.GroupVersionKind{Group: gk.Group, Version: a, Kind: gk.Kind}
					for i, o := range objgen.Generate(conv.Schemas[a], gvk, 60, objgen.Options{Seed: 3}) {
						defaulting.Default(o, conv.Schemas[a])
						in := &unstructured.Unstructured{Object: o}
						orig := in.DeepCopy()
						mid, err := c.Convert(in, gk.Group+"/"+b)
						if err != nil {
							t.Fatalf("%s→%s object %d: %v\n%v", a, b, i, err, o)
						}
						if err := objgen.Validate(conv.Schemas[b], withoutStash(mid.Object)); err != nil {
							t.Fatalf("%s→%s object %d is not valid at %s: %v\n%v", a, b, i, b, err, mid.Object)
						}
						back, err := c.Convert(mid, gk.Group+"/"+a)
						if err != nil {
							t.Fatalf("%s→%s→%s object %d: %v", a, b, a, i, err)
						}
						if !sameJSON(t, back.Object, orig.Object) {
							t.Fatalf("%s→%s→%s object %d:\n got %v\nwant %v", a, b, a, i, back.Object, orig.Object)
						}
					}
				}
			}
		})
	}
}

var cookbookEntry = regexp.MustCompile("(?s)\n#### `([A-Za-z]+)`\n(.*?)\n```yaml\n(.*?)```\n")

// The README's cookbook shows exactly the tested paths, one entry per
// strategy.
func TestReadmeCookbookIsTested(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	start := strings.Index(readme, "### Conversion cookbook")
	if start < 0 {
		t.Fatal("README has no conversion cookbook")
	}
	section := readme[start:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	shown := map[string]string{}
	for _, m := range cookbookEntry.FindAllStringSubmatch(section, -1) {
		shown[m[1]] = m[3]
	}
	if len(shown) != len(cookbookStrategies) {
		t.Errorf("the cookbook has %d entries, want %d", len(shown), len(cookbookStrategies))
	}
	for _, name := range cookbookStrategies {
		src, err := os.ReadFile(filepath.Join("testdata/cookbook", name, "katalog.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		paths := string(src)[strings.Index(string(src), "        paths:\n")+len("        paths:\n"):]
		want := dedent(paths, 10)
		if got, ok := shown[name]; !ok {
			t.Errorf("the cookbook has no entry for %s", name)
		} else if got != want {
			t.Errorf("%s: the README shows\n%s\nthe fixture has\n%s", name, got, want)
		}
	}
}

// sameJSON compares objects as the API server serves them: a whole double
// is written as an integer.
func sameJSON(t *testing.T, a, b map[string]any) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(x) == string(y)
}

func dedent(s string, n int) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if len(l) >= n {
			lines[i] = l[n:]
		}
	}
	return strings.Join(lines, "\n")
}

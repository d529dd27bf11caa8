package objgen

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
)

const objectsPerSchema = 500

// TestGadgetCRDIsValid keeps the test CRD installable: the API server's own
// CRD validation accepts it.
func TestGadgetCRDIsValid(t *testing.T) {
	crd := readCRD(t, gadgetCRD)
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
	var internal apiextensions.CustomResourceDefinition
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, &internal, nil); err != nil {
		t.Fatal(err)
	}
	if errs := crdvalidation.ValidateCustomResourceDefinition(context.Background(), &internal); len(errs) > 0 {
		t.Fatalf("the test CRD is not valid:\n%v", errs.ToAggregate())
	}
}

func TestValidity(t *testing.T) {
	for _, vs := range allSchemas(t) {
		t.Run(vs.name, func(t *testing.T) {
			t.Parallel()
			v, err := NewValidator(vs.s)
			if err != nil {
				t.Fatal(err)
			}
			objs := Generate(vs.s, vs.gvk, objectsPerSchema, Options{Seed: 42})
			if len(objs) != objectsPerSchema {
				t.Fatalf("got %d objects, want %d", len(objs), objectsPerSchema)
			}
			names := map[string]bool{}
			for i, obj := range objs {
				if err := v.Validate(obj); err != nil {
					t.Fatalf("object %d is invalid: %v\n%s", i, err, dump(obj))
				}
				if got, want := obj["apiVersion"], vs.gvk.GroupVersion().String(); got != want {
					t.Errorf("object %d: apiVersion %v, want %s", i, got, want)
				}
				if obj["kind"] != vs.gvk.Kind {
					t.Errorf("object %d: kind %v, want %s", i, obj["kind"], vs.gvk.Kind)
				}
				name, _ := lookup(obj, "metadata", "name")
				n, _ := name.(string)
				if errs := utilvalidation.IsDNS1123Label(n); len(errs) > 0 {
					t.Errorf("object %d: name %q is not a DNS-1123 label: %v", i, n, errs)
				}
				if names[n] {
					t.Errorf("object %d: duplicate name %q", i, n)
				}
				names[n] = true
				if ns, _ := lookup(obj, "metadata", "namespace"); ns != DefaultNamespace {
					t.Errorf("object %d: namespace %v, want %s", i, ns, DefaultNamespace)
				}
				assertJSONTypes(t, fmt.Sprintf("object %d", i), obj)
				// apimachinery decodes the object's JSON back to the same values
				b, err := json.Marshal(obj)
				if err != nil {
					t.Fatal(err)
				}
				var back map[string]any
				if err := utiljson.Unmarshal(b, &back); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(back, obj) {
					t.Fatalf("object %d changes in a JSON round trip:\n%s\n%s", i, dump(obj), dump(back))
				}
			}
		})
	}
}

// TestValidityManySeeds checks validity across seeds and option settings.
func TestValidityManySeeds(t *testing.T) {
	opts := []Options{
		{},
		{OptionalProbability: 1, MaxItems: 6, MaxProperties: 6, MaxDepth: 6},
		{OptionalProbability: -1, MaxItems: -1, MaxProperties: -1},
		{OptionalProbability: 0.3, ClusterScoped: true},
	}
	for _, vs := range allSchemas(t) {
		t.Run(vs.name, func(t *testing.T) {
			t.Parallel()
			v, err := NewValidator(vs.s)
			if err != nil {
				t.Fatal(err)
			}
			for seed := int64(0); seed < 25; seed++ {
				for oi, o := range opts {
					o.Seed = seed
					for i, obj := range Generate(vs.s, vs.gvk, 8, o) {
						if err := v.Validate(obj); err != nil {
							t.Fatalf("seed %d options %d object %d is invalid: %v\n%s", seed, oi, i, err, dump(obj))
						}
					}
				}
			}
		})
	}
}

func TestDeterminism(t *testing.T) {
	for _, vs := range allSchemas(t) {
		t.Run(vs.name, func(t *testing.T) {
			a := Generate(vs.s, vs.gvk, 50, Options{Seed: 7})
			b := Generate(vs.s, vs.gvk, 50, Options{Seed: 7})
			if !reflect.DeepEqual(a, b) {
				t.Fatal("same seed, different objects")
			}
			// Object i depends on the seed and i only.
			if prefix := Generate(vs.s, vs.gvk, 10, Options{Seed: 7}); !reflect.DeepEqual(prefix, a[:10]) {
				t.Fatal("a shorter run is not a prefix of a longer one")
			}
			c := Generate(vs.s, vs.gvk, 50, Options{Seed: 8})
			if reflect.DeepEqual(a, c) {
				t.Fatal("different seeds, same objects")
			}
			// and the JSON is byte-identical
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if string(ja) != string(jb) {
				t.Fatal("same seed, different JSON")
			}
		})
	}
}

func TestClusterScopedAndNamespace(t *testing.T) {
	vs := gadget(t)
	for _, obj := range Generate(vs.s, vs.gvk, 20, Options{ClusterScoped: true}) {
		if _, ok := lookup(obj, "metadata", "namespace"); ok {
			t.Fatal("cluster-scoped object has a namespace")
		}
	}
	for _, obj := range Generate(vs.s, vs.gvk, 20, Options{Namespace: "team-a"}) {
		if ns, _ := lookup(obj, "metadata", "namespace"); ns != "team-a" {
			t.Fatalf("namespace %v, want team-a", ns)
		}
	}
}

// assertJSONTypes checks that obj holds only the types apimachinery's JSON
// decoder produces.
func assertJSONTypes(t *testing.T, where string, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			assertJSONTypes(t, where+"."+k, e)
		}
	case []any:
		for i, e := range x {
			assertJSONTypes(t, fmt.Sprintf("%s[%d]", where, i), e)
		}
	case string, bool, int64, nil:
	case float64:
		if x == float64(int64(x)) {
			t.Errorf("%s: integral number %v should be int64", where, x)
		}
	default:
		t.Errorf("%s: unexpected type %T", where, v)
	}
}

func dump(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func TestGenerateFailsLoudlyOnImpossibleRequiredField(t *testing.T) {
	s := schemaFromYAML(t, `
type: object
required: [spec]
properties:
  spec:
    type: object
    required: [code]
    properties:
      code:
        type: string
        minLength: 5
        maxLength: 3
`)
	gvk := gadget(t).gvk
	_, err := TryGenerate(s, gvk, 1, Options{})
	if err == nil || !strings.Contains(err.Error(), "spec.code") || !strings.Contains(err.Error(), "minLength 5 exceeds maxLength 3") {
		t.Fatalf("got %v, want an error naming spec.code", err)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "spec.code") {
			t.Fatalf("Generate did not panic naming spec.code: %v", r)
		}
	}()
	Generate(s, gvk, 1, Options{})
}

func TestGenerateSkipsImpossibleOptionalField(t *testing.T) {
	s := schemaFromYAML(t, `
type: object
properties:
  spec:
    type: object
    required: [ok]
    properties:
      ok:
        type: string
      never:
        type: string
        pattern: '^a$'
        minLength: 2
`)
	vs := gadget(t)
	for i, obj := range Generate(s, vs.gvk, 50, Options{OptionalProbability: 1}) {
		if _, ok := lookup(obj, "spec", "never"); ok {
			t.Fatalf("object %d has the unsatisfiable optional field", i)
		}
		if _, ok := lookup(obj, "spec", "ok"); !ok {
			t.Fatalf("object %d lacks the required field", i)
		}
	}
}

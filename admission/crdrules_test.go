package admission_test

import (
	"fmt"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/orkestra-cel/admission"
)

// crdWith is a CRD whose versions have the given rules (by version), and
// annotation AnnotationRules set to ours when it is not "".
func crdWith(ours string, rules map[string][]apiextensionsv1.ValidationRule) *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "platforms.admission.example.io"}}
	if ours != "" {
		crd.Annotations = map[string]string{admission.AnnotationRules: ours, "other": "kept"}
	}
	for _, v := range []string{"v1alpha1", "v1"} {
		crd.Spec.Versions = append(crd.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: v, Schema: &apiextensionsv1.CustomResourceValidation{
			OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XValidations: rules[v]},
		}})
	}
	return crd
}

func rulesOf(crd *apiextensionsv1.CustomResourceDefinition) string {
	var parts []string
	for _, v := range crd.Spec.Versions {
		for _, r := range v.Schema.OpenAPIV3Schema.XValidations {
			parts = append(parts, fmt.Sprintf("%s:%s(%s)", v.Name, r.Rule, r.Message))
		}
	}
	return strings.Join(parts, " ")
}

// The rules the annotation lists become exactly the katalog's: a listed
// rule the katalog dropped goes, a rule it keeps takes its message, a new
// one is added; rules not listed stay, whatever they are.
func TestConvergeKeepsOthersRules(t *testing.T) {
	live := crdWith(`{"v1":["a","b"],"v1alpha1":["x"]}`, map[string][]apiextensionsv1.ValidationRule{
		"v1":       {{Rule: "a", Message: "old"}, {Rule: "mine", Message: "by hand"}, {Rule: "b", Message: "b"}},
		"v1alpha1": {{Rule: "x", Message: "x"}, {Rule: "y", Message: "the manifest's own"}},
	})
	want := map[string]apiextensionsv1.ValidationRules{"v1": {{Rule: "a", Message: "new"}, {Rule: "c", Message: "c"}}}
	got, removed, err := admission.Converge(live, want)
	if err != nil {
		t.Fatal(err)
	}
	if r, want := rulesOf(got), "v1alpha1:y(the manifest's own) v1:a(new) v1:mine(by hand) v1:c(c)"; r != want {
		t.Errorf("rules\n got %s\nwant %s", r, want)
	}
	if fmt.Sprint(removed) != `[platforms.admission.example.io v1alpha1 x-kubernetes-validations "x" platforms.admission.example.io v1 x-kubernetes-validations "b"]` {
		t.Errorf("removed %v", removed)
	}
	if a := got.Annotations[admission.AnnotationRules]; a != `{"v1":["a","c"]}` || got.Annotations["other"] != "kept" {
		t.Errorf("annotations %v", got.Annotations)
	}
	if rulesOf(live) != "v1alpha1:x(x) v1alpha1:y(the manifest's own) v1:a(old) v1:mine(by hand) v1:b(b)" {
		t.Errorf("Converge changed its input: %s", rulesOf(live))
	}
}

// Without the annotation (a CRD installed before Orkestra recorded its
// rules, or by someone else) no rule is removed; the katalog's are adopted.
// A CRD already converged is returned unchanged, and a katalog without rules
// removes the annotation.
func TestConvergeAdoptsAndIsIdempotent(t *testing.T) {
	live := crdWith("", map[string][]apiextensionsv1.ValidationRule{"v1": {{Rule: "a", Message: "a"}, {Rule: "old", Message: "old"}}})
	want := map[string]apiextensionsv1.ValidationRules{"v1": {{Rule: "a", Message: "a"}}}
	got, removed, err := admission.Converge(live, want)
	if err != nil || len(removed) != 0 || rulesOf(got) != "v1:a(a) v1:old(old)" || got.Annotations[admission.AnnotationRules] != `{"v1":["a"]}` {
		t.Fatalf("adopting: %v, removed %v, rules %s, annotations %v", err, removed, rulesOf(got), got.Annotations)
	}
	again, removed, err := admission.Converge(got, want)
	if err != nil || len(removed) != 0 || !equality.Semantic.DeepEqual(again, got) {
		t.Fatalf("a converged CRD changed: %v, removed %v, rules %s", err, removed, rulesOf(again))
	}
	none, removed, err := admission.Converge(got, nil)
	if err != nil || rulesOf(none) != "v1:old(old)" || fmt.Sprint(removed) != `[platforms.admission.example.io v1 x-kubernetes-validations "a"]` {
		t.Fatalf("no rules: %v, removed %v, rules %s", err, removed, rulesOf(none))
	}
	if _, ok := none.Annotations[admission.AnnotationRules]; ok {
		t.Errorf("the annotation stayed: %v", none.Annotations)
	}
}

func TestConvergeErrors(t *testing.T) {
	bad := crdWith(`["a"]`, nil)
	if _, _, err := admission.Converge(bad, nil); err == nil || !strings.Contains(err.Error(), "annotation orkestra.orkspace.io/validation-rules is not a JSON object of rule lists by version") {
		t.Errorf("a bad annotation: %v", err)
	}
	want := map[string]apiextensionsv1.ValidationRules{"v2": {{Rule: "a"}}}
	if _, _, err := admission.Converge(crdWith("", nil), want); err == nil || err.Error() != "CRD platforms.admission.example.io installed in the cluster has no version v2, which the katalog's rules validate" {
		t.Errorf("a missing version: %v", err)
	}
	noSchema := crdWith("", nil)
	noSchema.Spec.Versions[1].Schema = nil
	want = map[string]apiextensionsv1.ValidationRules{"v1": {{Rule: "a"}}}
	if _, _, err := admission.Converge(noSchema, want); err == nil || err.Error() != "CRD platforms.admission.example.io installed in the cluster has no schema for version v1, which the katalog's rules validate" {
		t.Errorf("a version without a schema: %v", err)
	}
}

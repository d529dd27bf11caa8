package admission_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"

	"github.com/orkspace/orkestra-cel/admission"
	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/gotmpl"
	"github.com/orkspace/orkestra-cel/katalog"
)

// Every rule form lands where the API server runs it best, as the expected
// CEL: own-field deny rules in the CRD, a rule reading the request and warn
// rules in validating policies, defaults and overrides in a mutating one.
func TestPlacement(t *testing.T) {
	plan := compile(t, "testdata")
	crd := plan.Entries[0].Source.CRD
	rules := admission.CRDRules(plan, crd, "v1")
	if len(rules) != 1 || rules[0].Rule != "self.?spec.?image.orValue('').startsWith('registry.internal/')" || rules[0].FieldPath != ".spec.image" || rules[0].Message != "images must come from registry.internal/" {
		t.Fatalf("CRD rules %+v", rules)
	}
	byName := map[string]any{}
	for _, o := range admission.Policies(plan) {
		byName[o.GetObjectKind().GroupVersionKind().Kind+"/"+o.GetName()] = o
		if o.GetLabels()[admission.LabelKatalog] != "platform" {
			t.Errorf("%s lacks the katalog label", o.GetName())
		}
	}
	deny := byName["ValidatingAdmissionPolicy/orkestra-platform-platform-deny"].(*admissionv1.ValidatingAdmissionPolicy)
	want := []string{
		"object.spec.?replicas.orValue(1) <= 20 || request.userInfo.username == 'capacity-admin'",
		"request.namespace == '' || (request.namespace == \"default\" || request.namespace.startsWith(\"team-\"))",
	}
	if len(deny.Spec.Validations) != 2 || deny.Spec.Validations[0].Expression != want[0] || deny.Spec.Validations[1].Expression != want[1] {
		t.Fatalf("deny validations %+v", deny.Spec.Validations)
	}
	if b := byName["ValidatingAdmissionPolicyBinding/orkestra-platform-platform-warn"].(*admissionv1.ValidatingAdmissionPolicyBinding); b.Spec.ValidationActions[0] != admissionv1.Warn {
		t.Fatalf("warn binding %+v", b.Spec)
	}
	m := byName["MutatingAdmissionPolicy/orkestra-platform-platform-mutate"].(*admissionv1.MutatingAdmissionPolicy)
	got := []string{m.Spec.Mutations[0].ApplyConfiguration.Expression, m.Spec.Mutations[1].ApplyConfiguration.Expression}
	wantM := []string{
		`object.?spec.?environment.orValue('') == '' ? Object{spec: Object.spec{environment: "development"}} : Object{}`,
		`Object{spec: Object.spec{owner: "platform-team"}}`,
	}
	if got[0] != wantM[0] || got[1] != wantM[1] {
		t.Fatalf("mutations\n got %q\nwant %q", got, wantM)
	}
	del := byName["ValidatingAdmissionPolicy/orkestra-platform-deletion-protection"].(*admissionv1.ValidatingAdmissionPolicy)
	if r := del.Spec.MatchConstraints.ResourceRules[0]; r.ResourceNames[0] != "platforms.admission.example.io" || r.Operations[0] != admissionv1.Delete {
		t.Fatalf("deletion protection %+v", r)
	}
	objs := byName["ValidatingAdmissionPolicy/orkestra-platform-deletion-protection-objects"].(*admissionv1.ValidatingAdmissionPolicy)
	if m := objs.Spec.MatchConstraints; m.ObjectSelector.MatchLabels["orkestra.io/deletion-protection"] != "true" || len(m.ResourceRules) != 1 ||
		m.ResourceRules[0].APIGroups[0] != "admission.example.io" || m.ResourceRules[0].Resources[0] != "platforms" || m.ResourceRules[0].Operations[0] != admissionv1.Delete {
		t.Fatalf("deletion protection of labelled objects %+v", m)
	}
	if len(byName) != 10 {
		t.Fatalf("%d objects: %v", len(byName), byName)
	}
}

// Bad rules are positioned errors that say how to fix them.
func TestRuleErrors(t *testing.T) {
	head := "apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nspec:\n  crds:\n    platform:\n      crdFile: ./crd.yaml\n"
	cases := []struct{ name, body, want string }{
		{"unknown field", "      validation:\n        rules:\n          - field: spec.imag\n            exists: true\n",
			`k.yaml:9:20: [platform] validation.rules[0].field: spec.imag is not in the schema of v1; did you mean "image"?`},
		{"metadata is never pruned (a rule on it is not fixed)", "      validation:\n        rules:\n          - field: metadata.labels.team\n            exists: true\n",
			`k.yaml:9:20: [platform] validation.rules[0].field: metadata is not in the schema of v1`},
		{"CEL typo", "      validation:\n        rules:\n          - rule: \"self.spec.replica > 0\"\n",
			"k.yaml:9:30: [platform] validation.rules[0].rule: when `self.spec.replica > 0`: undefined field 'replica'; did you mean replicas?"},
		{"runtime function", "      validation:\n        rules:\n          - rule: \"weekday()\"\n",
			"k.yaml:9:20: [platform] validation.rules[0].rule: weekday is a function of this runtime's CEL, which the API server's CEL does not have; admission rules run in the API server"},
		{"bad action", "      validation:\n        rules:\n          - field: spec.image\n            exists: true\n            action: block\n",
			`k.yaml:11:21: [platform] validation.rules[0].action: action must be deny or warn, got "block"`},
		{"rule and condition", "      validation:\n        rules:\n          - rule: \"true\"\n            field: spec.image\n",
			"k.yaml:9:13: [platform] validation.rules[0]: a rule is either rule: (CEL) or a condition (field: …), not both"},
		{"legacy mutation value", "      mutation:\n        rules:\n          - field: spec.owner\n            default: \"{{ .metadata.name }}\"\n",
			"k.yaml:10:22: [platform] mutation.rules[0].default: a mutation value is a literal or a CEL expression over object (${…}); a legacy template has no form the API server runs"},
		{"mistyped default", "      mutation:\n        rules:\n          - field: spec.replicas\n            default: many\n",
			`k.yaml:10:22: [platform] mutation.rules[0].default: spec.replicas expects an integer, got the string "many"`},
		{"default and override", "      mutation:\n        rules:\n          - field: spec.owner\n            default: a\n            override: b\n",
			"k.yaml:9:13: [platform] mutation.rules[0]: a mutation rule needs exactly one of default: (when the field is absent) and override: (always)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			crd, _ := os.ReadFile("testdata/crd.yaml")
			_ = os.WriteFile(filepath.Join(dir, "crd.yaml"), crd, 0o644)
			_ = os.WriteFile(filepath.Join(dir, "k.yaml"), []byte(head+tc.body), 0o644)
			k, diags := katalog.Load(filepath.Join(dir, "k.yaml"))
			if !diags.HasErrors() {
				c, _ := cel.New(cel.Options{})
				_, cdiags := engine.Compile(k, engine.Backends{CEL: c, Legacy: gotmpl.New(c)}, engine.CompileOptions{})
				diags = append(diags, cdiags...)
			}
			var got []string
			for _, d := range diags.Errors() {
				got = append(got, strings.ReplaceAll(d.Error(), dir+string(filepath.Separator), ""))
			}
			if len(got) == 0 || got[0] != tc.want {
				t.Fatalf("want\n  %s\ngot\n  %s", tc.want, strings.Join(got, "\n  "))
			}
		})
	}
}

// A list or a map exists when present: the original printed it non-empty
// ("[]", "map[]") (orkspace/orkestra examples/intermediate/08-state-machine).
func TestExistsOnAListOrMap(t *testing.T) {
	dir := t.TempDir()
	crd := strings.Replace(mustRead(t, "testdata/crd.yaml"), "                rateLimit: {type: integer}\n", "                rateLimit: {type: integer}\n                steps: {type: array, items: {type: string}}\n", 1)
	_ = os.WriteFile(filepath.Join(dir, "crd.yaml"), []byte(crd), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "katalog.yaml"), []byte("apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nmetadata: {name: p}\nspec:\n  crds:\n    platform:\n      crdFile: ./crd.yaml\n      validation:\n        rules:\n          - field: spec.steps\n            operator: exists\n            message: steps are required\n"), 0o644)
	plan := compile(t, dir)
	rules := admission.CRDRules(plan, plan.Entries[0].Source.CRD, "v1")
	if len(rules) != 1 || rules[0].Rule != "self.?spec.?steps.hasValue()" {
		t.Fatalf("rules %+v", rules)
	}
}

// A custom child whose kind is literal is protected by its group (its
// plural is not known offline), labelled objects only.
func TestDeletionProtectionOfCustomChildren(t *testing.T) {
	dir := t.TempDir()
	crd, err := os.ReadFile(filepath.Join("testdata", "crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), crd, 0o644); err != nil {
		t.Fatal(err)
	}
	k := `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: apps}
security:
  deletionProtection: {enabled: true}
spec:
  crds:
    platform:
      crdFile: ./crd.yaml
      operatorBox:
        onReconcile:
          custom:
            - apiVersion: argoproj.io/v1alpha1
              kind: Application
              name: "${self.metadata.name}"
`
	if err := os.WriteFile(filepath.Join(dir, "katalog.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, o := range admission.Policies(compile(t, dir)) {
		p, ok := o.(*admissionv1.ValidatingAdmissionPolicy)
		if !ok || p.Name != "orkestra-apps-deletion-protection-objects" {
			continue
		}
		var got []string
		for _, r := range p.Spec.MatchConstraints.ResourceRules {
			got = append(got, r.APIGroups[0]+"/"+strings.Join(r.Resources, ","))
		}
		if strings.Join(got, " ") != "admission.example.io/platforms argoproj.io/*" {
			t.Fatalf("rules %v", got)
		}
		return
	}
	t.Fatal("no deletion protection of labelled objects")
}

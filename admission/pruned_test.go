package admission_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/admission"
	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/gotmpl"
	"github.com/orkspace/orkestra-cel/envassets/envtesting"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/lifecycle/crdspec"
	"github.com/orkspace/orkestra-cel/operator"
)

// A structured rule on a field the CRD's schema does not declare
// (upstream's examples/use-cases/external/01-health-gate: spec.healthCheckUrl
// on a CRD without it). The API server prunes the field from every object
// before admission, so the rule always reads it absent — upstream's webhook
// and reconcile-time check (pkg/types/validation_eval.go) saw the pruned
// object too and denied every object. Here: a warning at load, and the rule
// denies (or warns on) every object in the API server as it did; a rule that
// always holds is left out; a misspelt field stays an error (TestRuleErrors).
func TestRuleOnAPrunedField(t *testing.T) {
	dir := t.TempDir()
	crd := strings.Replace(mustRead(t, "testdata/crd.yaml"), "                rateLimit: {type: integer}\n", "                rateLimit: {type: integer}\n                tags: {type: object, additionalProperties: {type: string}}\n", 1)
	_ = os.WriteFile(filepath.Join(dir, "crd.yaml"), []byte(crd), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "katalog.yaml"), []byte(`apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: p}
spec:
  crds:
    platform:
      crdFile: ./crd.yaml
      validation:
        rules:
          - field: spec.healthCheckUrl
            operator: exists
            message: spec.healthCheckUrl is required
            action: deny
          - field: spec.debugMode
            operator: notExists
            message: no debug mode
          - field: spec.tier
            equals: gold
            message: only gold
            action: warn
          - field: spec.tags.team
            operator: exists
            message: a team tag is required
`), 0o644)
	k, diags := katalog.Load(filepath.Join(dir, "katalog.yaml"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	c, _ := cel.New(cel.Options{})
	plan, cdiags := engine.Compile(k, engine.Backends{CEL: c, Legacy: gotmpl.New(c)}, engine.CompileOptions{})
	if cdiags.HasErrors() {
		t.Fatal(cdiags.Errors())
	}
	var warns []string
	for _, d := range cdiags.Warnings() {
		warns = append(warns, strings.ReplaceAll(d.Error(), dir+string(filepath.Separator), ""))
	}
	pruned := func(f string) string {
		return f + " is not in the schema of v1, so the API server prunes it from every object before this rule runs, and the rule always sees " + f + " absent: "
	}
	fix := "; declare the field in the CRD's schema (or x-kubernetes-preserve-unknown-fields: true above it)"
	want := []string{
		"katalog.yaml:10:20: warning: [platform] validation.rules[0].field: " + pruned("spec.healthCheckUrl") + "it denies every object, as it did upstream (whose webhook and reconciler saw the pruned object too)" + fix,
		"katalog.yaml:14:20: warning: [platform] validation.rules[1].field: " + pruned("spec.debugMode") + "it never fails, so it is left out" + fix,
		"katalog.yaml:17:20: warning: [platform] validation.rules[2].field: " + pruned("spec.tier") + "it warns on every object, as it did upstream (whose webhook and reconciler saw the pruned object too)" + fix,
	}
	if strings.Join(warns, "\n") != strings.Join(want, "\n") {
		t.Fatalf("warnings\n  %s\nwant\n  %s", strings.Join(warns, "\n  "), strings.Join(want, "\n  "))
	}
	rules := admission.CRDRules(plan, plan.Entries[0].Source.CRD, "v1")
	// A key of a map is no pruned field: any key may be there.
	if len(rules) != 2 || rules[0].Rule != "false" || rules[0].FieldPath != "" || rules[0].Message != "spec.healthCheckUrl is required" ||
		rules[1].Rule != `!(self.?spec.?tags[?'team'].orValue('') in ['', '<no value>'])` || rules[1].FieldPath != ".spec.tags.team" {
		t.Fatalf("CRD rules %+v, want the rule false without a fieldPath (the field has none in the schema), then the map key's rule", rules)
	}
	var warnPolicy *admissionv1.ValidatingAdmissionPolicy
	for _, o := range admission.Policies(plan) {
		if p, ok := o.(*admissionv1.ValidatingAdmissionPolicy); ok && strings.HasSuffix(p.Name, "-warn") {
			warnPolicy = p
		}
	}
	if warnPolicy == nil || len(warnPolicy.Spec.Validations) != 1 || warnPolicy.Spec.Validations[0].Expression != "false" {
		t.Fatalf("warn policy %+v, want one validation false", warnPolicy)
	}

	// In a real API server: an object carrying the field is pruned, then
	// denied with the rule's message.
	cfg := envtesting.Start(t)
	scheme := operator.Scheme()
	_ = apiextensionsv1.AddToScheme(scheme)
	cl, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	src := plan.Entries[0].Source.CRD
	spec, _ := crdspec.Spec(plan, src, apiextensionsv1.WebhookClientConfig{})
	if err := cl.Create(ctx, &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: src.Object.Name}, Spec: spec}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		err = cl.Create(ctx, platform("default", "p", map[string]any{"image": "registry.internal/app", "healthCheckUrl": "https://health.example.com"}))
		if err != nil && strings.Contains(err.Error(), "spec.healthCheckUrl is required") {
			break
		}
		if err == nil {
			t.Fatal("an object was admitted; the rule on the pruned field must deny every object")
		}
		if time.Now().After(deadline) {
			t.Fatalf("create: %v, want the rule's denial", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// identityPlan compiles a katalog over testdata/identity/crd.yaml (v1 and
// v2 with one schema) whose conversion is paths; crd, when set, replaces
// the CRD manifest.
func identityPlan(t *testing.T, paths, crd string) *engine.Plan {
	t.Helper()
	dir := t.TempDir()
	if crd == "" {
		b, err := os.ReadFile("testdata/identity/crd.yaml")
		if err != nil {
			t.Fatal(err)
		}
		crd = string(b)
	}
	if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), []byte(crd), 0o644); err != nil {
		t.Fatal(err)
	}
	k := `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
spec:
  crds:
    twin:
      crdFile: ./crd.yaml
      apiTypes: {group: test.orkestra.io, version: v1, kind: Twin}
      conversion:
        storageVersion: v1
        paths:
` + paths
	p := filepath.Join(dir, "k.yaml")
	if err := os.WriteFile(p, []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	kat, diags := katalog.Load(p)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	plan, cdiags := engine.Compile(kat, backends(t), engine.CompileOptions{})
	if cdiags.HasErrors() {
		t.Fatal(cdiags)
	}
	return plan
}

func TestIdentityConversion(t *testing.T) {
	both := func(spec string) string {
		return "          - from: v1\n            to: v2\n" + spec + "          - from: v2\n            to: v1\n" + spec
	}
	copySpec := "            spec:\n              image: \"${self.spec.image}\"\n              size: \"${self.spec.size}\"\n              tls: {secret: \"${self.spec.tls.secret}\"}\n"
	cases := []struct {
		name, paths, crd string
		want             bool
	}{
		{"paths that map nothing", both(""), "", true},
		{"every field copied to its place", both(copySpec), "", true},
		{"a whole object copied", both("            spec:\n              image: \"${self.spec.image}\"\n              size: \"${self.spec.size}\"\n              tls: \"${self.spec.tls}\"\n"), "", true},
		{"spec copied whole, status too", both("            spec: \"${self.spec}\"\n            status: \"${self.status}\"\n"), "", true},
		{"a field left out (the spec is replaced)", both("            spec:\n              image: \"${self.spec.image}\"\n              size: \"${self.spec.size}\"\n"), "", false},
		{"a literal", both("            spec:\n              image: nginx\n              size: \"${self.spec.size}\"\n              tls: \"${self.spec.tls}\"\n"), "", false},
		{"a field copied elsewhere", both("            spec:\n              image: \"${self.spec.tls.secret}\"\n              size: \"${self.spec.size}\"\n              tls: {secret: \"${self.spec.image}\"}\n"), "", false},
		{"a computed value", both("            spec:\n              image: \"${self.spec.image.lowerAscii()}\"\n              size: \"${self.spec.size}\"\n              tls: \"${self.spec.tls}\"\n"), "", false},
		{"a legacy template copy (rendered as a string)", both("            spec:\n              image: \"{{ .spec.image }}\"\n              size: \"${self.spec.size}\"\n              tls: \"${self.spec.tls}\"\n"), "", false},
		{"labels set", both("            metadata:\n              labels: {converted: \"true\"}\n"), "", false},
		{"schemas differ", both(""), strings.Replace(mustRead(t, "testdata/identity/crd.yaml"), "      schema:\n        openAPIV3Schema: *schema\n", "      schema:\n        openAPIV3Schema:\n          type: object\n          x-kubernetes-preserve-unknown-fields: true\n", 1), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan := identityPlan(t, tc.paths, tc.crd)
			gk := schema.GroupKind{Group: "test.orkestra.io", Kind: "Twin"}
			if got := plan.Conversions[gk].Identity; got != tc.want {
				t.Errorf("Identity = %v, want %v", got, tc.want)
			}
			if got := plan.ConvertsByWebhook(gk); got == tc.want {
				t.Errorf("ConvertsByWebhook = %v, want %v", got, !tc.want)
			}
		})
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

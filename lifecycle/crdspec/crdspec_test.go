package crdspec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	celgo "github.com/google/cel-go/cel"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/orkspace/orkestra-cel/engine"
	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/gotmpl"
	"github.com/orkspace/orkestra-cel/katalog"
)

func plan(t *testing.T, path string) *engine.Plan {
	t.Helper()
	k, diags := katalog.Load(path)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cel, err := celengine.New(celengine.Options{Libraries: []celgo.EnvOption{gotmpl.CELLibrary()}})
	if err != nil {
		t.Fatal(err)
	}
	p, cdiags := engine.Compile(k, engine.Backends{CEL: cel, Legacy: gotmpl.New(cel)}, engine.CompileOptions{})
	if cdiags.HasErrors() {
		t.Fatal(cdiags)
	}
	return p
}

var url = "https://127.0.0.1:9443/convert"

func TestWebhookWhereTheConversionComputes(t *testing.T) {
	// The website example converts v1alpha1 and v1, whose schemas differ.
	p := plan(t, "../../examples/website/katalog.yaml")
	crd := p.Entries[0].Source.CRD
	spec, strategy := Spec(p, crd, apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: []byte("ca")})
	if strategy != Webhook || strategy.String() != "Webhook" {
		t.Fatalf("strategy %v, want Webhook", strategy)
	}
	c := spec.Conversion
	if c == nil || c.Strategy != apiextensionsv1.WebhookConverter || *c.Webhook.ClientConfig.URL != url || string(c.Webhook.ClientConfig.CABundle) != "ca" ||
		strings.Join(c.Webhook.ConversionReviewVersions, ",") != "v1,v1beta1" {
		t.Fatalf("conversion %+v", c)
	}
	if crd.Object.Spec.Conversion != nil {
		t.Errorf("the loaded manifest was changed: %+v", crd.Object.Spec.Conversion)
	}
}

func TestNoneWhereTheConversionIsTheIdentity(t *testing.T) {
	dir := t.TempDir()
	crd, err := os.ReadFile("../../engine/testdata/identity/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), crd, 0o644); err != nil {
		t.Fatal(err)
	}
	k := `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
spec:
  crds:
    twin-v1:
      crdFile: ./crd.yaml
      apiTypes: {group: test.orkestra.io, version: v1, kind: Twin}
      conversion:
        storageVersion: v1
        paths:
          - {from: v1, to: v2, spec: "${self.spec}"}
          - {from: v2, to: v1, spec: "${self.spec}"}
    twin-v2:
      crdFile: ./crd.yaml
      apiTypes: {group: test.orkestra.io, version: v2, kind: Twin}
      deprecated: true
      deprecationWarning: test.orkestra.io/v2 Twin is deprecated
`
	if err := os.WriteFile(filepath.Join(dir, "k.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	p := plan(t, filepath.Join(dir, "k.yaml"))
	spec, strategy := Spec(p, p.Entries[0].Source.CRD, apiextensionsv1.WebhookClientConfig{URL: &url})
	if strategy != Identity || strategy.String() != "None (identity conversion)" {
		t.Fatalf("strategy %v, want Identity", strategy)
	}
	if spec.Conversion == nil || spec.Conversion.Strategy != apiextensionsv1.NoneConverter || spec.Conversion.Webhook != nil {
		t.Fatalf("conversion %+v, want strategy None without a webhook", spec.Conversion)
	}
	for _, v := range spec.Versions {
		dep := v.Name == "v2"
		if v.Deprecated != dep || (v.DeprecationWarning != nil) != dep {
			t.Errorf("%s: deprecated %v, warning %v", v.Name, v.Deprecated, v.DeprecationWarning)
		}
		if dep && *v.DeprecationWarning != "test.orkestra.io/v2 Twin is deprecated" {
			t.Errorf("v2 warning %q", *v.DeprecationWarning)
		}
	}
	want := "CRD twins.test.orkestra.io: every version has the same schema and every conversion path only copies fields, so it is installed with conversion.strategy: None (the API server rewrites apiVersion itself and never calls the webhook)"
	if got := IdentityNote("twins.test.orkestra.io"); got != want {
		t.Errorf("note %q", got)
	}
}

package katalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad loads arbitrary katalog text next to a valid CRD. Whatever the
// input, loading returns (no panic, no hang: aliases and sizes are bounded)
// and every error carries a message and the file it is about.
func FuzzLoad(f *testing.F) {
	f.Add(header + entry)
	f.Add(aliasBomb())
	f.Add(header + entry + "      operatorBox:\n        onCreate:\n          configMaps:\n            - name: a\n              data: &d {k: \"${self.spec.image}\"}\n            - name: b\n              data: *d\n")
	f.Add("apiVersion: orkestra.konductor.io/v1Alpha\nkind: Katalog\nspec:\n  crds:\n    - name: a\n      crdFile: ./crd.yaml\n      apiTypes: {group: demo.orkestra.io, version: v1, kind: Website}\n      reconciler:\n        onCreate:\n          deployments:\n            - image: '{{ .spec.image }}'\n")
	f.Add("apiVersion: orkestra.orkspace.io/v1\nkind: Komposer\nimports:\n  files: [./katalog.yaml]\n")
	f.Add(header + entry + "      crFiles: [./crd.yaml, /etc/passwd, ../x]\n      conversion:\n        storageVersion: v1\n        paths: [{from: v1alpha1, to: v1, spec: {image: '${self.spec.image}'}}]\n")
	f.Add("- [a, {b: *c}]\n&x y: <<: *x\n")
	crd, err := os.ReadFile("testdata/website-crd.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), crd, 0o644); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "katalog.yaml")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		k, diags := Load(p)
		if k == nil {
			t.Fatal("Load returned no katalog")
		}
		for _, d := range diags {
			if strings.TrimSpace(d.Message) == "" || d.Pos.File == "" {
				t.Fatalf("a diagnostic without message or file: %#v", d)
			}
		}
	})
}

// FuzzReadCRD parses arbitrary CRD manifests as crdFile and --crd do: an
// error or CRDs with a storage version, never a panic.
func FuzzReadCRD(f *testing.F) {
	crd, err := os.ReadFile("testdata/website-crd.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(crd)
	f.Add([]byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.b}\nspec:\n  versions:\n    - name: v1\n      served: true\n      storage: true\n      schema:\n        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}\n"))
	f.Add([]byte("---\n---\nkind: ConfigMap\n"))
	f.Add([]byte("kind: CustomResourceDefinition\nspec: {versions: [{name: v1, schema: {openAPIV3Schema: {type: array}}}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "crd.yaml")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		found, err := ReadCRDs(p)
		if err != nil {
			return
		}
		for _, obj := range found {
			c, err := newCRD(p, obj)
			if err != nil {
				continue
			}
			if c.StorageVersion == "" {
				t.Fatalf("CRD %s loaded without a storage version", obj.Name)
			}
		}
	})
}

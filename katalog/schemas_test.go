package katalog

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Upstream entries may leave out crdFile (upstream reads the schema from the
// cluster, or runs untyped) and leave apiTypes partial or out (derived from
// the CRD; built-in kinds take their group and version from Kubernetes).
// Learned from iAlexeze/orkestra examples/intermediate/06-komposer-basic
// (apiTypes: {kind: Namespace}) and examples/beginner/01-hello-website (no
// apiTypes beside crdFile).
func TestSchemaSources(t *testing.T) {
	untypedEntry := "spec:\n  crds:\n    app:\n      apiTypes: {group: demo.example.io, version: v1, kind: App}\n"
	t.Run("no crdFile: untyped, one warning", func(t *testing.T) {
		dir := writeFiles(t, map[string]string{"katalog.yaml": header2 + untypedEntry + "      operatorBox:\n        status:\n          fields:\n            - path: phase\n              value: Ready\n"})
		k, diags := Load(filepath.Join(dir, "katalog.yaml"))
		if diags.HasErrors() {
			t.Fatal(diagLines(dir, diags))
		}
		want := "katalog.yaml:5:5: warning: [app] no schema for App.demo.example.io: the entry has no crdFile and no CRD was given (--crd) or read from a cluster (--kubeconfig), so its expressions are not type-checked and their cost is not bounded at load; add crdFile: ./crd.yaml, or pass --crd or --kubeconfig to restore typing"
		if got := diagLines(dir, diags); got != want {
			t.Fatalf("want exactly one warning\n  %s\ngot\n  %s", want, got)
		}
		crd := k.CRDs[0].CRD
		if crd.Origin != Untyped || crd.Typed() || crd.Installable() {
			t.Fatalf("origin %v", crd.Origin)
		}
		if crd.Object.Name != "apps.demo.example.io" || crd.StorageVersion != "v1" || !crd.Schemas["v1"].XPreserveUnknownFields {
			t.Fatalf("stand-in CRD: name %s storage %s", crd.Object.Name, crd.StorageVersion)
		}
		if k.CRDs[0].APITypes.Plural != "apps" {
			t.Fatalf("plural %q", k.CRDs[0].APITypes.Plural)
		}
	})
	t.Run("crdFile without apiTypes", func(t *testing.T) {
		e := loadOne(t, "spec:\n  crds:\n    site:\n      crdFile: ./crd.yaml\n      apiTypes: {version: v1alpha1}\n")
		at := e.APITypes
		if at.Group != "demo.orkestra.io" || at.Kind != "Website" || at.Plural != "websites" || at.Version != "v1alpha1" {
			t.Fatalf("derived apiTypes %+v", at)
		}
	})
	t.Run("--crd supplies the schema", func(t *testing.T) {
		dir := writeFiles(t, map[string]string{"katalog.yaml": header2 + "spec:\n  crds:\n    site:\n      apiTypes: {kind: Website, version: v1}\n"})
		k, diags := LoadWith(Options{CRDs: []string{filepath.Join(dir, "crd.yaml")}}, filepath.Join(dir, "katalog.yaml"))
		if len(diags) > 0 {
			t.Fatal(diagLines(dir, diags))
		}
		if crd := k.CRDs[0].CRD; crd.Origin != FromFlag || !crd.Typed() || k.CRDs[0].APITypes.Group != "demo.orkestra.io" {
			t.Fatalf("origin %v group %q", crd.Origin, k.CRDs[0].APITypes.Group)
		}
	})
	t.Run("the cluster supplies the schema", func(t *testing.T) {
		dir := writeFiles(t, map[string]string{"katalog.yaml": header2 + untypedEntry})
		var asked []schema.GroupKind
		fetch := func(gk schema.GroupKind) (*apiextensionsv1.CustomResourceDefinition, error) {
			asked = append(asked, gk)
			return untypedCRD(gk, "apps", true, []string{"v1"}, "v1"), nil
		}
		k, diags := LoadWith(Options{Fetch: fetch}, filepath.Join(dir, "katalog.yaml"))
		if len(diags) > 0 {
			t.Fatal(diagLines(dir, diags))
		}
		if k.CRDs[0].CRD.Origin != FromCluster || len(asked) != 1 || asked[0].String() != "App.demo.example.io" {
			t.Fatalf("origin %v asked %v", k.CRDs[0].CRD.Origin, asked)
		}
	})
	errCases := []struct {
		name, body string
		fetch      func(schema.GroupKind) (*apiextensionsv1.CustomResourceDefinition, error)
		want       string
	}{
		{"not in the cluster", untypedEntry, func(schema.GroupKind) (*apiextensionsv1.CustomResourceDefinition, error) {
			return nil, ErrCRDNotFound
		}, "katalog.yaml:6:61: [app] apiTypes: the cluster has no CRD for kind App in group demo.example.io; apply it first, or add crdFile so that orkestra dev and manifests install it"},
		{"cluster unreachable", untypedEntry, func(schema.GroupKind) (*apiextensionsv1.CustomResourceDefinition, error) {
			return nil, errors.New("connection refused")
		}, "katalog.yaml:6:61: [app] apiTypes: reading the CRD of App.demo.example.io from the cluster: connection refused"},
		{"version ambiguous", "spec:\n  crds:\n    site:\n      crdFile: ./crd.yaml\n", nil,
			"katalog.yaml:5:5: [site] apiTypes.version: apiTypes.version is missing and the CRD websites.demo.orkestra.io serves several versions (v1alpha1, v1); add version: with one of them"},
		{"untyped without version", "spec:\n  crds:\n    app:\n      apiTypes: {group: demo.example.io, kind: App}\n", nil,
			"katalog.yaml:6:17: [app] apiTypes.version: apiTypes.version is missing and no CRD defines it: add crdFile: ./crd.yaml, or write apiTypes.version"},
		{"untyped versions without storage", "spec:\n  crds:\n    a1:\n      apiTypes: {group: demo.example.io, version: v1, kind: App}\n    a2:\n      apiTypes: {group: demo.example.io, version: v2, kind: App}\n", nil,
			"katalog.yaml:5:5: [a1] entries serve App at v1, v2, but without its CRD nothing says which version is stored; add crdFile: ./crd.yaml, or conversion.storageVersion"},
		{"scope contradicts the CRD", "spec:\n  crds:\n    site:\n      crdFile: ./crd.yaml\n      namespaced: false\n      apiTypes: {version: v1}\n", nil,
			"katalog.yaml:5:5: [site] namespaced: namespaced: false contradicts the scope Namespaced of "},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"katalog.yaml": header2 + tc.body})
			_, diags := LoadWith(Options{Fetch: tc.fetch}, filepath.Join(dir, "katalog.yaml"))
			if got := diagLines(dir, diags.Errors()); !strings.HasPrefix(got, tc.want) {
				t.Fatalf("want\n  %s\ngot\n  %s", tc.want, got)
			}
		})
	}
	t.Run("untyped versions with conversion", func(t *testing.T) {
		dir := writeFiles(t, map[string]string{"katalog.yaml": header2 + "spec:\n  crds:\n    a1:\n      apiTypes: {group: demo.example.io, version: v1, kind: App}\n      conversion:\n        storageVersion: v2\n        paths:\n          - {from: v1, to: v2}\n          - {from: v2, to: v1}\n    a2:\n      apiTypes: {group: demo.example.io, version: v2, kind: App}\n"})
		k, diags := Load(filepath.Join(dir, "katalog.yaml"))
		if diags.HasErrors() {
			t.Fatal(diagLines(dir, diags))
		}
		if len(diags.Warnings()) != 2 {
			t.Fatalf("want one warning per entry, got\n%s", diagLines(dir, diags))
		}
		crd := k.CRDs[0].CRD
		if crd != k.CRDs[1].CRD || crd.StorageVersion != "v2" || strings.Join(crd.Served, ",") != "v1,v2" {
			t.Fatalf("shared stand-in: storage %s served %v", crd.StorageVersion, crd.Served)
		}
	})
	// The entries of the other versions say `conversion: {participant:
	// true}` (iAlexeze/orkestra examples/use-cases/crd-conversion/
	// with-webhooks): not a second conversion block, and it does not hide
	// the storage version the first one names.
	t.Run("participant entries", func(t *testing.T) {
		dir := writeFiles(t, map[string]string{"katalog.yaml": header2 + "spec:\n  crds:\n    a2:\n      apiTypes: {group: demo.example.io, version: v2, kind: App}\n      conversion:\n        storageVersion: v1\n        paths:\n          - {from: v1, to: v2}\n          - {from: v2, to: v1}\n    a1:\n      apiTypes: {group: demo.example.io, version: v1, kind: App}\n      conversion:\n        participant: true\n"})
		k, diags := Load(filepath.Join(dir, "katalog.yaml"))
		if diags.HasErrors() {
			t.Fatal(diagLines(dir, diags))
		}
		if crd := k.CRDs[0].CRD; crd.StorageVersion != "v1" || k.CRDs[1].Conversion != nil || len(k.CRDs[0].Conversion.Paths) != 2 {
			t.Fatalf("storage %s, participant conversion %+v", crd.StorageVersion, k.CRDs[1].Conversion)
		}
	})
	t.Run("built-in kind as primary", func(t *testing.T) {
		dir := writeFiles(t, map[string]string{"katalog.yaml": header2 + "spec:\n  crds:\n    ns:\n      apiTypes: {kind: Namespace}\n"})
		k, diags := Load(filepath.Join(dir, "katalog.yaml"))
		if len(diags) > 0 {
			t.Fatal(diagLines(dir, diags))
		}
		e := k.CRDs[0]
		if e.CRD.Origin != BuiltIn || e.APITypes.Group != "" || e.APITypes.Version != "v1" || e.APITypes.Plural != "namespaces" || e.CRD.Object.Spec.Scope != apiextensionsv1.ClusterScoped {
			t.Fatalf("built-in: %+v scope %s", e.APITypes, e.CRD.Object.Spec.Scope)
		}
	})
}

const header2 = "apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\n"

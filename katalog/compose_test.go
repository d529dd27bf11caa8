package katalog

import (
	"path/filepath"
	"strings"
	"testing"
)

// A Komposer composes katalog files; its own spec.crds override the imported
// entries by name, key by key. Learned from iAlexeze/orkestra
// docs/concepts/komposer.md and examples/intermediate/06-komposer-basic.
func TestKomposer(t *testing.T) {
	base := `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: base}
spec:
  crds:
    website:
      crdFile: ../crd.yaml
      apiTypes: {version: v1}
      workers: 2
      resync: 30s
      operatorBox:
        onCreate:
          configMaps:
            - data: {a: "{{ .spec.image }}"}
`
	other := `
apiVersion: orkestra.konductor.io/v1Alpha
kind: Katalog
spec:
  crds:
    - name: old
      crdFile: ../crd.yaml
      apiTypes: {version: v1alpha1}
`
	komposer := `
apiVersion: orkestra.orkspace.io/v1
kind: Komposer
metadata: {name: platform}
imports:
  files:
    - ./base/website.yaml
    - ./base/old.yaml
spec:
  crds:
    - name: website
      workers: 4
`
	dir := writeFiles(t, map[string]string{"komposer.yaml": komposer, "base/website.yaml": base, "base/old.yaml": other})
	k, diags := Load(filepath.Join(dir, "komposer.yaml"))
	if len(diags) > 0 {
		t.Fatal(diagLines(dir, diags))
	}
	if k.Name != "platform" || len(k.CRDs) != 2 {
		t.Fatalf("name %q, %d entries", k.Name, len(k.CRDs))
	}
	var web *CRDEntry
	for _, e := range k.CRDs {
		if e.Name == "website" {
			web = e
		}
	}
	if web == nil || web.Workers != 4 || web.Resync.String() != "30s" {
		t.Fatalf("override: %+v", web)
	}
	// An inherited value keeps the position in the file it came from; the
	// override's in the Komposer.
	cm := web.Box.Hooks[OnCreate].Resources[0]
	if got := strings.TrimPrefix(cm.Pos.String(), dir+"/"); got != "base/website.yaml:14:15" {
		t.Fatalf("inherited resource at %s", got)
	}
	if got := strings.TrimPrefix(web.WorkersPos.String(), dir+"/"); got != "komposer.yaml:11:16" {
		t.Fatalf("override at %s", got)
	}
	if web.CRD == nil || web.CRD.Path != filepath.Join(dir, "crd.yaml") {
		t.Fatalf("crdFile relative to the file naming it: %v", web.CRD)
	}
}

func TestKomposerErrors(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"missing import", map[string]string{"k.yaml": "apiVersion: orkestra.orkspace.io/v1\nkind: Komposer\nimports:\n  files:\n    - ./nope.yaml\n"},
			"k.yaml:5:7: nope.yaml not found (paths are relative to the file that names them)"},
		{"import cycle", map[string]string{
			"k.yaml": "apiVersion: orkestra.orkspace.io/v1\nkind: Komposer\nimports:\n  files:\n    - ./b.yaml\n",
			"b.yaml": "apiVersion: orkestra.orkspace.io/v1\nkind: Komposer\nimports:\n  files:\n    - ./b.yaml\n"},
			"b.yaml:5:7: imports.files[0]: import cycle: "},
		{"both imports and sources", map[string]string{"k.yaml": "apiVersion: orkestra.orkspace.io/v1\nkind: Komposer\nimports: {files: []}\nsources: {files: []}\n"},
			"k.yaml:4:1: sources: both imports and its older name sources are set; keep imports"},
		{"motif with inputs", map[string]string{
			"k.yaml": header2 + "spec:\n  crds:\n    site:\n      crdFile: ./crd.yaml\n      apiTypes: {version: v1}\n      operatorBox:\n        imports:\n          - motif: ./m.yaml\n",
			"m.yaml": "apiVersion: orkestra.orkspace.io/v1\nkind: Motif\ninputs:\n  - {name: replicas, required: true}\nresources: {}\n"},
			"k.yaml:10:13: [site] operatorBox.imports[0]: the motif m.yaml requires input \"replicas\"; bind it with with: {replicas: …}"},
		// iAlexeze/orkestra examples/registry-guide imports motifs from an
		// OCI registry.
		{"remote motif", map[string]string{
			"k.yaml": header2 + "spec:\n  crds:\n    site:\n      crdFile: ./crd.yaml\n      apiTypes: {version: v1}\n      operatorBox:\n        imports:\n          - motif: oci://ghcr.io/acme/motifs/web:v1\n"},
			"k.yaml:10:20: [site] operatorBox.imports[0].motif: remote motifs (oci://) are not fetched by this runtime, which reads local files only; vendor the motif into your repository and import it by path"},
		{"not a motif", map[string]string{
			"k.yaml": header2 + "spec:\n  crds:\n    site:\n      crdFile: ./crd.yaml\n      apiTypes: {version: v1}\n      operatorBox:\n        imports:\n          - motif: ./m.yaml\n",
			"m.yaml": "apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\n"},
			`m.yaml:2:7: [site] kind: an imported motif must be kind: Motif, got "Katalog"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, tc.files)
			_, diags := Load(filepath.Join(dir, "k.yaml"))
			got := diagLines(dir, diags.Errors())
			if !strings.HasPrefix(got, tc.want) {
				t.Fatalf("want\n  %s\ngot\n  %s", tc.want, got)
			}
		})
	}
}

// Motifs (kind: Motif) add their resources to the importing entry's
// onReconcile, keeping their own positions (orkspace/orkestra
// examples/intermediate/08-state-machine/motif-katalog.yaml).
func TestMotifImports(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"katalog.yaml":     header2 + "spec:\n  crds:\n    site:\n      crdFile: ./crd.yaml\n      apiTypes: {version: v1}\n      operatorBox:\n        onReconcile:\n          services:\n            - port: 80\n        reconcile:\n          imports:\n            - motif: ./motifs/jobs.yaml\n",
		"motifs/jobs.yaml": "apiVersion: orkestra.orkspace.io/v1\nkind: Motif\ninputs: []\nresources:\n  jobs:\n    - image: busybox\n",
	})
	k, diags := Load(filepath.Join(dir, "katalog.yaml"))
	if len(diags) > 0 {
		t.Fatal(diagLines(dir, diags))
	}
	rs := k.CRDs[0].Box.Hooks[OnReconcile].Resources
	if len(rs) != 2 || rs[0].Kind != "services" || rs[1].Kind != "jobs" {
		t.Fatalf("resources %v", rs)
	}
	if got := strings.TrimPrefix(rs[1].Pos.String(), dir+"/"); got != "motifs/jobs.yaml:6:7" {
		t.Fatalf("motif resource at %s", got)
	}
}

// An override that fixes what the imported entry gets wrong leaves no
// trace of the imported entry's problems, and a problem it keeps is
// reported once.
func TestKomposerOverrideReplacesDiagnostics(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"base.yaml": header2 + "spec:\n  crds:\n    site:\n      crdFile: ./crd.yaml\n      apiTypes: {version: v9}\n      workers: 0\n",
		"k.yaml":    "apiVersion: orkestra.orkspace.io/v1\nkind: Komposer\nimports:\n  files: [./base.yaml]\nspec:\n  crds:\n    site:\n      apiTypes: {version: v1}\n",
	})
	_, diags := Load(filepath.Join(dir, "k.yaml"))
	want := "base.yaml:8:16: [site] workers: workers must be at least 1, got 0"
	if got := diagLines(dir, diags); got != want {
		t.Fatalf("want only\n  %s\ngot\n  %s", want, got)
	}
}

// A Komposer's own notes override imported notes of the same name; the
// imported file's other notes stay (iAlexeze/orkestra
// examples/intermediate/09-notes/04-komposer). Two notes of one name in one
// file stay an error.
func TestKomposerNotesOverride(t *testing.T) {
	note := func(name, expr string) string {
		return "  - name: " + name + "\n    expression: \"" + expr + "\"\n"
	}
	dir := writeFiles(t, map[string]string{
		"base.yaml":     header2 + "notes:\n" + note("host", "{{ .metadata.name }}.svc") + note("team", "web") + "spec:\n  crds:\n    site:\n      crdFile: ./crd.yaml\n      apiTypes: {version: v1}\n",
		"komposer.yaml": "apiVersion: orkestra.orkspace.io/v1\nkind: Komposer\nimports:\n  files: [./base.yaml]\nnotes:\n" + note("host", "{{ .metadata.name }}.svc.prod"),
		"twice.yaml":    header2 + "notes:\n" + note("host", "a") + note("host", "b") + "spec:\n  crds:\n    site:\n      crdFile: ./crd.yaml\n      apiTypes: {version: v1}\n",
	})
	k, diags := Load(filepath.Join(dir, "komposer.yaml"))
	if diags.HasErrors() {
		t.Fatal(diagLines(dir, diags))
	}
	got := map[string]string{}
	for _, n := range k.Notes {
		got[n.Name] = n.Expression.Str
	}
	if len(got) != 2 || got["host"] != "{{ .metadata.name }}.svc.prod" || got["team"] != "web" {
		t.Fatalf("notes %v", got)
	}
	_, diags = Load(filepath.Join(dir, "twice.yaml"))
	if want := "twice.yaml:6:11: notes[1].name: a second note named host; the first is at "; !strings.HasPrefix(diagLines(dir, diags.Errors()), want) {
		t.Fatalf("want %s…, got\n%s", want, diagLines(dir, diags.Errors()))
	}
}

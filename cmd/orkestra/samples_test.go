package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A crFiles entry naming no file: upstream's `ork validate` never read
// crFiles (orkspace/orkestra pkg/types/types_crd_entry.go: "Dev mode only";
// pkg/katalog/validate/execute.go has no step for them), and several of its
// published examples name a cr.yaml they do not ship. So check, render and
// manifests warn and go on; the commands that read every sample — dev
// applies them, conformance and migrate prove over them — refuse the
// katalog, before anything starts.
func TestMissingSampleWarnsWhereUnreadAndFailsWhereRead(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"crd.yaml", "website-v1.yaml"} {
		b, err := os.ReadFile(filepath.Join("../../examples/website", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	k := filepath.Join(dir, "katalog.yaml")
	if err := os.WriteFile(k, []byte(`apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: site}
spec:
  crds:
    site:
      crdFile: ./crd.yaml
      crFiles: [./website-v1.yaml, ./missing.yaml]
      apiTypes: {group: demo.orkestra.io, version: v1, kind: Website}
      operatorBox:
        onReconcile:
          configMaps:
            - name: "{{ .metadata.name }}"
              data: {image: "{{ .spec.image }}"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	at := k + ":8:36: [site] crFiles[1]: sample object file ./missing.yaml not found (paths are relative to the katalog's directory); "
	warning := k + ":8:36: warning: [site] crFiles[1]: sample object file ./missing.yaml not found (paths are relative to the katalog's directory); nothing here reads it, but orkestra dev (which applies it), conformance and migrate (which prove over it) refuse the katalog until it exists or leaves crFiles\n"

	_, stderr, code := run(t, "", "check", "-f", k)
	if code != 0 || !strings.Contains(stderr, warning) {
		t.Errorf("check: exit %d, stderr %q\nwant exit 0 and %q", code, stderr, warning)
	}
	out, stderr, code := run(t, "", "render", "-f", k, filepath.Join(dir, "website-v1.yaml"))
	if code != 0 || !strings.Contains(stderr, warning) || !strings.Contains(out, "kind: ConfigMap") {
		t.Errorf("render: exit %d, stderr %q, stdout:\n%s\nwant exit 0, the warning and the ConfigMap", code, stderr, out)
	}
	out, stderr, code = run(t, "", "manifests", "-f", k)
	if code != 0 || !strings.Contains(stderr, warning) || strings.Contains(out, "\n  missing.yaml: |") || !strings.Contains(out, "\n  website-v1.yaml: |") {
		t.Errorf("manifests: exit %d, stderr %q\nwant exit 0, the warning, the present sample shipped and the missing one not", code, stderr)
	}

	for _, c := range []struct {
		args []string
		why  string
	}{
		{[]string{"dev", "-f", k, "--assets", t.TempDir()}, "orkestra dev applies every crFiles entry"},
		{[]string{"conformance", "-f", k}, "conformance round-trips every crFiles entry"},
		{[]string{"migrate", "-f", k}, "migrate proves its rewrites over every crFiles entry"},
	} {
		stdout, stderr, code := run(t, "", c.args...)
		want := at + c.why + ": create it or remove it from crFiles"
		if code == 0 || !strings.Contains(stdout+stderr, want) {
			t.Errorf("%s: exit %d, stderr %q\nwant a failure with %q", c.args[0], code, stderr, want)
		}
	}
}

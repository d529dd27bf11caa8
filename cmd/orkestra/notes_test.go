package main

import (
	"strings"
	"testing"
)

// notes: (user-defined template functions) load from the katalog's top level
// and from motifs it imports under spec.imports, and templates call them by
// name (iAlexeze/orkestra examples/intermediate/09-notes/02-user-defined and
// 03-motifs).
func TestNotesFromKatalogAndMotif(t *testing.T) {
	_, write := websiteDir(t)
	write("motifs/notes.yaml", `apiVersion: orkestra.orkspace.io/v1
kind: Motif
notes:
  - name: fullImage
    expression: "{{ .spec.image }}-{{ .metadata.name }}"
`)
	k := write("k.yaml", `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
notes:
  - name: serviceHost
    description: the in-cluster host name
    expression: "{{ .metadata.name }}.{{ .metadata.namespace }}.svc"
spec:
  imports:
    - motif: ./motifs/notes.yaml
  crds:
    site:
      crdFile: ./crd.yaml
      apiTypes: {version: v1}
      operatorBox:
        status:
          fields:
            - path: endpoint
              value: "{{ serviceHost }}"
            - path: phase
              value: "{{ fullImage }}"
`)
	out, errOut, code := run(t, "", "render", "-f", k, "../../examples/website/website-v1.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "status:\n  endpoint: shop.default.svc\n  phase: nginx:1.27-shop\n") {
		t.Fatalf("status not rendered through the notes:\n%s", out)
	}

	// A template calling a note nobody declared is a positioned error.
	bad := write("bad.yaml", strings.Replace(mustRead(t, k), "{{ fullImage }}", "{{ fullImag }}", 1))
	_, errOut, code = run(t, "", "check", "-f", bad)
	if code != 1 || !strings.Contains(errOut, `bad.yaml:20:26: [site] operatorBox.status.fields[1].value: unknown function "fullImag"; did you mean "fullImage"?`) {
		t.Fatalf("exit %d, want a positioned error suggesting the note:\n%s", code, errOut)
	}
}

package katalog

import (
	"path/filepath"
	"strings"
	"testing"
)

// importMotif loads an entry importing m.yaml (motif) with the import's
// extra lines (with:) and returns the katalog, the directory and the
// diagnostics.
func importMotif(t *testing.T, motif, with string) (*Katalog, string, Diagnostics) {
	t.Helper()
	dir := writeFiles(t, map[string]string{
		"k.yaml": header2 + "spec:\n  crds:\n    site:\n      crdFile: ./crd.yaml\n      apiTypes: {version: v1}\n      operatorBox:\n        imports:\n          - motif: ./m.yaml\n" + with,
		"m.yaml": "apiVersion: orkestra.orkspace.io/v1\nkind: Motif\nmetadata: {name: m}\n" + motif,
	})
	k, diags := Load(filepath.Join(dir, "k.yaml"))
	return k, dir, diags
}

// A motif's inputs (upstream pkg/types/motif.go): the import binds them with
// with:; mistakes are errors where they are written.
func TestMotifInputErrors(t *testing.T) {
	cases := []struct{ name, motif, with, want string }{
		{"a required input not bound", "inputs:\n  - {name: image, required: true}\nresources: {}\n", "",
			`k.yaml:10:13: [site] operatorBox.imports[0]: the motif m.yaml requires input "image"; bind it with with: {image: …}`},
		{"a required input not bound, with: present", "inputs:\n  - {name: image, required: true}\n  - {name: port}\nresources: {}\n", "            with: {port: 80}\n",
			`k.yaml:11:13: [site] operatorBox.imports[0].with: the motif m.yaml requires input "image"`},
		{"an input the motif does not declare", "inputs:\n  - {name: image}\nresources: {}\n", "            with: {imag: x}\n",
			`k.yaml:11:20: [site] operatorBox.imports[0].with.imag: the motif m.yaml has no input "imag"; did you mean "image"?`},
		{"a motif without inputs", "resources: {}\n", "            with: {image: x}\n",
			`k.yaml:11:20: [site] operatorBox.imports[0].with.image: the motif m.yaml has no input "image"; it declares none`},
		{"an unknown type", "inputs:\n  - {name: n, type: list}\nresources: {}\n", "",
			`m.yaml:5:21: [site] inputs[0].type: an input's type is string, integer, number or boolean, got "list"`},
		{"a default of a required input", "inputs:\n  - {name: n, required: true, default: x}\nresources: {}\n", "            with: {n: y}\n",
			`m.yaml:5:31: [site] inputs[0].default: input "n" is required, so its default never applies`},
		{"an input declared twice", "inputs:\n  - {name: n}\n  - {name: n}\nresources: {}\n", "",
			`m.yaml:6:12: [site] inputs[1].name: input "n" is declared twice`},
		{"rotateAfter from an input bound to an expression", "inputs:\n  - {name: every}\nresources:\n  onCreate:\n    secrets:\n      - {name: s, once: true, rotateAfter: \"{{ .inputs.every }}\", data: {k: v}}\n", "            with: {every: \"{{ .spec.theme }}\"}\n",
			`rotateAfter is read when the katalog loads, so it is a duration (90s, 12h, 7d, …) or one input the import binds to one; {{ .inputs.every }} is neither`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, dir, diags := importMotif(t, tc.motif, tc.with)
			if got := diagLines(dir, diags.Errors()); !strings.Contains(got, tc.want) {
				t.Errorf("errors:\n%s\nwant one containing\n%s", got, tc.want)
			}
		})
	}
}

// The motif's declarations and status fields carry their import; those
// under resources.onCreate: go to onCreate (upstream's MotifResources);
// rotateAfter may read an input bound to a literal, from with: or its
// default, and a profile's name likewise.
func TestMotifInputsBound(t *testing.T) {
	motif := `inputs:
  - {name: every, default: 30d}
  - {name: size, default: small}
  - {name: image, required: true}
resources:
  onCreate:
    secrets:
      - {name: a, once: true, rotateAfter: "{{ .inputs.every }}", data: {k: v}}
      - {name: b, once: true, rotateAfter: '{{ index .inputs "every" }}', data: {k: v}}
  deployments:
    - {image: "{{ .inputs.image }}", resources: {profile: "{{ .inputs.size }}"}}
status:
  fields:
    - {path: phase, value: "{{ .inputs.image }}"}
`
	k, _, diags := importMotif(t, motif, "            with: {every: 12h, image: \"{{ .spec.image }}\"}\n")
	if diags.HasErrors() {
		t.Fatal(diags.Errors())
	}
	box := k.CRDs[0].Box
	created, reconciled := box.Hooks[OnCreate].Resources, box.Hooks[OnReconcile].Resources
	if len(created) != 2 || len(reconciled) != 1 || created[0].Motif == nil || reconciled[0].Motif != created[0].Motif || box.Status.Fields[0].Motif != created[0].Motif {
		t.Fatalf("onCreate %d, onReconcile %d, motif %v", len(created), len(reconciled), created[0].Motif)
	}
	if created[0].RotateAfter.String() != "12h0m0s" || created[1].RotateAfter.String() != "12h0m0s" {
		t.Errorf("rotateAfter %s, %s", created[0].RotateAfter, created[1].RotateAfter)
	}
	if got := fieldsJSON(reconciled[0].Fields.Get("resources")); got != `{"limits":{"cpu":"500m","memory":"512Mi"},"requests":{"cpu":"100m","memory":"128Mi"}}` {
		t.Errorf("the profile named by an input bound to its default: %s", got)
	}
	imp := created[0].Motif
	if v := imp.Value(imp.Inputs[2]); v == nil || v.Str != "{{ .spec.image }}" {
		t.Errorf("image bound to %v", v)
	}
}

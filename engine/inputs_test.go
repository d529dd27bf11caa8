package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// compileMotif compiles an App entry importing m.yaml with the given with:
// lines; it returns the plan, or the diagnostics.
func compileMotif(t *testing.T, motif, with string) (*engine.Plan, katalog.Diagnostics) {
	t.Helper()
	dir := t.TempDir()
	crd, err := os.ReadFile("testdata/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"crd.yaml": string(crd),
		"k.yaml":   katalogHead + "      operatorBox:\n        imports:\n          - motif: ./m.yaml\n" + with,
		"m.yaml":   "apiVersion: orkestra.orkspace.io/v1\nkind: Motif\nmetadata: {name: m}\n" + motif,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	k, diags := katalog.Load(filepath.Join(dir, "k.yaml"))
	if diags.HasErrors() {
		return nil, diags
	}
	plan, cdiags := engine.Compile(k, backends(t), engine.CompileOptions{})
	if cdiags.HasErrors() {
		return nil, cdiags
	}
	return plan, nil
}

const webMotif = `inputs:
  - {name: image, required: true}
  - {name: replicas, type: integer, default: 2}
  - {name: debug, type: boolean, default: false}
  - {name: note}
resources:
  deployments:
    - name: "${self.metadata.name}"
      image: '{{ index .inputs "image" }}'
      replicas: "${inputs.replicas * 2}"
      labels:
        debug: "${string(inputs.debug)}"
        note: "${inputs.?note.orValue('none')}"
        legacy: "{{ .inputs.replicas }}"
status:
  fields:
    - {path: phase, value: "{{ .inputs.image }}"}
`

// In CEL, inputs is typed by the inputs' declared types; templates read
// .inputs; the import's values are expressions over the importing entry's
// custom resource, evaluated per object; an input bound to nothing is
// absent.
func TestMotifInputsEvaluate(t *testing.T) {
	plan, diags := compileMotif(t, webMotif, "            with: {image: \"${self.spec.image}\", replicas: \"{{ .spec.replicas }}\"}\n")
	if diags.HasErrors() {
		t.Fatal(diags.Errors())
	}
	e := plan.Entries[0]
	d := e.Hooks[katalog.OnReconcile][0]
	obj := map[string]any{"metadata": map[string]any{"name": "shop"}, "spec": map[string]any{"image": "nginx:2", "replicas": int64(3)}}
	s, err := d.Inputs.Scope(engine.NewScope(obj))
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := d.Fields.Eval(s)
	if err != nil {
		t.Fatal(err)
	}
	f := v.(map[string]any)
	labels := f["labels"].(map[string]any)
	if f["image"] != "nginx:2" || f["replicas"] != int64(6) || labels["debug"] != "false" || labels["note"] != "none" || labels["legacy"] != "3" {
		t.Errorf("fields %v", f)
	}
	st := e.Status[0]
	s2, _ := st.Inputs.Scope(engine.NewScope(obj))
	if v, _, err := st.Value.Eval(s2); err != nil || v != "nginx:2" {
		t.Errorf("status %v, %v", v, err)
	}
}

// A value of the wrong type for its input, and a CEL expression reading an
// input the motif does not declare, are load errors with positions.
func TestMotifInputTypeErrors(t *testing.T) {
	_, diags := compileMotif(t, webMotif, "            with: {image: x, replicas: many}\n")
	if got := diags.Errors().Error(); !strings.Contains(got, "k.yaml:11:40: [app] operatorBox.imports[0].with.replicas: expects an integer, got the string \"many\"") || !strings.Contains(got, "many") {
		t.Errorf("a string for an integer input: %s", got)
	}
	_, diags = compileMotif(t, strings.Replace(webMotif, "inputs.replicas * 2", "inputs.replica * 2", 1), "            with: {image: x}\n")
	if got := diags.Errors().Error(); !strings.Contains(got, "m.yaml:13:27:") || !strings.Contains(got, "undefined field 'replica'") {
		t.Errorf("an undeclared input in CEL: %s", got)
	}
}

package katalog

import (
	"strings"
	"testing"
)

// loadBox loads a one-entry katalog whose operatorBox is box (indented from
// column 0) and returns the katalog and every diagnostic as text.
func loadBox(t *testing.T, box string) (*Katalog, string, []string) {
	t.Helper()
	var b strings.Builder
	b.WriteString(header + entry + "      operatorBox:\n")
	for _, line := range strings.Split(strings.Trim(box, "\n"), "\n") {
		b.WriteString("        " + line + "\n")
	}
	p := writeKatalog(t, b.String())
	k, diags := Load(p)
	var out []string
	for _, d := range diags {
		out = append(out, strings.TrimPrefix(strings.ReplaceAll(d.Error(), p, "KATALOG"), "KATALOG:"))
	}
	return k, p, out
}

func wantDiags(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// One status path declared several times, each under its own when: the last
// declaration that holds wins (upstream: pkg/resources/template/
// resolver_status.go writes the fields in order into one map).
func TestStatusPathDeclaredUnderSeveralWhens(t *testing.T) {
	k, _, diags := loadBox(t, `
status:
  fields:
    - path: phase
      value: Pending
    - path: phase
      value: Running
      when: "self.spec.replicas > 0"
    - path: phase
      value: Scaled
      when: "self.spec.replicas > 3"
      clearOnFalse: true
`)
	wantDiags(t, diags)
	fields := k.CRDs[0].Box.Status.Fields
	if len(fields) != 3 || fields[2].Path != "phase" || !fields[2].ClearOnFalse || fields[1].ClearOnFalse {
		t.Fatalf("fields = %+v", fields)
	}
}

func TestStatusDeclarationThatNeverShowsWarns(t *testing.T) {
	_, _, diags := loadBox(t, `
status:
  fields:
    - path: phase
      value: a
      when: "self.spec.replicas > 0"
    - path: phase
      value: b
`)
	wantDiags(t, diags,
		"17:15: warning: [site] operatorBox.status.fields[0]: status.phase is set again unconditionally at KATALOG:20:15, so this declaration never shows; remove it, or give the later one a when:")
}

func TestClearOnFalseNeedsWhen(t *testing.T) {
	_, _, diags := loadBox(t, `
status:
  fields:
    - path: phase
      value: a
      clearOnFalse: true
`)
	wantDiags(t, diags, "19:15: [site] operatorBox.status.fields[0].clearOnFalse: clearOnFalse clears the field while its when: does not hold; add a when:")
}

// A custom child written the upstream way: identity under metadata (labels
// as a key/value list), control keys hasStatus and metadata.namespaced that
// are not part of the object (upstream: pkg/types/custom_resource.go,
// examples/advanced/16-custom-resources).
func TestCustomChildUpstreamForm(t *testing.T) {
	k, _, diags := loadBox(t, `
onCreate:
  custom:
    - apiVersion: example.io/v1
      kind: Cache
      metadata:
        name: "{{ .metadata.name }}-cache"
        namespace: "{{ .metadata.namespace }}"
        namespaced: true
        labels:
          - key: tier
            value: "{{ .spec.tier }}"
        annotations: {team: data}
      spec: {size: 3}
      status: {phase: Pending}
      hasStatus: false
`)
	wantDiags(t, diags)
	r := k.CRDs[0].Box.Hooks[OnCreate].Resources[0]
	var keys []string
	for _, e := range r.Fields.Map {
		keys = append(keys, e.Key)
	}
	if strings.Join(keys, ",") != "apiVersion,kind,name,namespace,metadata,spec,status" {
		t.Errorf("fields = %v", keys)
	}
	if r.Fields.Get("name").Str != "{{ .metadata.name }}-cache" || r.Fields.Get("namespace").Str != "{{ .metadata.namespace }}" {
		t.Errorf("identity not lifted: %+v", r.Fields.Get("name"))
	}
	md := r.Fields.Get("metadata")
	if len(md.Map) != 2 || md.Get("labels").Kind != MapValue || md.Get("labels").Get("tier").Str != "{{ .spec.tier }}" || md.Get("annotations").Get("team").Str != "data" {
		t.Errorf("metadata = %+v", md.Plain())
	}
	if r.Namespaced == nil || !*r.Namespaced || r.HasStatus == nil || *r.HasStatus || r.WritesStatus() {
		t.Errorf("control keys: namespaced %v hasStatus %v", r.Namespaced, r.HasStatus)
	}
}

func TestCustomChildErrors(t *testing.T) {
	_, _, diags := loadBox(t, `
onCreate:
  custom:
    - apiVersion: example.io/v1
      kind: Cache
      name: a
      metadata:
        name: b
        uid: x
      forEach: {field: spec.items}
`)
	wantDiags(t, diags,
		`22:17: [site] operatorBox.onCreate.custom[0].metadata.uid: unknown key "uid"; allowed keys: annotations, labels, name, namespace, namespaced`,
		`21:17: [site] operatorBox.onCreate.custom[0].metadata.name: the name is given twice: here and at KATALOG:19:15; keep one`,
		`23:15: [site] operatorBox.onCreate.custom[0].forEach: "forEach" is part of the original katalog format but not supported by this runtime: one child per list item is not implemented; declare the children one by one`)
}

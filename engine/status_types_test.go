package engine_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

const statusCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: apps.test.orkestra.io}
spec:
  group: test.orkestra.io
  scope: Namespaced
  names: {plural: apps, singular: app, kind: App, listKind: AppList}
  versions:
    - name: v1
      served: true
      storage: true
      subresources: {status: {}}
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                replicas: {type: integer}
                empty: {type: string}
            status:
              type: object
              properties:
                count: {type: integer}
                extra:
                  type: object
                  x-kubernetes-preserve-unknown-fields: true
`

const statusKatalog = `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
spec:
  crds:
    app:
      crdFile: ./crd.yaml
      apiTypes: {group: test.orkestra.io, version: v1, kind: App}
      operatorBox:
        status:
          fields:
            - path: extra.untyped
              value: "{{ .spec.replicas }}"
            - path: extra.str
              value: "{{ .spec.replicas }}"
              type: str
            - path: extra.auto
              value: "{{ .spec.replicas }}"
              type: auto
            - path: extra.autoEmpty
              value: "{{ .spec.empty }}"
              type: AUTO
            - path: extra.int
              value: "{{ .spec.replicas }}"
              type: integer
            - path: extra.cel
              value: "${self.spec.replicas}"
            - path: count
              value: "{{ .spec.replicas }}"
              type: string
`

// Status field types (issue 18 item 2). Where the status schema does not
// type a field, a legacy value is written as the original wrote it: the
// rendered string when type: is absent, string, str or default
// (upstream pkg/template/resolver_status.go castStatusValue), and with
// type: auto an integer, float or bool when it parses as one, else the
// string. Where the schema types the field, the value gets that type whatever
// type: says (the API server would refuse another), with a warning.
func TestStatusFieldTypes(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), []byte(statusCRD), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "k.yaml")
	if err := os.WriteFile(p, []byte(statusKatalog), 0o644); err != nil {
		t.Fatal(err)
	}
	k, diags := katalog.Load(p)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	plan, cdiags := engine.Compile(k, backends(t), engine.CompileOptions{})
	want := p + ":27:15: warning: [app] operatorBox.status.fields[6].type: type: string, but the status schema types status.count as an integer; the value is written as an integer (the API server would refuse a string)"
	if len(cdiags) != 1 || cdiags[0].Error() != want {
		t.Fatalf("diagnostics %v\nwant %s", cdiags, want)
	}
	s := engine.NewScope(map[string]any{"spec": map[string]any{"replicas": int64(3), "empty": ""}})
	got := map[string]any{}
	for _, f := range plan.Entries[0].Status {
		v, ok, err := f.Value.Eval(s)
		if err != nil || !ok {
			t.Fatalf("%v: %v %v", f.Path, ok, err)
		}
		got[f.Path[len(f.Path)-1]] = v
	}
	wantVals := map[string]any{
		"untyped": "3", "str": "3", "auto": int64(3), "autoEmpty": "", "int": int64(3),
		"cel": int64(3), "count": int64(3),
	}
	if !reflect.DeepEqual(got, wantVals) {
		t.Fatalf("got  %#v\nwant %#v", got, wantVals)
	}
}

// cronToMap into a status field the schema does not type, with type: auto,
// writes the map: the README lists type: auto among the untyped targets a
// cronToMap may fill. Upstream decoded the map only in conversion paths
// (pkg/webhook resolveValue, the sentinel check) and wrote its internal text
// into status, a difference the load warning names; into a field typed as
// a string it stays an error.
func TestStatusCronToMapAuto(t *testing.T) {
	dir := t.TempDir()
	crd := strings.Replace(statusCRD, "                empty: {type: string}\n", "                empty: {type: string}\n                schedule: {type: string}\n", 1)
	if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), []byte(crd), 0o644); err != nil {
		t.Fatal(err)
	}
	head := strings.SplitAfter(statusKatalog, "          fields:\n")[0]
	write := func(fields string) string {
		p := filepath.Join(dir, "k.yaml")
		if err := os.WriteFile(p, []byte(head+fields), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := write("            - path: extra.schedule\n              type: auto\n              value: \"{{ cronToMap .spec.schedule }}\"\n")
	k, diags := katalog.Load(p)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	plan, cdiags := engine.Compile(k, backends(t), engine.CompileOptions{})
	want := p + ":13:26: warning: [app] operatorBox.status.fields[0].value: cronToMap writes the map {minute, hour, dayOfMonth, month, dayOfWeek} into this type: auto status field; the original engine decoded that map only in conversion paths and wrote its internal text here (NUL bytes, then the map as JSON); write cronFromAny for the schedule as a string in both"
	if len(cdiags) != 1 || cdiags[0].Error() != want {
		t.Fatalf("diagnostics %v\nwant %s", cdiags, want)
	}
	v, ok, err := plan.Entries[0].Status[0].Value.Eval(engine.NewScope(map[string]any{"spec": map[string]any{"schedule": "*/5 0 * * 1"}}))
	wantMap := map[string]any{"minute": "*/5", "hour": "0", "dayOfMonth": "*", "month": "*", "dayOfWeek": "1"}
	if err != nil || !ok || !reflect.DeepEqual(v, wantMap) {
		t.Fatalf("value %#v %v %v, want %#v", v, ok, err, wantMap)
	}
	p = write("            - path: extra.schedule\n              type: string\n              value: \"{{ cronToMap .spec.schedule }}\"\n")
	k, _ = katalog.Load(p)
	_, cdiags = engine.Compile(k, backends(t), engine.CompileOptions{})
	want = p + ":13:26: [app] operatorBox.status.fields[0].value: cronToMap makes a map, but operatorBox.status.fields[0].value expects a string; use cronFromAny for a cron string"
	if errs := cdiags.Errors(); len(errs) != 1 || errs[0].Error() != want {
		t.Fatalf("type: string: %v\nwant %s", cdiags, want)
	}
}

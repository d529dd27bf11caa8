package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	celgo "github.com/google/cel-go/cel"

	"github.com/orkspace/orkestra-cel/engine"
	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/gotmpl"
	"github.com/orkspace/orkestra-cel/katalog"
)

func backends(t testing.TB) engine.Backends {
	t.Helper()
	cel, err := celengine.New(celengine.Options{Libraries: []celgo.EnvOption{gotmpl.CELLibrary()}})
	if err != nil {
		t.Fatal(err)
	}
	return engine.Backends{CEL: cel, Legacy: gotmpl.New(cel)}
}

// katalogHead puts the entry's first body line (under `app:`) on line 8.
const katalogHead = `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
spec:
  crds:
    app:
      crdFile: ./crd.yaml
      apiTypes: {group: test.orkestra.io, version: v1, kind: App}
`

func compileBody(t *testing.T, body string) (string, *engine.Plan, katalog.Diagnostics) {
	t.Helper()
	dir := t.TempDir()
	crd, err := os.ReadFile("testdata/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), crd, 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "k.yaml")
	if err := os.WriteFile(p, []byte(katalogHead+body), 0o644); err != nil {
		t.Fatal(err)
	}
	k, diags := katalog.Load(p)
	if diags.HasErrors() {
		return p, nil, diags
	}
	plan, cdiags := engine.Compile(k, backends(t), engine.CompileOptions{})
	return p, plan, append(diags, cdiags...)
}

// validPaths is a pair of paths that satisfies reachability; cases add to it.
const validPaths = `      conversion:
        storageVersion: v1
        paths:
          - from: v1
            to: v1alpha1
            spec: {image: "${self.spec.image}"}
`

func TestCompileErrors(t *testing.T) {
	cases := []struct {
		name, body, want string
	}{
		{"unknown self field with suggestion", `      operatorBox:
        onReconcile:
          deployments:
            - image: "${self.spec.imag}"
`, `11:35: [app] operatorBox.onReconcile.deployments[0].image: expression ${self.spec.imag}: undefined field 'imag'; did you mean image?`},
		{"type mismatch on a resource field", `      operatorBox:
        onReconcile:
          deployments:
            - image: x
              replicas: "${self.spec.image}"
`, `12:26: [app] operatorBox.onReconcile.deployments[0].replicas: expression ${self.spec.image} yields string, but operatorBox.onReconcile.deployments[0].replicas expects an integer`},
		{"map into a string label", `      operatorBox:
        onReconcile:
          configMaps:
            - labels: {a: "${self.spec.bounded}"}
`, `11:28: [app] operatorBox.onReconcile.configMaps[0].labels.a: expression ${self.spec.bounded} yields list(string), but operatorBox.onReconcile.configMaps[0].labels.a expects a string`},
		{"literal into an integer field", `      operatorBox:
        onReconcile:
          services:
            - port: eighty
`, `11:21: [app] operatorBox.onReconcile.services[0].port: expects an integer, got the string "eighty"`},
		{"type mismatch on a status field", `      operatorBox:
        status:
          fields:
            - path: ready
              value: "${self.spec.image}"
`, `12:23: [app] operatorBox.status.fields[0].value: expression ${self.spec.image} yields string, but operatorBox.status.fields[0].value expects an integer`},
		{"unknown status field", `      operatorBox:
        status:
          fields:
            - path: phaze
              value: x
`, `11:15: [app] operatorBox.status.fields[0].path: status.phaze is not in the status schema of v1; did you mean "phase"?`},
		{"type mismatch on a conversion output", validPaths + `          - from: v1alpha1
            to: v1
            spec:
              image: "${self.spec.image}"
              replicas: "${self.spec.image}"
`, `18:26: [app] conversion.paths[1].spec.replicas: expression ${self.spec.image} yields string, but conversion.paths[1].spec.replicas expects an integer`},
		{"unknown target field", validPaths + `          - from: v1alpha1
            to: v1
            spec:
              image: "${self.spec.image}"
              replica: "${self.spec.size}"
`, `18:15: [app] conversion.paths[1].spec.replica: conversion.paths[1].spec has no field "replica"; did you mean "replicas"?`},
		{"enum on a conversion literal", validPaths + `          - from: v1alpha1
            to: v1
            spec:
              image: "${self.spec.image}"
              tier: gold
`, `18:21: [app] conversion.paths[1].spec.tier: gold is not one of the allowed values free, pro`},
		{"format on a conversion literal", validPaths + `          - from: v1alpha1
            to: v1
            spec:
              image: "${self.spec.image}"
              since: yesterday
`, `18:22: [app] conversion.paths[1].spec.since: "yesterday" is not a valid date-time (the schema's format)`},
		{"missing required target field", validPaths + `          - from: v1alpha1
            to: v1
            spec:
              replicas: "${self.spec.size}"
`, `17:15: [app] conversion.paths[1].spec: required field conversion.paths[1].spec.image is not set`},
		{"unreachable version pair", `      conversion:
        storageVersion: v1
        paths:
          - from: v1
            to: v1alpha1
            spec: {image: "${self.spec.image}"}
`, `9:9: [app] conversion.paths: no conversion from v1alpha1 to v1: add a path from v1alpha1 to v1`},
		{"non-bool when", `      operatorBox:
        onReconcile:
          configMaps:
            - data: {a: b}
              when: "self.spec.replicas"
`, `12:22: [app] operatorBox.onReconcile.configMaps[0].when: when must be a bool, but ` + "`self.spec.replicas`" + ` yields int`},
		{"cost over budget", `      operatorBox:
        onReconcile:
          configMaps:
            - data:
                a: "${self.spec.hosts.all(x, self.spec.hosts.all(y, x.contains(y))) ? 'y' : 'n'}"
`, `12:21: [app] operatorBox.onReconcile.configMaps[0].data.a:`},
		{"mixed ${ and {{", `      operatorBox:
        onReconcile:
          configMaps:
            - data: {a: "${self.metadata.name}-{{ .spec.image }}"}
`, `11:26: [app] operatorBox.onReconcile.configMaps[0].data.a: a string may not mix ${…} (CEL) and {{…}} (legacy template)`},
		{"bad escape: unterminated ${", `      operatorBox:
        onReconcile:
          configMaps:
            - data: {a: "$${literal} ${self.spec.image"}
`, `11:38: [app] operatorBox.onReconcile.configMaps[0].data.a: unterminated ${`},
		{"random outside a once secret", `      operatorBox:
        onReconcile:
          configMaps:
            - data: {a: "${randomHex(8)}"}
`, `11:28: [app] operatorBox.onReconcile.configMaps[0].data.a: randomHex() yields a new value on every reconcile`},
		{"legacy unknown function", `      operatorBox:
        onReconcile:
          configMaps:
            - data: {a: "{{ upper .spec.image }}"}
`, `11:29: [app] operatorBox.onReconcile.configMaps[0].data.a: unknown function "upper"; did you mean "toUpper"?`},
		{"legacy unknown field with suggestion", `      operatorBox:
        onReconcile:
          configMaps:
            - data: {a: "{{ .spec.imagee }}"}
`, `11:35: [app] operatorBox.onReconcile.configMaps[0].data.a: unknown field .spec.imagee: spec has no field "imagee" in version v1; did you mean "image"?`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, _, diags := compileBody(t, tc.body)
			errs := diags.Errors()
			if len(errs) == 0 {
				t.Fatalf("no error; want %s", tc.want)
			}
			want := p + ":" + tc.want
			for _, e := range errs {
				if strings.HasPrefix(e.Error(), want) {
					return
				}
			}
			t.Fatalf("want %s\ngot:\n%v", want, errs)
		})
	}
}

func TestCompileAcceptsValidFormattedLiteral(t *testing.T) {
	_, _, diags := compileBody(t, validPaths+`          - from: v1alpha1
            to: v1
            spec:
              image: "${self.spec.image}"
              since: "2026-11-22T10:00:00Z"
`)
	if diags.HasErrors() {
		t.Fatal(diags.Errors())
	}
}

func TestCompileCostMessage(t *testing.T) {
	_, _, diags := compileBody(t, `      operatorBox:
        onReconcile:
          configMaps:
            - data:
                a: "${self.spec.hosts.all(x, self.spec.hosts.all(y, x.contains(y))) ? 'y' : 'n'}"
                b: "${self.spec.bounded.all(x, self.spec.bounded.all(y, x.contains(y))) ? 'y' : 'n'}"
`)
	errs := diags.Errors()
	if len(errs) != 1 {
		t.Fatalf("want exactly the unbounded expression rejected, got %v", errs)
	}
	msg := errs[0].Error()
	for _, want := range []string{"data.a", "exceeds budget by factor of", "maxItems", "spec.hosts"} {
		if !strings.Contains(msg, want) {
			t.Errorf("cost message %q lacks %q", msg, want)
		}
	}
}

func TestCompileAllProblemsNotJustFirst(t *testing.T) {
	_, _, diags := compileBody(t, `      operatorBox:
        onReconcile:
          deployments:
            - image: "${self.spec.imag}"
              replicas: "${self.spec.image}"
          configMaps:
            - data: {a: "${self.metadata.nam}"}
              when: "self.spec.replicas"
`)
	if n := len(diags.Errors()); n != 4 {
		t.Fatalf("want 4 errors, got %d: %v", n, diags.Errors())
	}
}

func TestCompileExamplesAndDefaults(t *testing.T) {
	for _, path := range []string{"../examples/website/katalog.yaml", "../examples/legacy-website/katalog.yaml"} {
		k, diags := katalog.Load(path)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		plan, cdiags := engine.Compile(k, backends(t), engine.CompileOptions{})
		if cdiags.HasErrors() {
			t.Fatalf("%s: %v", path, cdiags)
		}
		for _, e := range plan.Entries {
			for hook, rs := range e.Hooks {
				for _, r := range rs {
					if r.Fields.Get("name") == nil {
						t.Errorf("%s %s %s: name not defaulted", e.Name, hook, r.Kind.Key)
					}
				}
			}
		}
	}
	_, plan, diags := compileBody(t, `      operatorBox:
        onReconcile:
          services:
            - port: "80"
              type: "${self.spec.?tier.orValue('free') == 'pro' ? 'LoadBalancer' : 'ClusterIP'}"
`)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	svc := plan.Entries[0].Hooks[katalog.OnReconcile][0]
	obj := map[string]any{"apiVersion": "test.orkestra.io/v1", "kind": "App", "metadata": map[string]any{"name": "web", "namespace": "ns"}, "spec": map[string]any{"image": "x", "tier": "pro"}}
	v, ok, err := svc.Fields.Eval(engine.NewScope(obj))
	if err != nil || !ok {
		t.Fatal(err)
	}
	got := fmt.Sprint(v)
	if got != "map[name:web-svc port:80 type:LoadBalancer]" {
		t.Fatalf("evaluated fields = %s", got)
	}
	if _, isInt := v.(map[string]any)["port"].(int64); !isInt {
		t.Fatal(`a quoted "80" in an integer field must become the integer 80`)
	}
}

func TestKeywordAndDashFieldNames(t *testing.T) {
	_, plan, diags := compileBody(t, `      operatorBox:
        onReconcile:
          configMaps:
            - data:
                ns: "${self.spec.__namespace__}"
                surge: "${string(self.spec.max__dash__surge)}"
`)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cm := plan.Entries[0].Hooks[katalog.OnReconcile][0]
	obj := map[string]any{"metadata": map[string]any{"name": "a"}, "spec": map[string]any{"image": "x", "namespace": "prod", "max-surge": int64(2)}}
	v, _, err := cm.Fields.Eval(engine.NewScope(obj))
	if err != nil {
		t.Fatal(err)
	}
	data := v.(map[string]any)["data"].(map[string]any)
	if data["ns"] != "prod" || data["surge"] != "2" {
		t.Fatalf("data = %v", data)
	}
}

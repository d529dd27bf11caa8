package engine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// compileDoc compiles a whole katalog document next to testdata/crd.yaml.
func compileDoc(t *testing.T, doc string) *engine.Plan {
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
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	k, diags := katalog.Load(p)
	if diags.HasErrors() {
		t.Fatal(diags.Errors())
	}
	plan, cdiags := engine.Compile(k, backends(t), engine.CompileOptions{})
	if cdiags.HasErrors() {
		t.Fatal(cdiags.Errors())
	}
	return plan
}

// A profile named by an expression — CEL or a legacy template — is picked
// per object from every profile of its class: a defined one by its exact
// name, a built-in in any case; an unknown name is an evaluation error
// naming the choices.
func TestProfileSelectedPerObject(t *testing.T) {
	for _, name := range []string{`"${self.spec.tier}"`, `"{{ .spec.tier }}"`} {
		plan := compileDoc(t, `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
profiles:
  resourceQuotas:
    - {name: free, hard: {pods: "2"}}
spec:
  crds:
    app:
      crdFile: ./crd.yaml
      apiTypes: {group: test.orkestra.io, version: v1, kind: App}
      operatorBox:
        onReconcile:
          resourceQuotas:
            - name: q
              profile: `+name+`
`)
		q := plan.Entries[0].Hooks[katalog.OnReconcile][0]
		eval := func(tier string) (string, error) {
			obj := map[string]any{"metadata": map[string]any{"name": "a"}, "spec": map[string]any{"image": "x", "tier": tier}}
			v, _, err := q.Fields.Eval(engine.NewScope(obj))
			if err != nil {
				return "", err
			}
			b, _ := json.Marshal(v.(map[string]any)["hard"])
			return string(b), nil
		}
		cases := []struct{ tier, want, err string }{
			{tier: "free", want: `{"pods":"2"}`},
			{tier: "Free", err: `unknown ResourceQuota profile "Free"; one of free, large, medium, small, xlarge`},
			{tier: "Small", want: `{"cpu":"2","limits.cpu":"2","limits.memory":"4Gi","memory":"4Gi","pods":"10","requests.cpu":"1","requests.memory":"2Gi"}`},
			{tier: "", err: `the ResourceQuota profile name is empty`},
		}
		for _, tc := range cases {
			got, err := eval(tc.tier)
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("%s, tier %q: got %s, %v; want the error %q", name, tc.tier, got, err, tc.err)
			case tc.err == "" && (err != nil || got != tc.want):
				t.Errorf("%s, tier %q: got %s, %v; want %s", name, tc.tier, got, err, tc.want)
			}
		}
	}
}

// Dashed keys in field paths, as upstream's katalogs write them: in a
// structured condition's dot path, in a condition that is a template, and in
// a value's template (issue 25; examples/use-cases/profiles/01).
func TestDashedFieldPaths(t *testing.T) {
	plan := compileDoc(t, `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
spec:
  crds:
    app:
      crdFile: ./crd.yaml
      apiTypes: {group: test.orkestra.io, version: v1, kind: App}
      operatorBox:
        onReconcile:
          configMaps:
            - name: c
              data: {tier: "{{ .metadata.labels.app-tier }}"}
              when:
                - field: metadata.labels.app-tier
                  equals: web
                - field: "{{ .metadata.labels.app-tier }}"
                  equals: web
`)
	cm := plan.Entries[0].Hooks[katalog.OnReconcile][0]
	for _, tc := range []struct {
		tier string
		when bool
	}{{"web", true}, {"batch", false}} {
		obj := map[string]any{"metadata": map[string]any{"name": "a", "labels": map[string]any{"app-tier": tc.tier}}, "spec": map[string]any{"image": "x"}}
		s := engine.NewScope(obj)
		ok, err := cm.When.Eval(s)
		if err != nil || ok != tc.when {
			t.Errorf("app-tier %s: when %v, %v; want %v", tc.tier, ok, err, tc.when)
		}
		v, _, err := cm.Fields.Eval(s)
		if err != nil || v.(map[string]any)["data"].(map[string]any)["tier"] != tc.tier {
			t.Errorf("app-tier %s: fields %v, %v", tc.tier, v, err)
		}
	}
}

// Upstream's examples read children by their kind's key in camel case
// (.children.networkPolicies, profiles/06), which upstream reads as
// absent: so does this runtime, with a warning naming the key to write.
func TestChildrenKeyInCamelCaseReadsAbsent(t *testing.T) {
	_, plan, diags := compileBody(t, `      operatorBox:
        status:
          fields:
            - path: phase
              value: Ready
              when:
                - field: "{{ resourceExists .children.networkPolicies }}"
                  equals: "true"
        onReconcile:
          networkPolicies:
            - {name: np, podSelector: {}, profile: deny-all}
`)
	if diags.HasErrors() {
		t.Fatal(diags.Errors())
	}
	var warned bool
	for _, d := range diags {
		warned = warned || strings.Contains(d.Message, `.children has no key "networkPolicies" (its keys are lower-case: "networkpolicies"), so it always reads as absent, as upstream reads it; write .children.networkpolicies`)
	}
	if !warned {
		t.Errorf("no warning naming networkpolicies: %v", diags)
	}
	sf := plan.Entries[0].Status[0]
	s := engine.NewScope(map[string]any{"metadata": map[string]any{"name": "a"}, "spec": map[string]any{"image": "x"}})
	s.Children = engine.ChildrenView(map[string][]map[string]any{"networkPolicies": {{"metadata": map[string]any{"name": "np"}}}})
	if ok, err := sf.When.Eval(s); err != nil || ok {
		t.Errorf("the camel-case key read %v, %v; want absent (false), as upstream", ok, err)
	}
}

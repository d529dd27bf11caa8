package cel

import (
	"strings"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/engine"
)

// Variables besides self (children, each, index, value) are typed by their
// schemas: a misspelt field is a load error, values are checked where they
// land, and evaluation reads Scope.Vars.
func TestVariablesBesidesSelf(t *testing.T) {
	b := newBackend(t, Options{})
	self := schemaYAML(t, `
type: object
properties:
  spec: {type: object, properties: {size: {type: integer}}}
`)
	deploy := schemaYAML(t, `
type: object
properties:
  status: {type: object, properties: {readyReplicas: {type: integer}}}
`)
	children := &structuralschema.Structural{
		Generic: structuralschema.Generic{Type: "object"},
		Properties: map[string]structuralschema.Structural{
			"deployments": {Generic: structuralschema.Generic{Type: "object"}, AdditionalProperties: &structuralschema.StructuralOrBool{Bool: true, Structural: deploy}},
		},
	}
	item := schemaYAML(t, `{type: object, properties: {name: {type: string, maxLength: 20}}}`)
	vars := []engine.Var{{Name: "children", Schema: children}, {Name: "each", Schema: item}, {Name: "index", Schema: schemaYAML(t, `{type: integer}`)}}
	ctx := func(expected string) *engine.Context {
		c := ctxFor(self, schemaYAML(t, expected))
		c.Vars = vars
		return c
	}
	e, diags := b.CompileValue("${children.deployments['web'].status.readyReplicas + index}", ctx(`{type: integer}`))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	scope := &engine.Scope{Self: objYAML(t, "spec: {size: 1}"), Vars: map[string]any{
		"children": objYAML(t, "deployments: {web: {status: {readyReplicas: 3}}}"),
		"index":    int64(2),
	}}
	if v, err := e.Eval(scope); err != nil || v != int64(5) {
		t.Errorf("eval = %v, %v", v, err)
	}
	n, diags := b.CompileValue("${self.metadata.name}-${each.name}", ctx(`{type: string}`))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	scope = &engine.Scope{Self: objYAML(t, "metadata: {name: shop}"), Vars: map[string]any{"each": objYAML(t, "name: eu")}}
	if v, err := n.Eval(scope); err != nil || v != "shop-eu" {
		t.Errorf("eval = %v, %v", v, err)
	}

	for _, tc := range []struct{ src, expected, want string }{
		{"${children.deployments['web'].status.readyReplica}", `{type: integer}`, "undefined field 'readyReplica'"},
		{"${children.deployments['web'].status.readyReplicas}", `{type: string}`, "expects a string"},
		{"${each.nam}", `{type: string}`, "undefined field 'nam'"},
	} {
		_, diags := b.CompileValue(tc.src, ctx(tc.expected))
		if !strings.Contains(diags.Error(), tc.want) {
			t.Errorf("%s: diagnostics %v, want %q", tc.src, diags, tc.want)
		}
	}
}

// A plain reference into a variable leaves the target unset when the field
// is absent, as one into self does (a child not created yet).
func TestPlainReferenceIntoAVariable(t *testing.T) {
	b := newBackend(t, Options{})
	children := schemaYAML(t, `
type: object
properties:
  deployments:
    type: object
    additionalProperties:
      type: object
      properties: {status: {type: object, properties: {readyReplicas: {type: integer}}}}
`)
	ctx := ctxFor(schemaYAML(t, `{type: object}`), schemaYAML(t, `{type: integer}`))
	ctx.Vars = []engine.Var{{Name: "children", Schema: children}}
	e, diags := b.CompileValue("${children.deployments['web'].status.readyReplicas}", ctx)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, vars := range []map[string]any{nil, {"children": map[string]any{}}, {"children": objYAML(t, "deployments: {web: {status: {}}}")}} {
		if _, err := e.Eval(&engine.Scope{Self: map[string]any{}, Vars: vars}); err != engine.ErrAbsent {
			t.Errorf("vars %v: err = %v, want ErrAbsent", vars, err)
		}
	}
	v, err := e.Eval(&engine.Scope{Self: map[string]any{}, Vars: map[string]any{"children": objYAML(t, "deployments: {web: {status: {readyReplicas: 2}}}")}})
	if err != nil || v != int64(2) {
		t.Errorf("eval = %v, %v", v, err)
	}
}

package gotmpl

import (
	"strings"
	"sync"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

const testSchemaYAML = `
type: object
properties:
  spec:
    type: object
    properties:
      image: {type: string}
      tier: {type: string}
      environment: {type: string}
      domain: {type: string}
      empty: {type: string}
      missing: {type: string}
      replicas: {type: integer}
      port: {type: integer}
      count: {type: integer}
      ratio: {type: number}
      big: {type: number}
      enabled: {type: boolean}
      debug: {type: boolean}
      tags:
        type: array
        items: {type: string}
      labels:
        type: object
        additionalProperties: {type: string}
      items:
        type: array
        items:
          type: object
          properties:
            name: {type: string}
      nested:
        type: object
        properties:
          inner:
            type: object
            properties:
              value: {type: string}
      schedule:
        x-kubernetes-preserve-unknown-fields: true
      config:
        type: object
        x-kubernetes-preserve-unknown-fields: true
      size:
        x-kubernetes-int-or-string: true
  status:
    type: object
    properties:
      phase: {type: string}
`

var (
	testSchemaOnce sync.Once
	testSchemaVal  *structuralschema.Structural
)

func testSchema(t testing.TB) *structuralschema.Structural {
	testSchemaOnce.Do(func() { testSchemaVal = schemaOf(t, testSchemaYAML) })
	return testSchemaVal
}

// testObject is the custom resource most tests render against.
func testObject() map[string]any {
	return map[string]any{
		"apiVersion": "demo.orkestra.io/v1",
		"kind":       "Thing",
		"metadata": map[string]any{
			"name":      "blog",
			"namespace": "default",
			"labels":    map[string]any{"app": "blog", "tier": "gold"},
		},
		"spec": map[string]any{
			"image":       "ghost:5",
			"tier":        "enterprise",
			"environment": "production",
			"domain":      "my.app.example.com",
			"empty":       "",
			"replicas":    int64(3),
			"port":        int64(8080),
			"count":       int64(0),
			"ratio":       1.5,
			"big":         1e6,
			"enabled":     true,
			"debug":       false,
			"tags":        []any{"a", "b"},
			"labels":      map[string]any{"x": "1"},
			"nested":      map[string]any{"inner": map[string]any{"value": "deep"}},
			"schedule":    "*/5 0 * * 1",
			"config":      map[string]any{"a": int64(1), "b": "two"},
		},
		"status": map[string]any{"phase": "Ready"},
	}
}

var testPos = katalog.Pos{File: "k.yaml", Line: 10, Col: 20}

func testCtx(t testing.TB) *engine.Context {
	return &engine.Context{Entry: "things", Field: "spec.x", Pos: testPos, Self: testSchema(t), SelfVersion: "v1"}
}

// render compiles src as an untyped string value and renders it.
func render(t *testing.T, src string, obj map[string]any) (string, error) {
	t.Helper()
	ctx := testCtx(t)
	ctx.AllowRandom = true
	tm, diags := New(nil).compile(src, ctx, forValue)
	if diags.HasErrors() {
		t.Fatalf("%s: %v", src, diags)
	}
	return tm.Render(obj)
}

// compileErrs compiles src and returns its diagnostics, one per line.
func compileErrs(t *testing.T, src string, ctx *engine.Context) string {
	t.Helper()
	_, diags := New(nil).CompileValue(src, ctx)
	return diagString(diags)
}

func diagString(diags katalog.Diagnostics) string {
	lines := make([]string, len(diags))
	for i, d := range diags {
		lines[i] = d.Error()
	}
	return strings.Join(lines, "\n")
}

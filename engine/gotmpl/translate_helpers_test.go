package gotmpl

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"testing"

	celgo "github.com/google/cel-go/cel"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/engine"
	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/objgen"
)

// The translation tests check each rule twice: the exact CEL text, and
// that the legacy template and its translation agree — value, type and
// absence — on objects generated from the schema (objgen) plus hand-made
// corner cases, compiled by the real backends.

const trSchemaYAML = `
type: object
properties:
  spec:
    type: object
    required: [image, name, port]
    properties:
      image: {type: string}
      name: {type: string, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 40}
      tier: {type: string, enum: [free, gold, enterprise]}
      environment: {type: string}
      text: {type: string, maxLength: 40}
      replicas: {type: integer}
      port: {type: integer, minimum: 1, maximum: 65535}
      count: {type: integer, minimum: 0, maximum: 1000}
      ratio: {type: number}
      enabled: {type: boolean}
      tags:
        type: array
        maxItems: 5
        items: {type: string, maxLength: 20}
      ports:
        type: array
        maxItems: 5
        items: {type: integer}
      labels:
        type: object
        maxProperties: 5
        additionalProperties: {type: string, maxLength: 30}
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
	trOnce   sync.Once
	trSchema *structuralschema.Structural
	trObjs   []map[string]any
	trCEL    *celengine.Backend
)

var trGVK = schema.GroupVersionKind{Group: "demo.orkestra.io", Version: "v1", Kind: "Thing"}

func trSetup(t testing.TB) {
	trOnce.Do(func() {
		trSchema = schemaOf(t, trSchemaYAML)
		var err error
		trCEL, err = celengine.New(celengine.Options{Libraries: []celgo.EnvOption{CELLibrary()}})
		if err != nil {
			t.Fatal(err)
		}
		objs := objgen.Generate(trSchema, trGVK, 300, objgen.Options{Seed: 7})
		objs = append(objs, objgen.Generate(trSchema, trGVK, 50, objgen.Options{Seed: 8, OptionalProbability: -1})...)
		objs = append(objs, objgen.Generate(trSchema, trGVK, 50, objgen.Options{Seed: 9, OptionalProbability: 1})...)
		trObjs = append(objs, trCorners()...)
	})
}

// trCorners are objects the generator rarely makes: white space at the
// edges, empty strings, zeros, missing spec, non-ASCII text.
func trCorners() []map[string]any {
	base := func(spec map[string]any) map[string]any {
		o := map[string]any{"apiVersion": "demo.orkestra.io/v1", "kind": "Thing",
			"metadata": map[string]any{"name": "blog", "namespace": "default", "labels": map[string]any{"app": "blog", "app.kubernetes.io/name": "x"}}}
		if spec != nil {
			o["spec"] = spec
		}
		return o
	}
	return []map[string]any{
		base(nil),
		base(map[string]any{"image": "", "name": "a", "port": int64(1)}),
		base(map[string]any{"image": "  ghost:5 ", "name": "web-1", "port": int64(80), "environment": " prod", "text": "x ", "replicas": int64(0), "enabled": false, "ratio": 0.0, "count": int64(0)}),
		base(map[string]any{"image": "é", "name": "web", "port": int64(8080), "environment": "", "text": "", "tier": "gold", "enabled": true, "ratio": 1e6, "replicas": int64(1) << 40, "tags": []any{}, "labels": map[string]any{}}),
		// untyped values of every JSON kind
		base(map[string]any{"image": "a", "name": "web", "port": int64(80), "config": map[string]any{"x": " 3 "}, "size": "50%"}),
		base(map[string]any{"image": "a", "name": "web", "port": int64(80), "config": map[string]any{"x": int64(7)}, "size": int64(4)}),
		base(map[string]any{"image": "a", "name": "web", "port": int64(80), "config": map[string]any{"x": 1e6}}),
		base(map[string]any{"image": "a", "name": "web", "port": int64(80), "config": map[string]any{"x": 2.5}}),
		base(map[string]any{"image": "a", "name": "web", "port": int64(80), "config": map[string]any{"x": true}}),
		base(map[string]any{"image": "a", "name": "web", "port": int64(80), "config": map[string]any{"x": nil}}),
		base(map[string]any{"image": "a", "name": "web", "port": int64(80), "config": map[string]any{"x": ""}}),
		base(map[string]any{"image": "a", "name": "web", "port": int64(80), "config": map[string]any{"x": "true"}}),
		base(map[string]any{"image": "a", "name": "web", "port": int64(80), "config": map[string]any{"x": map[string]any{"y": "in", "z": []any{int64(1), "b"}}}}),
		base(map[string]any{"image": "a", "name": "web", "port": int64(80), "config": map[string]any{"x": []any{"p", int64(2), nil}}}),
		base(map[string]any{"image": "a", "name": "web", "port": int64(80), "config": map[string]any{}}),
		base(map[string]any{"image": "ghost", "name": "web", "port": int64(65535), "environment": "Ωmega", "text": "\tmid dle\n", "ratio": 2.5, "replicas": int64(-3), "count": int64(7), "tags": []any{"a", ""}, "ports": []any{int64(1), int64(2)}}),
	}
}

// outcome is one evaluation: a JSON value, absent, or failed.
type outcome struct {
	json   string
	absent bool
	err    error
}

func (o outcome) String() string {
	switch {
	case o.absent:
		return "<absent>"
	case o.err != nil:
		return "error: " + o.err.Error()
	}
	return o.json
}

func evalExpr(e engine.Expr, obj map[string]any) outcome {
	v, err := e.Eval(engine.NewScope(obj))
	switch {
	case errors.Is(err, engine.ErrAbsent):
		return outcome{absent: true}
	case err != nil:
		return outcome{err: err}
	}
	b, _ := json.Marshal(v)
	return outcome{json: string(b)}
}

func evalCondition(c engine.Condition, obj map[string]any) outcome {
	ok, err := c.Eval(engine.NewScope(obj))
	if err != nil {
		return outcome{err: err}
	}
	return outcome{json: fmt.Sprint(ok)}
}

var runShape = regexp.MustCompile(`[0-9A-Za-z]+`)

// same: equal values, both absent, or both failed; random values compare
// by shape (runs of letters and digits by length).
func same(a, b outcome, random bool) bool {
	switch {
	case a.err != nil || b.err != nil:
		return a.err != nil && b.err != nil
	case a.absent || b.absent:
		return a.absent == b.absent
	case random:
		shape := func(s string) string {
			return runShape.ReplaceAllStringFunc(s, func(r string) string { return fmt.Sprintf("<%d>", len(r)) })
		}
		return shape(a.json) == shape(b.json)
	}
	return a.json == b.json
}

func trCtx(expected *structuralschema.Structural, coerce engine.Coerce, random bool) *engine.Context {
	return &engine.Context{Entry: "things", Field: "operatorBox.onCreate.deployments[0].x", Pos: katalog.Pos{File: "k.yaml", Line: 3, Col: 9},
		Self: trSchema, SelfVersion: "v1", Expected: expected, Coerce: coerce, AllowRandom: random}
}

// checkValueEquivalent compiles src (legacy) and cel (its translation) at
// ctx and compares them on every test object.
func checkValueEquivalent(t *testing.T, src, cel string, ctx *engine.Context) {
	t.Helper()
	old, d := New(trCEL).CompileValue(src, ctx)
	if d.HasErrors() {
		t.Fatalf("legacy %s does not compile: %v", src, d)
	}
	nw, d := trCEL.CompileValue(cel, ctx)
	if d.HasErrors() {
		t.Fatalf("translation %s of %s does not compile: %v", cel, src, d)
	}
	random := ctx.AllowRandom
	differ := 0
	for _, obj := range trObjs {
		a, b := evalExpr(old, obj), evalExpr(nw, obj)
		if !same(a, b, random) {
			differ++
			if differ <= 3 {
				j, _ := json.Marshal(obj)
				t.Errorf("%s → %s differ on %s:\n  legacy: %s\n  cel:    %s", src, cel, j, a, b)
			}
		}
	}
}

func checkConditionEquivalent(t *testing.T, src, cel string, ctx *engine.Context) {
	t.Helper()
	old, d := New(trCEL).CompileCondition(src, ctx)
	if d.HasErrors() {
		t.Fatalf("legacy %s does not compile: %v", src, d)
	}
	nw, d := trCEL.CompileCondition(cel, ctx)
	if d.HasErrors() {
		t.Fatalf("translation %s of %s does not compile: %v", cel, src, d)
	}
	differ := 0
	for _, obj := range trObjs {
		a, b := evalCondition(old, obj), evalCondition(nw, obj)
		if !same(a, b, false) {
			differ++
			if differ <= 3 {
				j, _ := json.Marshal(obj)
				t.Errorf("%s → %s differ on %s:\n  legacy: %s\n  cel:    %s", src, cel, j, a, b)
			}
		}
	}
}

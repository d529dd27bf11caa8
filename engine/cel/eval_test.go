package cel

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/orkspace/orkestra-cel/engine"
)

// The fast path of plain references (a direct walk of the data) and the CEL
// program agree on every input: values, absence and errors.
func TestFastPathMatchesCEL(t *testing.T) {
	fast := newBackend(t, Options{})
	slow := newBackend(t, Options{})
	slow.noFastPath = true

	refs := []string{
		"${self}", "${self.spec}", "${self.metadata}", "${self.metadata.name}", "${self.metadata.labels}",
		"${self.metadata.labels.app}", "${self.metadata.labels['app']}", "${self.metadata.labels[?'app']}",
		"${self.metadata.?labels}", "${self.metadata.?labels.?app}", "${self.metadata.annotations}",
		"${self.spec.replicas}", "${self.spec.?replicas}", "${self.spec.ratio}", "${self.spec.enabled}",
		"${self.spec.items}", "${self.spec.objs}", "${self.spec.nested}", "${self.spec.nested.a}",
		"${self.spec.?nested.?b}", "${self.spec.config}", "${self.spec.config.deep}", "${self.spec.config.deep.num}",
		"${self.spec.config.deep.list}", "${self.spec.?config.?deep.?missing}", "${self.spec.port}",
		"${self.spec.`foo-bar`}", "${self.spec.foo__dash__bar}", "${self.spec.namespace}", "${self.spec.__in__}",
		"${self.spec.labels}", "${self.spec.labels.k}", "${self.status}", "${self.status.phase}",
	}
	for _, r := range refs {
		e, _ := fast.CompileValue(r, &engine.Context{Field: "x", Pos: testPos, Self: widget(t)})
		if e == nil || !e.(*valueExpr).IsPlainRef() {
			t.Fatalf("%s is not compiled as a plain reference", r)
		}
	}

	base := objYAML(t, widgetObj)
	spec := func(m map[string]any) map[string]any { return m["spec"].(map[string]any) }
	objects := map[string]map[string]any{
		"full":  base,
		"empty": {},
		"nil":   nil,
		"whole floats": func() map[string]any {
			o := objYAML(t, widgetObj)
			spec(o)["replicas"] = float64(3)
			spec(o)["nested"] = map[string]any{"a": float64(7), "b": "x"}
			spec(o)["objs"] = []any{map[string]any{"name": "n", "value": float64(2)}}
			spec(o)["port"] = float64(80)
			spec(o)["ratio"] = int64(2)
			return o
		}(),
		"wrong types": func() map[string]any {
			o := objYAML(t, widgetObj)
			spec(o)["replicas"] = "three"
			spec(o)["ratio"] = 1.5
			spec(o)["enabled"] = "yes"
			spec(o)["items"] = "not a list"
			spec(o)["nested"] = []any{1}
			spec(o)["port"] = 1.5
			o["metadata"].(map[string]any)["labels"] = map[string]any{"app": 7}
			return o
		}(),
		"fractional integer": func() map[string]any {
			o := objYAML(t, widgetObj)
			spec(o)["replicas"] = 2.5
			spec(o)["objs"] = []any{map[string]any{"value": 1.25}, nil}
			return o
		}(),
		"nulls": func() map[string]any {
			o := objYAML(t, widgetObj)
			spec(o)["replicas"] = nil
			spec(o)["nested"] = nil
			spec(o)["labels"] = map[string]any{"k": nil}
			spec(o)["items"] = []any{"a", nil}
			o["metadata"].(map[string]any)["labels"] = nil
			return o
		}(),
		"spec not an object": {"spec": "oops", "metadata": "oops"},
		"unknown fields": func() map[string]any {
			o := objYAML(t, widgetObj)
			spec(o)["unknown"] = "pruned"
			spec(o)["nested"] = map[string]any{"a": int64(1), "zzz": "x"}
			return o
		}(),
	}
	for name, obj := range objects {
		for _, r := range refs {
			ctx := &engine.Context{Field: "x", Pos: testPos, Self: widget(t)}
			fe, _ := fast.CompileValue(r, ctx)
			se, _ := slow.CompileValue(r, ctx)
			fv, ferr := fe.Eval(engine.NewScope(obj))
			sv, serr := se.Eval(engine.NewScope(obj))
			if !reflect.DeepEqual(fv, sv) || fmt.Sprint(ferr) != fmt.Sprint(serr) || errors.Is(ferr, engine.ErrAbsent) != errors.Is(serr, engine.ErrAbsent) {
				t.Errorf("%s on %s:\n fast %#v, %v\n  CEL %#v, %v", r, name, fv, ferr, sv, serr)
			}
		}
	}
}

// Whole numbers decoded as float64 are integers; fractional ones are an
// error naming the field.
func TestIntegerFieldsAcceptWholeFloats(t *testing.T) {
	b := newBackend(t, Options{})
	obj := objYAML(t, widgetObj)
	obj["spec"].(map[string]any)["replicas"] = float64(4)
	for _, src := range []string{"${self.spec.replicas}", "${self.spec.replicas + 1 - 1}"} {
		e, _ := b.CompileValue(src, &engine.Context{Field: "x", Pos: testPos, Self: widget(t), Expected: schemaYAML(t, expectedSchemas["integer"])})
		v, err := e.Eval(engine.NewScope(obj))
		if err != nil || v != int64(4) {
			t.Errorf("%s = %#v, %v", src, v, err)
		}
	}
	obj["spec"].(map[string]any)["replicas"] = 4.5
	e, _ := b.CompileValue("${self.spec.replicas + 1}", &engine.Context{Field: "x", Pos: testPos, Self: widget(t)})
	_, err := e.Eval(engine.NewScope(obj))
	if want := "expression ${self.spec.replicas + 1}: self.spec.replicas: expected an integer, got number 4.5"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// Results never alias the input object.
func TestResultsAreCopies(t *testing.T) {
	b := newBackend(t, Options{})
	obj := objYAML(t, widgetObj)
	for _, src := range []string{"${self.spec.nested}", "${self.spec.config}", "${self.spec.items}"} {
		e, _ := b.CompileValue(src, &engine.Context{Field: "x", Pos: testPos, Self: widget(t)})
		v, err := e.Eval(engine.NewScope(obj))
		if err != nil {
			t.Fatal(err)
		}
		switch v := v.(type) {
		case map[string]any:
			v["mutated"] = true
		case []any:
			v[0] = "mutated"
		}
	}
	if !reflect.DeepEqual(obj, objYAML(t, widgetObj)) {
		t.Fatal("evaluation results alias the input")
	}
}

// The converted self is built once per scope, whatever the number of
// expressions evaluated on it.
func TestSelfMemoisedPerScope(t *testing.T) {
	b := newBackend(t, Options{})
	e1, _ := b.CompileValue("${self.spec.replicas * 2}", &engine.Context{Field: "x", Pos: testPos, Self: widget(t)})
	e2, _ := b.CompileValue("${self.spec.image + '!'}", &engine.Context{Field: "x", Pos: testPos, Self: widget(t)})
	s := engine.NewScope(objYAML(t, widgetObj))
	if _, err := e1.Eval(s); err != nil {
		t.Fatal(err)
	}
	act1 := e1.(*valueExpr).single.activation(s)
	if _, err := e2.Eval(s); err != nil {
		t.Fatal(err)
	}
	if act2 := e2.(*valueExpr).single.activation(s); act1 != act2 {
		t.Fatal("self converted twice for one scope")
	}
}

func TestConcurrentEval(t *testing.T) {
	b := newBackend(t, Options{})
	ctx := func() *engine.Context { return &engine.Context{Field: "x", Pos: testPos, Self: widget(t)} }
	exprs := []string{
		"${self.metadata.name}-svc", "${self.spec.replicas * 2}", "${self.spec.nested}",
		"${self.spec.objs.map(o, o.name).join(',')}", "${self.spec.config.deep.list[1]}", "${self.metadata.labels}",
	}
	compiled := make([]engine.Expr, len(exprs))
	for i, src := range exprs {
		e, diags := b.CompileValue(src, ctx())
		if len(diags) > 0 {
			t.Fatal(diags)
		}
		compiled[i] = e
	}
	cond, _ := b.CompileCondition("self.spec.tier != 'free' && self.spec.replicas > 1", ctx())
	want := make([]any, len(compiled))
	for i, e := range compiled {
		want[i], _ = e.Eval(engine.NewScope(objYAML(t, widgetObj)))
	}
	obj := objYAML(t, widgetObj) // shared, read-only input
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 200; n++ {
				s := engine.NewScope(obj)
				for i, e := range compiled {
					v, err := e.Eval(s)
					if err != nil || !reflect.DeepEqual(v, want[i]) {
						errs <- fmt.Errorf("%s = %#v, %v", exprs[i], v, err)
						return
					}
				}
				if ok, err := cond.Eval(s); !ok || err != nil {
					errs <- fmt.Errorf("condition = %v, %v", ok, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestToNative(t *testing.T) {
	ts := time.Date(2024, 5, 6, 7, 8, 9, 500, time.UTC)
	for _, tc := range []struct {
		in      ref.Val
		want    any
		wantErr string
	}{
		{types.Int(-3), int64(-3), ""},
		{types.Uint(3), int64(3), ""},
		{types.Uint(math.MaxUint64), nil, "uint 18446744073709551615 is too large for an integer field"},
		{types.Double(1.5), 1.5, ""},
		{types.Double(math.NaN()), nil, "NaN cannot be represented in JSON"},
		{types.String("s"), "s", ""},
		{types.Bool(true), true, ""},
		{types.NullValue, nil, ""},
		{types.Bytes("hi"), "aGk=", ""},
		{types.Timestamp{Time: ts}, "2024-05-06T07:08:09.0000005Z", ""},
		{types.Timestamp{Time: ts.Truncate(time.Second)}, "2024-05-06T07:08:09Z", ""},
		{types.Duration{Duration: 90 * time.Minute}, "1h30m0s", ""},
		{types.OptionalOf(types.Int(1)), int64(1), ""},
		{types.OptionalNone, nil, engine.ErrAbsent.Error()},
		{types.DefaultTypeAdapter.NativeToValue(map[string]any{"a": []any{int64(1), "x"}}), map[string]any{"a": []any{int64(1), "x"}}, ""},
		{types.DefaultTypeAdapter.NativeToValue(map[int64]string{1: "x"}), nil, "map key 1 is int; JSON object keys must be strings"},
		{types.NewErr("boom"), nil, "boom"},
		{types.IntType, nil, "type int is not a value"},
	} {
		got, err := ToNative(tc.in)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("ToNative(%v) error %v, want %s", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ToNative(%v) = %#v, %v; want %#v", tc.in, got, err, tc.want)
		}
	}
}

func TestSelfDeclType(t *testing.T) {
	dt := SelfDeclType(widget(t))
	if dt.TypeName() != "Self" {
		t.Errorf("type name %s", dt.TypeName())
	}
	meta := dt.Fields["metadata"].Type
	for _, f := range []string{"name", "generateName", "__namespace__", "labels", "annotations", "uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp", "finalizers", "ownerReferences"} {
		if _, ok := meta.Fields[f]; !ok {
			t.Errorf("metadata has no %s", f)
		}
	}
	if got := meta.Fields["labels"].Type.CelType().String(); got != "map(string, string)" {
		t.Errorf("labels: %s", got)
	}
	if got := meta.Fields["generation"].Type.CelType().String(); got != "int" {
		t.Errorf("generation: %s", got)
	}
	spec := dt.Fields["spec"].Type
	for field, want := range map[string]string{
		"config": "dyn", "port": "dyn", "replicas": "int", "ratio": "double", "items": "list(string)",
		"foo__dash__bar": "string", "foo-bar": "string", "a__dot__b": "string", "__in__": "int",
	} {
		f, ok := spec.Fields[field]
		if !ok {
			t.Errorf("spec has no %s", field)
			continue
		}
		if got := f.Type.CelType().String(); got != want {
			t.Errorf("spec.%s: %s, want %s", field, got, want)
		}
	}
	// Size estimates: declared bounds, else the request size.
	if got := spec.Fields["bounded"].Type.MaxElements; got != 10 {
		t.Errorf("bounded MaxElements %d", got)
	}
	if got := spec.Fields["bounded"].Type.ElemType.MaxElements; got != 80 {
		t.Errorf("bounded items MaxElements %d", got)
	}
	if got := spec.Fields["items"].Type.MaxElements; got != (3*1024*1024-2)/3 {
		t.Errorf("items MaxElements %d", got)
	}
	if got := spec.Fields["tier"].Type.MaxElements; got != 10 {
		t.Errorf("tier (enum) MaxElements %d", got)
	}
	// No schema: ObjectMeta and dyn spec/status.
	if got := SelfDeclType(nil).Fields["spec"].Type.CelType().String(); got != "dyn" {
		t.Errorf("spec without schema: %s", got)
	}
}

func TestDefaults(t *testing.T) {
	b := newBackend(t, Options{})
	if b.costLimit != validation.StaticEstimatedCostLimit || b.runtimeLimit != celconfig.PerCallLimit {
		t.Errorf("limits %d %d", b.costLimit, b.runtimeLimit)
	}
	if CompatibilityVersion != "1.37" {
		t.Errorf("CompatibilityVersion %s", CompatibilityVersion)
	}
}

func TestSchemaShapes(t *testing.T) {
	s := schemaYAML(t, `
type: object
properties:
  spec:
    type: object
    properties:
      template:
        type: object
        x-kubernetes-embedded-resource: true
        x-kubernetes-preserve-unknown-fields: true
      anyMap:
        type: object
        additionalProperties: true
      raw:
        type: array
        items: {type: object, x-kubernetes-preserve-unknown-fields: true}
      when: {type: string, format: date-time}
      dur: {type: string, format: duration}
`)
	b := newBackend(t, Options{})
	obj := map[string]any{"spec": map[string]any{
		"template": map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p", "labels": map[string]any{"a": "b"}}, "spec": map[string]any{"x": int64(1)}},
		"anyMap":   map[string]any{"k": []any{int64(1)}},
		"raw":      []any{map[string]any{"a": "b"}},
		"when":     "2024-01-02T03:04:05Z",
		"dur":      "5m",
	}}
	for src, want := range map[string]any{
		"${self.spec.template.metadata.labels.a}":    "b",
		"${self.spec.template.kind}":                 "Pod",
		"${self.spec.template.spec.x}":               int64(1),
		"${self.spec.anyMap.k[0]}":                   int64(1),
		"${self.spec.raw[0].a}":                      "b",
		"${timestamp(self.spec.when).getFullYear()}": int64(2024),
		"${duration(self.spec.dur).getMinutes()}":    int64(5),
	} {
		e, diags := b.CompileValue(src, &engine.Context{Field: "x", Pos: testPos, Self: s})
		if len(diags) > 0 {
			t.Errorf("%s: %v", src, diags)
			continue
		}
		if v, err := e.Eval(engine.NewScope(obj)); err != nil || !reflect.DeepEqual(v, want) {
			t.Errorf("%s = %#v, %v; want %#v", src, v, err, want)
		}
	}
}

func TestSchemalessResource(t *testing.T) {
	s := schemaYAML(t, `{type: object, x-kubernetes-preserve-unknown-fields: true}`)
	b := newBackend(t, Options{})
	e, diags := b.CompileValue("${self.spec.a.b}-${self.metadata.name}", &engine.Context{Field: "x", Pos: testPos, Self: s})
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	v, err := e.Eval(engine.NewScope(map[string]any{"metadata": map[string]any{"name": "n"}, "spec": map[string]any{"a": map[string]any{"b": int64(1)}}}))
	if err != nil || v != "1-n" {
		t.Fatalf("Eval = %#v, %v", v, err)
	}
}

package gotmpl

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/engine"
)

var absent = errors.New("absent")

func evalValue(t *testing.T, src string, ctx *engine.Context, obj map[string]any) (any, error) {
	t.Helper()
	e, diags := New(nil).CompileValue(src, ctx)
	if diags.HasErrors() {
		t.Fatalf("%s: %v", src, diags)
	}
	return e.Eval(engine.NewScope(obj))
}

func withV(v any) map[string]any {
	obj := testObject()
	obj["spec"].(map[string]any)["config"] = map[string]any{"v": v}
	return obj
}

// TestGuessCoercion: untyped targets (conversion spec, custom resources)
// coerce the rendered string as the original TryCoerceString did.
func TestGuessCoercion(t *testing.T) {
	ctx := testCtx(t)
	ctx.Coerce = engine.CoerceGuess
	cases := []struct {
		name string
		v    any // spec.config.v
		want any
	}{
		{"integer", "1", int64(1)},
		{"negative", "-7", int64(-7)},
		{"zero is an integer, not false", "0", int64(0)},
		{"one is an integer, not true", "1", int64(1)},
		{"float", "1.5", 1.5},
		{"true", "true", true},
		{"t is ParseBool's true", "t", true},
		{"F is ParseBool's false", "F", false},
		{"TRUE", "TRUE", true},
		{"yes stays a string", "yes", "yes"},
		{"JSON object", `{"a":1,"b":[true]}`, map[string]any{"a": int64(1), "b": []any{true}}},
		{"JSON list", `[1,"x"]`, []any{int64(1), "x"}},
		{"broken JSON stays a string", `{not json`, "{not json"},
		{"NaN stays a string", "NaN", "NaN"},
		{"Inf stays a string", "Inf", "Inf"},
		{"hex float", "0x1p-2", 0.25},
		{"ParseFloat takes Go digit separators", "1_000", 1000.0},
		{"surrounding spaces are trimmed", " 42 ", int64(42)},
		{"empty is null", "", nil},
		{"a float64 field renders 1e+06", 1e6, 1e6},
		{"a whole float64 renders as an integer", 2.0, int64(2)},
		{"large float", 1e21, 1e21},
		{"boolean field", false, false},
		{"map field prints Go syntax", map[string]any{"k": "v"}, "map[k:v]"},
	}
	for _, tc := range cases {
		got, err := evalValue(t, `{{ .spec.config.v }}`, ctx, withV(tc.v))
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %q → %#v, %v; want %#v", tc.name, tc.v, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		src  string
		want any
		err  error
	}{
		{`{{ .spec.missing }}`, nil, engine.ErrAbsent},              // a plain reference to an absent field: unset
		{`{{ .spec.config.nope }}`, nil, engine.ErrAbsent},          // in an open object too
		{`{{ .spec.empty }}`, nil, nil},                             // present but empty: null
		{`{{ .spec.missing }}{{ "" }}`, nil, nil},                   // <no value> → "" → null
		{`x-{{ .spec.missing }}`, "x-", nil},                        // <no value> removed
		{`{{ .spec.big }}`, 1e6, nil},                               // "1e+06"
		{`{{ .spec.replicas }}`, int64(3), nil},                     //
		{`{{ .spec.enabled }}`, true, nil},                          //
		{`{{ .metadata.name }}-{{ .spec.port }}`, "blog-8080", nil}, //
	} {
		got, err := evalValue(t, tc.src, ctx, testObject())
		if !errors.Is(err, tc.err) || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s → %#v, %v; want %#v, %v", tc.src, got, err, tc.want, tc.err)
		}
	}
}

func typ(t string) *structuralschema.Structural {
	return &structuralschema.Structural{Generic: structuralschema.Generic{Type: t}}
}

// TestTypedCoercion: typed targets parse the rendered string as their type.
func TestTypedCoercion(t *testing.T) {
	intOrString := &structuralschema.Structural{Extensions: structuralschema.Extensions{XIntOrString: true}}
	open := &structuralschema.Structural{Extensions: structuralschema.Extensions{XPreserveUnknownFields: true}}
	cases := []struct {
		expected *structuralschema.Structural
		coerce   engine.Coerce
		v        any    // spec.config.v, rendered by "{{ .spec.config.v }}{{ "" }}" (not a plain reference)
		want     any    // or
		err      string // "absent" for engine.ErrAbsent
	}{
		{typ("integer"), engine.CoerceTyped, "2", int64(2), ""},
		{typ("integer"), engine.CoerceTyped, "-0", int64(0), ""},
		{typ("integer"), engine.CoerceTyped, 1e6, int64(1000000), ""}, // "1e+06", a whole float
		{typ("integer"), engine.CoerceTyped, "3.0", int64(3), ""},
		{typ("integer"), engine.CoerceTyped, "2.5", nil, `rendered "2.5", which is not an integer`},
		{typ("integer"), engine.CoerceTyped, "abc", nil, `rendered "abc", which is not an integer`},
		{typ("integer"), engine.CoerceTyped, "", nil, "absent"},
		{typ("boolean"), engine.CoerceTyped, "true", true, ""},
		{typ("boolean"), engine.CoerceTyped, "t", true, ""},
		{typ("boolean"), engine.CoerceTyped, "0", false, ""},
		{typ("boolean"), engine.CoerceTyped, "yes", nil, `rendered "yes", which is not a boolean`},
		{typ("boolean"), engine.CoerceTyped, "", nil, "absent"},
		{typ("string"), engine.CoerceTyped, "", "", ""},
		{typ("string"), engine.CoerceTyped, "007", "007", ""},
		{typ("string"), engine.CoerceTyped, true, "true", ""},
		{typ("number"), engine.CoerceTyped, "1.5", 1.5, ""},
		{typ("number"), engine.CoerceTyped, "2", int64(2), ""},
		{typ("number"), engine.CoerceTyped, "NaN", nil, `rendered "NaN", which is not a number`},
		{typ("object"), engine.CoerceTyped, `{"a":1}`, map[string]any{"a": int64(1)}, ""},
		{typ("object"), engine.CoerceTyped, `[1]`, nil, `rendered "[1]", which is not a JSON object`},
		{typ("object"), engine.CoerceTyped, `map[a:1]`, nil, `which is not an object in JSON (render it with toJson)`},
		{typ("array"), engine.CoerceTyped, `["a","b"]`, []any{"a", "b"}, ""},
		{intOrString, engine.CoerceTyped, "80", int64(80), ""},
		{intOrString, engine.CoerceTyped, "http", "http", ""},
		{open, engine.CoerceTyped, "1", int64(1), ""}, // an open target guesses
		{nil, engine.CoerceTyped, "1", "1", ""},       // no type known: the string
		// A conversion (CoerceGuess) into a typed field parses as the type;
		// empty stays null as in the original.
		{typ("string"), engine.CoerceGuess, "1", "1", ""},
		{typ("string"), engine.CoerceGuess, "", nil, ""},
		{typ("integer"), engine.CoerceGuess, "", nil, ""},
		{typ("integer"), engine.CoerceGuess, "5", int64(5), ""},
	}
	for _, tc := range cases {
		ctx := testCtx(t)
		ctx.Expected, ctx.Coerce = tc.expected, tc.coerce
		got, err := evalValue(t, `{{ .spec.config.v }}{{ "" }}`, ctx, withV(tc.v))
		switch {
		case tc.err == "absent":
			if !errors.Is(err, engine.ErrAbsent) {
				t.Errorf("%s %q: %#v, %v; want ErrAbsent", engine.DescribeSchema(tc.expected), tc.v, got, err)
			}
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %q: %#v, %v; want error %q", engine.DescribeSchema(tc.expected), tc.v, got, err, tc.err)
			}
		case err != nil || !reflect.DeepEqual(got, tc.want):
			t.Errorf("%s %q: %#v, %v; want %#v", engine.DescribeSchema(tc.expected), tc.v, got, err, tc.want)
		}
	}
	// A typed replicas: "{{ .spec.replicas }}" whose field is absent is unset.
	ctx := testCtx(t)
	ctx.Expected = typ("integer")
	obj := testObject()
	delete(obj["spec"].(map[string]any), "replicas")
	if _, err := evalValue(t, `{{ .spec.replicas }}`, ctx, obj); !errors.Is(err, engine.ErrAbsent) {
		t.Errorf("absent replicas: %v, want ErrAbsent", err)
	}
}

// TestConditionTemplate: a `when:` template renders true or false.
func TestConditionTemplate(t *testing.T) {
	b := New(nil)
	for src, want := range map[string]any{
		`{{ .spec.enabled }}`:                           true,
		`{{ .spec.debug }}`:                             false,
		`{{ .spec.missing }}`:                           false, // missing: false
		`{{ eq .spec.tier "enterprise" }}`:              true,
		`{{ and .spec.enabled (gt .spec.replicas 2) }}`: true,
		`{{ .spec.image }}`:                             `the condition rendered "ghost:5"; it must render true or false`,
	} {
		c, diags := b.CompileCondition(src, testCtx(t))
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		got, err := c.Eval(engine.NewScope(testObject()))
		if msg, ok := want.(string); ok {
			if err == nil || err.Error() != msg {
				t.Errorf("%s: %v, want error %q", src, err, msg)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", src, got, err, want)
		}
	}
}

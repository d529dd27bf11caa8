package gotmpl

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// Issue 15 item 3: legacy templates are bounded like CEL expressions — a
// static estimate where the schema (or a literal) bounds their loops, and a
// runtime budget everywhere.

const boundedSchema = `
type: object
properties:
  spec:
    type: object
    properties:
      count: {type: integer}
      text: {type: string}
      items:
        type: array
        maxItems: 32
        items:
          type: object
          properties:
            name: {type: string, maxLength: 32768}
      tags:
        type: array
        items: {type: string}
`

func boundedCtx(t *testing.T) *engine.Context {
	return &engine.Context{Entry: "things", Field: "conversion.paths[0].spec.x", Pos: testPos, Self: schemaOf(t, boundedSchema), SelfVersion: "v1", Coerce: engine.CoerceGuess}
}

func TestStaticCost(t *testing.T) {
	cases := []struct{ src, want string }{
		// The reproduction of issue 15: 1e5 iterations building 1 MB each.
		{`{{ range 100000 }}{{ repeat "a" 1000000 }}{{ end }}`,
			`k.yaml:10:20: [things] conversion.paths[0].spec.x: estimated cost 1e+10 exceeds budget by factor of more than 100x (limit 1e+07): {{ range 100000 }} runs 100000 times; lower the bounds in the schema (maxItems, maxProperties) or simplify the template`},
		// Bounded by maxItems: 32 × 32 iterations of a small body fit.
		{`{{ range .spec.items }}{{ range $.spec.items }}{{ .name }}{{ end }}{{ end }}`, ``},
		// Three nested loops over the same 32 items with a 100 kB string
		// each time: 32768 × 1e4 > 1e7.
		{`{{ range .spec.items }}{{ range $.spec.items }}{{ range $.spec.items }}{{ repeat "x" 100000 }}{{ end }}{{ end }}{{ end }}`,
			`k.yaml:10:20: [things] conversion.paths[0].spec.x: estimated cost 3.3e+08 exceeds budget by factor of 32.8x (limit 1e+07): spec.items has up to 32 items (its maxItems), 3 ranges over it; lower the bounds in the schema (maxItems, maxProperties) or simplify the template`},
		// Unbounded data: no static bound, the runtime budget applies.
		{`{{ range .spec.tags }}{{ repeat "x" 100000 }}{{ end }}`, ``},
	}
	for _, tc := range cases {
		if got := compileErrs(t, tc.src, boundedCtx(t)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.src, got, tc.want)
		}
	}
}

// evalBudget compiles src at ctx and evaluates it on obj, returning the
// error and how long it took.
func evalBudget(t *testing.T, src string, ctx *engine.Context, obj map[string]any) (any, error, time.Duration) {
	t.Helper()
	e, diags := New(nil).CompileValue(src, ctx)
	if diags.HasErrors() {
		t.Fatalf("%s: %v", src, diags)
	}
	start := time.Now()
	v, err := e.Eval(engine.NewScope(obj))
	return v, err, time.Since(start)
}

func TestRuntimeBudget(t *testing.T) {
	long := strings.Repeat("n", 32768)
	items := make([]any, 32)
	for i := range items {
		items[i] = map[string]any{"name": long}
	}
	obj := map[string]any{"spec": map[string]any{"count": int64(1_000_000_000), "items": items, "tags": []any{"a", "b"}, "text": strings.Repeat("t", 200_000)}}
	costMsg := "the template exceeded the runtime cost limit of 1000000 per evaluation (a range runs too often or builds too much text); bound the data it loops over in the schema (maxItems, maxLength) or simplify the template"
	outMsg := "the template wrote more than 1048576 bytes; bound the data it loops over in the schema (maxItems, maxLength) or simplify the template"
	cases := []struct {
		name, src, want string
	}{
		// A loop the schema does not bound: 1e9 iterations stop at the
		// budget (one unit per iteration and node).
		{"long loop", `{{ range .spec.count }}{{ end }}`, costMsg},
		// The nested loop over 32 items of 32 kB that took 4.3 s and 624 MB
		// in /convert: its output stops at 1 MiB.
		{"nested loop output", `{{ range .spec.items }}{{ range $.spec.items }}{{ .name }}{{ end }}{{ end }}`, outMsg},
		// The same loop building strings it does not print: every string
		// a function builds is charged (one unit per ten bytes).
		{"nested loop building strings", `{{ range .spec.items }}{{ range $.spec.items }}{{ $x := printf "%s%s" .name .name }}{{ end }}{{ end }}`, costMsg},
		{"replace that multiplies", `{{ replace .spec.text "" "abcdef" }}`, "error calling replace: replace: the result would be longer than 1048576 bytes"},
		{"printf width", `{{ printf "%99999999d" 1 }}`, "error calling printf: printf: a width or precision of 99999999 is larger than 1048576"},
		{"repeat", `{{ repeat "ab" 600000 }}`, "error calling repeat: repeat: the result would be longer than 1048576 bytes"},
		{"output of two parts", `{{ repeat "a" 600000 }}{{ repeat "b" 600000 }}`, outMsg},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err, took := evalBudget(t, tc.src, boundedCtx(t), obj)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %s", err, tc.want)
			}
			t.Logf("%s: stopped after %v", tc.src, took)
		})
	}
	// Within budget the same templates evaluate.
	v, err, _ := evalBudget(t, `{{ range .spec.tags }}{{ . }}{{ end }}`, boundedCtx(t), obj)
	if err != nil || v != "ab" {
		t.Fatalf("got %v, %v", v, err)
	}
	var be *budgetError
	_, err, _ = evalBudget(t, `{{ range .spec.count }}{{ end }}`, boundedCtx(t), obj)
	if !errors.As(err, &be) {
		t.Fatalf("the budget error is not a *budgetError: %T", err)
	}
}

// The runtime limit is the backend's option (the same --max-runtime-cost
// as CEL's).
func TestRuntimeLimitOption(t *testing.T) {
	e, diags := NewWithOptions(nil, Options{RuntimeCostLimit: 50}).CompileValue(`{{ range .spec.tags }}{{ . }}{{ end }}`, boundedCtx(t))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	tags := make([]any, 20)
	for i := range tags {
		tags[i] = "x"
	}
	_, err := e.Eval(engine.NewScope(map[string]any{"spec": map[string]any{"tags": tags}}))
	if err == nil || !strings.Contains(err.Error(), "runtime cost limit of 50 per evaluation") {
		t.Fatalf("got %v", err)
	}
	tags = tags[:5]
	if _, err := e.Eval(engine.NewScope(map[string]any{"spec": map[string]any{"tags": tags}})); err != nil {
		t.Fatal(err)
	}
}

// Issue 28: a conversion template whose estimate passes the static limit
// (1e7) but exceeds the runtime budget (1e6) fails at run time on objects
// its schema accepts; it is a totality finding (check --strict fails on it,
// check warns), naming the field and why. The same template outside a
// conversion, or one within the budget, is not.
func TestRuntimeCostFinding(t *testing.T) {
	fourDeep := `{{ range .spec.items }}{{ range $.spec.items }}{{ range $.spec.items }}{{ range $.spec.items }}x{{ end }}{{ end }}{{ end }}{{ end }}`
	total := func(t *testing.T) *engine.Context {
		ctx := boundedCtx(t)
		ctx.Total, ctx.TotalSeverity = true, katalog.Acknowledged
		return ctx
	}
	_, diags := New(nil).CompileValue(fourDeep, total(t))
	want := `k.yaml:10:20: acknowledged: [things] conversion.paths[0].spec.x: the template can fail on objects v1 accepts: its estimated cost 3.3e+06 exceeds the runtime budget of 1e+06 one evaluation may spend: spec.items has up to 32 items (its maxItems), 4 ranges over it; lower the bounds in the schema (maxItems, maxProperties) or simplify the template`
	if got := diagString(diags); got != want {
		t.Fatalf("findings %v\nwant %s", diags, want)
	}
	// The finding is right: 32 items, which the schema allows, exceed the
	// budget at run time.
	items := make([]any, 32)
	for i := range items {
		items[i] = map[string]any{"name": "n"}
	}
	if _, err, _ := evalBudget(t, fourDeep, boundedCtx(t), map[string]any{"spec": map[string]any{"items": items}}); err == nil || !strings.Contains(err.Error(), "exceeded the runtime cost limit") {
		t.Fatalf("four ranges over 32 items at run time: %v, want the runtime budget exceeded", err)
	}
	if _, diags := New(nil).CompileValue(fourDeep, boundedCtx(t)); len(diags) != 0 {
		t.Errorf("outside a conversion: %v, want nothing (the runtime budget bounds it)", diags)
	}
	twoDeep := `{{ range .spec.items }}{{ range $.spec.items }}{{ .name }}{{ end }}{{ end }}`
	if _, diags := New(nil).CompileValue(twoDeep, total(t)); len(diags) != 0 {
		t.Errorf("two ranges over 32 items: %v, want nothing", diags)
	}
}

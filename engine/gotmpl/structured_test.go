package gotmpl

import (
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

func cond(field, op, value string) *katalog.Condition {
	return &katalog.Condition{Pos: katalog.Pos{File: "k.yaml", Line: 5, Col: 3}, Field: field, FieldPos: katalog.Pos{File: "k.yaml", Line: 5, Col: 10},
		Operator: op, Value: value, ValuePos: katalog.Pos{File: "k.yaml", Line: 6, Col: 10}}
}

func negated(c *katalog.Condition) *katalog.Condition { c.Negate = true; return c }

func condCtx(t testing.TB) *engine.Context {
	return &engine.Context{Entry: "things", Field: "when", Pos: katalog.Pos{File: "k.yaml", Line: 4, Col: 3}, Self: testSchema(t), SelfVersion: "v1"}
}

func condObject() map[string]any {
	obj := testObject()
	spec := obj["spec"].(map[string]any)
	spec["config"] = map[string]any{"abc": "abc", "tenabc": "10abc", "five": " 5", "nan": "NaN", "tmpl": `{{ .spec.config.nope.x }}`}
	return obj
}

// evalAllWays evaluates conditions compiled to CEL (through a Kubernetes CEL
// environment), evaluated in Go (no CEL backend), and — when the fields are
// dot paths — with each field written as the equivalent template. All must
// agree.
func evalAllWays(t *testing.T, conds []*katalog.Condition, all bool, obj map[string]any) bool {
	t.Helper()
	results := map[string]bool{}
	for name, b := range map[string]*Backend{"cel": New(kubeCEL{}), "go": New(nil)} {
		c, diags := b.CompileStructured(conds, all, condCtx(t))
		if diags.HasErrors() {
			t.Fatalf("%s: %v", name, diags)
		}
		ok, err := c.Eval(engine.NewScope(obj))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		results[name] = ok
	}
	tmpl := make([]*katalog.Condition, len(conds))
	plain := true
	for i, c := range conds {
		cc := *c
		if !isTemplate(c.Field) {
			cc.Field = "{{ ." + c.Field + " }}"
		} else {
			plain = false
		}
		tmpl[i] = &cc
	}
	if plain {
		c, diags := New(kubeCEL{}).CompileStructured(tmpl, all, condCtx(t))
		switch {
		case diags.HasErrors() && strings.Contains(diags.Error(), "printing it gives Go syntax"):
			plain = false // a template may not print a list or map field
		case diags.HasErrors():
			t.Fatalf("template: %v", diags)
		default:
			ok, err := c.Eval(engine.NewScope(obj))
			if err != nil {
				t.Fatal(err)
			}
			results["template"] = ok
		}
	}
	if results["cel"] != results["go"] || plain && results["cel"] != results["template"] {
		t.Errorf("%s: the evaluations disagree: %v", describe(conds), results)
	}
	return results["cel"]
}

func describe(conds []*katalog.Condition) string {
	var d []string
	for _, c := range conds {
		d = append(d, describeCondition(c))
	}
	return strings.Join(d, "; ")
}

// Expected results are derived by hand from condObject() and the original
// operator semantics: the field's %v string ("" when missing), numbers by
// fmt.Sscanf("%f") with "" (and unparsable field values) as 0.
func TestStructuredOperators(t *testing.T) {
	cases := []struct {
		c    *katalog.Condition
		want bool
	}{
		{cond("spec.tier", "equals", "enterprise"), true},
		{cond("spec.tier", "equals", "Enterprise"), false},
		{cond("spec.missing", "equals", ""), true},
		{cond("spec.enabled", "equals", "true"), true},
		{cond("spec.replicas", "equals", "3"), true},
		{cond("spec.big", "equals", "1e+06"), true}, // a float64 prints as 1e+06
		{cond("spec.big", "equals", "1000000"), false},
		{cond("spec.tags", "equals", "[a b]"), true},
		{cond("metadata.labels.tier", "equals", "gold"), true},
		{cond("metadata.labels.nope", "equals", ""), true},
		{cond("spec.tier", "notEquals", "free"), true},
		{cond("spec.missing", "notEquals", ""), false},
		{cond("spec.tier", "contains", "prise"), true},
		{cond("spec.tier", "notContains", "prise"), false},
		{cond("spec.missing", "contains", ""), true},
		{cond("spec.tier", "prefix", "enter"), true},
		{cond("spec.tier", "notPrefix", "enter"), false},
		{cond("spec.tier", "suffix", "prise"), true},
		{cond("spec.tier", "notSuffix", "x"), true},
		{cond("spec.tier", "regex", "^ent.*se$"), true},
		{cond("spec.tier", "regex", "ter"), true}, // unanchored
		{cond("spec.missing", "regex", "^$"), true},
		{cond("spec.tier", "exists", ""), true},
		{cond("spec.tier", "exists", "true"), true},
		{cond("spec.missing", "exists", ""), false},
		{cond("spec.empty", "exists", ""), false},
		{cond("spec.count", "exists", ""), true}, // 0 prints "0": it exists
		{cond("spec.missing", "notExists", ""), true},
		{cond("spec.tier", "notExists", ""), false},
		{cond("spec.replicas", "gt", "2"), true},
		{cond("spec.replicas", "gt", "3"), false},
		{cond("spec.replicas", "gt", ""), true},          // "" is 0
		{cond("spec.missing", "gt", "-1"), true},         // absent is 0
		{cond("spec.config.abc", "gt", "-1"), true},      // unparsable is 0
		{cond("spec.config.abc", "lt", "0"), false},      // …
		{cond("spec.config.tenabc", "gt", "9"), true},    // Sscanf reads 10 from "10abc"
		{cond("spec.config.five", "gte", "5"), true},     // and skips leading spaces
		{cond("spec.config.nan", "gt", "-1e300"), false}, // NaN compares false
		{cond("spec.big", "gt", "999999"), true},
		{cond("spec.ratio", "lt", "2"), true},
		{cond("spec.replicas", "gte", "3"), true},
		{cond("spec.replicas", "lte", "2"), false},
		{cond("spec.replicas", "between", "1,5"), true},
		{cond("spec.replicas", "between", "4,5"), false},
		{cond("spec.replicas", "between", " 3 , 3 "), true},
		{cond("spec.missing", "between", "0,1"), true}, // "" is 0
		{cond("spec.config.abc", "between", "-1,1"), false},
		{cond("spec.config.abc", "notBetween", "-1,1"), false}, // unparsable: neither
		{cond("spec.replicas", "notBetween", "1,2"), true},
		{cond("spec.replicas", "notBetween", "1,5"), false},
		{cond("spec.environment", "in", "staging,production"), true},
		{cond("spec.environment", "in", "staging, production"), true},
		{cond("spec.environment", "in", "staging,prod"), false},
		{cond("spec.missing", "in", ",Pending"), true}, // an empty item matches a missing field
		{cond("spec.tier", "notIn", "free,pro"), true},
		{cond("spec.missing", "notIn", ",x"), false},
		{negated(cond("spec.tier", "equals", "enterprise")), false},
		{negated(cond("spec.missing", "exists", "")), true},
		{negated(cond("spec.config.abc", "between", "-1,1")), true},
	}
	obj := condObject()
	for _, tc := range cases {
		if got := evalAllWays(t, []*katalog.Condition{tc.c}, true, obj); got != tc.want {
			t.Errorf("%s = %v, want %v", describeCondition(tc.c), got, tc.want)
		}
	}
}

func TestStructuredCombination(t *testing.T) {
	obj := condObject()
	yes := cond("spec.tier", "equals", "enterprise")
	no := cond("spec.replicas", "gt", "5")
	for _, tc := range []struct {
		conds []*katalog.Condition
		all   bool
		want  bool
	}{
		{[]*katalog.Condition{yes, no}, true, false},
		{[]*katalog.Condition{yes, no}, false, true},
		{[]*katalog.Condition{yes, yes}, true, true},
		{[]*katalog.Condition{no, no}, false, false},
		{nil, true, true},
		{nil, false, true}, // an empty block holds
	} {
		if got := evalAllWays(t, tc.conds, tc.all, obj); got != tc.want {
			t.Errorf("all=%v %s = %v, want %v", tc.all, describe(tc.conds), got, tc.want)
		}
	}
	c, _ := New(kubeCEL{}).CompileStructured([]*katalog.Condition{yes, negated(cond("spec.replicas", "between", "1,5"))}, false, condCtx(t))
	want := `(legacy.str(self, 'spec.tier') == 'enterprise') || (!(legacy.between(legacy.str(self, 'spec.replicas'), 1.0, 5.0)))`
	if got := c.(*Structured).CEL(); got != want {
		t.Errorf("CEL:\n got %s\nwant %s", got, want)
	}
	if got, want := c.Source(), `spec.tier equals "enterprise" or not (spec.replicas between "1,5")`; got != want {
		t.Errorf("source = %q, want %q", got, want)
	}
}

// Conditions whose field or value is a template (as the original allowed)
// are evaluated in Go, mixed with the CEL ones.
func TestStructuredTemplates(t *testing.T) {
	obj := condObject()
	for _, tc := range []struct {
		conds []*katalog.Condition
		all   bool
		want  bool
	}{
		{[]*katalog.Condition{cond("{{ .metadata.name }}-{{ .spec.tier }}", "equals", "blog-enterprise")}, true, true},
		{[]*katalog.Condition{cond("{{ len .spec.tags }}", "gte", "2")}, true, true},
		{[]*katalog.Condition{cond("spec.tier", "equals", "{{ .spec.tier }}")}, true, true},
		{[]*katalog.Condition{cond("spec.environment", "in", "{{ .spec.environment }},staging")}, true, true},
		// A failing field template fails the condition, before negate.
		{[]*katalog.Condition{cond("{{ .spec.config.nope.x }}", "equals", "")}, true, false},
		{[]*katalog.Condition{negated(cond("{{ .spec.config.nope.x }}", "equals", ""))}, true, true},
		// A failing value template leaves its text to compare.
		{[]*katalog.Condition{cond("spec.config.tmpl", "equals", "{{ .spec.config.nope.x }}")}, true, true},
		// Mixed with CEL conditions.
		{[]*katalog.Condition{cond("spec.tier", "equals", "enterprise"), cond("{{ .spec.port }}", "equals", "8080")}, true, true},
		{[]*katalog.Condition{cond("spec.tier", "equals", "free"), cond("{{ .spec.port }}", "equals", "8080")}, true, false},
		{[]*katalog.Condition{cond("spec.tier", "equals", "free"), cond("{{ .spec.port }}", "equals", "8080")}, false, true},
		{[]*katalog.Condition{cond("spec.tier", "equals", "free"), cond("{{ .spec.port }}", "equals", "1")}, false, false},
	} {
		if got := evalAllWays(t, tc.conds, tc.all, obj); got != tc.want {
			t.Errorf("all=%v %s = %v, want %v", tc.all, describe(tc.conds), got, tc.want)
		}
	}
}

func TestStructuredLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		c    *katalog.Condition
		want string
	}{
		{cond("spec.imagee", "equals", "x"),
			`k.yaml:5:15: [things] when.field: unknown field spec.imagee: spec has no field "imagee" in version v1; did you mean "image"?`},
		{cond("spec.tier.x", "exists", ""),
			`k.yaml:5:20: [things] when.field: spec.tier.x: spec.tier is a string in version v1, which has no fields`},
		{cond("spec.tags.0", "equals", "a"),
			`k.yaml:5:20: [things] when.field: spec.tags.0: spec.tags is a list; a condition field cannot reach inside a list (the original engine always saw an empty value there)`},
		{cond(".spec.tier", "equals", "x"),
			`k.yaml:5:10: [things] when.field: field .spec.tier: condition fields have no leading dot; write spec.tier (the original engine looked up an empty key and always saw an empty value)`},
		{cond("spec..tier", "equals", "x"),
			`k.yaml:5:15: [things] when.field: field spec..tier has an empty step; write a dot path such as spec.tier`},
		// children.<kind> is the CR's children (upstream status conditions
		// read r.data, which holds them: pkg/template/resolver_status.go).
		{cond("children.jbo.status", "exists", ""),
			`k.yaml:5:19: [things] when.field: .children has no key "jbo"; did you mean "job"?`},
		{cond("item.name", "exists", ""),
			`k.yaml:5:10: [things] when.field: .item is not available in this runtime: templates see the custom resource itself (.metadata, .spec, .status)`},
		{cond("spec.tier", "regex", "ent["),
			"k.yaml:6:10: [things] when.regex: regex \"ent[\" does not compile (error parsing regexp: missing closing ]: `[`); the original engine treated the condition as always false"},
		{cond("spec.replicas", "gt", "three"),
			`k.yaml:6:10: [things] when.gt: gt compares numbers, but "three" is not a number; write a number such as "3" (the original engine treated the condition as always false)`},
		{cond("spec.replicas", "between", "1"),
			`k.yaml:6:10: [things] when.between: between takes "min,max" (two numbers), got "1" (the original engine treated the condition as always false)`},
		{cond("spec.tier", "exists", "false"),
			`k.yaml:6:10: [things] when.exists: exists: false does not negate: the original engine still tested exists; write notExists: true, exists: true, or add negate: true`},
		{cond("spec.tier", "typeOf", "mapp"),
			`k.yaml:6:10: [things] when.typeOf: typeOf compares with a type name: string, number, bool, map, slice or null, got "mapp" (the original engine never matched it)`},
		{cond("{{ .spec.tierr }}", "equals", "x"),
			`k.yaml:5:20: [things] when.field: unknown field .spec.tierr: spec has no field "tierr" in version v1; did you mean "tier"?`},
		{cond("{{ randomHex 4 }}", "equals", "x"),
			`k.yaml:5:14: [things] when.field: randomHex makes a new value at every evaluation, so the object would change on every reconcile (drift); use it only in the data of a secret with once: true`},
	} {
		_, diags := New(kubeCEL{}).CompileStructured([]*katalog.Condition{tc.c}, true, condCtx(t))
		if got := diagString(diags); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", describeCondition(tc.c), got, tc.want)
		}
	}
}

// TestCELLibraryOnPlainValues covers the helpers on values that are not
// backed by an unstructured map (other CEL backends, literals).
func TestCELLibraryOnPlainValues(t *testing.T) {
	env, err := cel.NewEnv(CELLibrary(), CELLibrary(), cel.Variable("self", cel.DynType))
	if err != nil {
		t.Fatal(err)
	}
	for src, want := range map[string]any{
		`legacy.str({'spec': {'a': 1, 'b': 'x', 'c': null, 'd': [1, 2]}}, 'spec.a')`: "1",
		`legacy.str({'spec': {'a': 1}}, 'spec.b')`:                                   "",
		`legacy.str({'spec': {'c': null}}, 'spec.c')`:                                "",
		`legacy.str({'spec': {'d': 1.5}}, 'spec.d')`:                                 "1.5",
		`legacy.str({'spec': 'x'}, 'spec.a')`:                                        "",
		`legacy.str(self, 'spec.tier')`:                                              "enterprise",
		`legacy.gt('10abc', 9.5)`:                                                    true,
		`legacy.lt('abc', 0.5)`:                                                      true,
		`legacy.gte('', 0.0)`:                                                        true,
		`legacy.lte('NaN', 1.0)`:                                                     false,
		`legacy.between('', -1.0, 1.0)`:                                              true,
		`legacy.between('x', -1.0, 1.0)`:                                             false,
		`legacy.notBetween('x', -1.0, 1.0)`:                                          false,
		`legacy.notBetween(' 5', 1.0, 2.0)`:                                          true,
	} {
		ast, iss := env.Compile(src)
		if iss.Err() != nil {
			t.Fatalf("%s: %v", src, iss.Err())
		}
		prg, _ := env.Program(ast)
		out, _, err := prg.Eval(map[string]any{"self": types.NewStringInterfaceMap(types.DefaultTypeAdapter, testObject())})
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if out.Value() != want {
			t.Errorf("%s = %v, want %v", src, out.Value(), want)
		}
	}
}

func TestConditionCEL(t *testing.T) {
	for _, tc := range []struct {
		c    *katalog.Condition
		want string
	}{
		{cond("spec.tier", "equals", "it's"), `legacy.str(self, 'spec.tier') == 'it\'s'`},
		{cond("spec.tier", "notIn", "a, b"), `!(legacy.str(self, 'spec.tier') in ['a', 'b'])`},
		{cond("spec.tier", "exists", ""), `!(legacy.str(self, 'spec.tier') in ['', '<no value>'])`},
		{cond("spec.n", "gt", "1e6"), `legacy.gt(legacy.str(self, 'spec.n'), 1e+06)`},
		{cond("spec.n", "lte", "-2"), `legacy.lte(legacy.str(self, 'spec.n'), -2.0)`},
		{cond("spec.n", "lt", "inf"), `legacy.lt(legacy.str(self, 'spec.n'), double('Infinity'))`},
		{cond("spec.n", "notBetween", "0.5,1e3"), `legacy.notBetween(legacy.str(self, 'spec.n'), 0.5, 1000.0)`},
		{negated(cond("spec.tier", "regex", `^a\d$`)), `!(legacy.str(self, 'spec.tier').matches('^a\\d$'))`},
	} {
		got, err := ConditionCEL(tc.c)
		if err != nil || got != tc.want {
			t.Errorf("%s = %s, %v; want %s", describeCondition(tc.c), got, err, tc.want)
		}
	}
	if _, err := ConditionCEL(cond("{{ .x }}", "equals", "a")); err == nil {
		t.Errorf("a template field has no direct CEL form")
	}
}

package gotmpl

import (
	"github.com/google/cel-go/cel"

	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"text/template/parse"

	"github.com/orkspace/orkestra-cel/engine/notes"
)

// The type functions (upstream pkg/note/types.go, docs/04-types.md).

var typesFamily = family{name: "types", functions: []*function{
	{name: "toString", fn: fnToString, translate: trToString, doc: "`toString` (nil gives `\"\"`)"},
	{name: "toInt", fn: fnToInt, translate: trToInt, doc: "`toInt` (truncates: `\"3.7\"` → 3, `true` → 1)"},
	{name: "toFloat", fn: fnToFloat, translate: trToFloat, doc: "`toFloat`"},
	{name: "toBool", fn: fnToBool, translate: trToBool, doc: "`toBool` (true/True/TRUE/1/yes/on and false/…/off/`\"\"`; anything else is an error)"},
	{name: "toJson", fn: fnToJSON, doc: "`toJson`", celDecl: anyFunction("toJson", fnToJSON, cel.StringType, cel.DynType),
		noCEL: "the legacy output is Go's encoding/json of the value as the template holds it, and a CEL value is typed by the schema; call toJson(v) in CEL, which encodes the same way"},
	{name: "typeOf", fn: notes.TypeOf, doc: "`typeOf` (string, number, bool, map, slice, null)", celDecl: anyFunction("typeOf", notes.TypeOf, cel.StringType, cel.DynType),
		noCEL: "a typed field's kind is known at load; call typeOf(v) in CEL for an untyped value (the same names: string, number, bool, map, slice, null)"},
	{name: "typeMap", fn: notes.TypeMap, translate: trTypeMap, doc: "`typeMap X` (X is a map)"},
	typeIs("typeString", "string", vString),
	typeIs("typeNumber", "number", vInt, vDouble),
	typeIs("typeBool", "bool", vBool),
	typeIs("typeList", "slice", vList),
	typeIs("typeNull", "null"),
	{name: "toList", fn: notes.ToList, doc: "`toList S` (comma-separated items, trimmed; `\"\"` gives `[]`)", celDecl: anyFunction("toList", notes.ToList, cel.ListType(cel.StringType), cel.StringType),
		noCEL: "the legacy engine prints a list as Go does ([a b]); call toList(s) in CEL where a list is meant"},
	{name: "len", fn: fnLen, translate: trLen, check: checkLen, doc: "`len` (0 for a missing value)"},
}}

func fnToString(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf("%v", v)
}

// fnToInt truncates: "3.7" and 3.7 give 3, true gives 1.
func fnToInt(v any) (int64, error) {
	if b, ok := v.(bool); ok {
		if b {
			return 1, nil
		}
		return 0, nil
	}
	f, err := toFloat(v)
	if err != nil {
		return 0, fmt.Errorf("toInt: %w", err)
	}
	return int64(f), nil
}

func fnToFloat(v any) (float64, error) {
	f, err := toFloat(v)
	if err != nil {
		return 0, fmt.Errorf("toFloat: %w", err)
	}
	return f, nil
}

// fnToBool accepts booleans, numbers (non-zero is true) and the strings
// true/True/TRUE/1/yes/YES/Yes/on/ON and false/False/FALSE/0/no/NO/No/off/OFF/"".
func fnToBool(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case int, int32, int64, float32, float64:
		f, _ := toFloat(v)
		return f != 0, nil
	case string:
		switch x {
		case "true", "True", "TRUE", "1", "yes", "YES", "Yes", "on", "ON":
			return true, nil
		case "false", "False", "FALSE", "0", "no", "NO", "No", "off", "OFF", "":
			return false, nil
		}
		return false, fmt.Errorf("toBool: unrecognised value %q", x)
	}
	return false, fmt.Errorf("toBool: cannot convert %T", v)
}

func fnToJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("toJson: %w", err)
	}
	return string(b), nil
}

// fnLen replaces the builtin len: 0 for a missing value instead of an error,
// the length of a string (bytes), list or map, and 0 for anything else.
func fnLen(v any) int {
	switch x := v.(type) {
	case nil:
		return 0
	case string:
		return len(x)
	case []any:
		return len(x)
	case map[string]any:
		return len(x)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map, reflect.String:
		return rv.Len()
	}
	return 0
}

// checkLen warns where the original's len gave 0.
func checkLen(c *checker, id *parse.IdentifierNode, args []argInfo) {
	for _, a := range args {
		if isSplit(a.node) {
			c.warn(int(id.Pos), "len counts the items split returns; the original engine's len knew only the object's lists, maps and strings and gave 0 for a split result; count them another way to mean the same in both (for example with a range)")
		}
	}
}

func isSplit(n parse.Node) bool {
	var cmd *parse.CommandNode
	switch x := n.(type) {
	case *parse.PipeNode:
		if len(x.Cmds) > 0 {
			cmd = x.Cmds[len(x.Cmds)-1]
		}
	case *parse.CommandNode:
		cmd = x
	}
	if cmd == nil || len(cmd.Args) == 0 {
		return false
	}
	id, ok := cmd.Args[0].(*parse.IdentifierNode)
	return ok && id.Ident == "split"
}

// ── translations ────────────────────────────────────────────────────────────

func trToString(t *translator, x *call) val {
	t.arity(x, 1, 1)
	return t.str(x.args[0], x.node(0))
}

func trToInt(t *translator, x *call) val {
	t.arity(x, 1, 1)
	a := t.strict(x.args[0])
	switch a.kind {
	case vInt:
		return a
	case vDouble, vNumber:
		return val{kind: vInt, expr: "int(" + a.expr + ")", prec: precPrimary, failsOther: true}
	case vBool:
		return val{kind: vInt, expr: p(a, precOr) + " ? 1 : 0", prec: precTernary}
	case vString:
		return val{kind: vInt, expr: "int(double(" + a.expr + "))", prec: precPrimary, failsOther: true}
	}
	t.failf(x.node(0), "toInt of %s has no exact CEL form", a.kind)
	return val{}
}

func trToFloat(t *translator, x *call) val {
	t.arity(x, 1, 1)
	a := t.strict(x.args[0])
	switch a.kind {
	case vDouble:
		return a
	case vInt:
		return val{kind: vDouble, expr: "double(" + a.expr + ")", prec: precPrimary}
	case vString:
		return val{kind: vDouble, expr: "double(" + a.expr + ")", prec: precPrimary, failsOther: true}
	case vNumber:
		return val{kind: vDouble, expr: a.expr, prec: a.prec}
	case vBool:
		return val{kind: vDouble, expr: p(a, precOr) + " ? 1.0 : 0.0", prec: precTernary}
	}
	t.failf(x.node(0), "toFloat of %s has no exact CEL form", a.kind)
	return val{}
}

func trToBool(t *translator, x *call) val {
	t.arity(x, 1, 1)
	a := t.strict(x.args[0])
	if a.kind == vBool {
		return a
	}
	t.failf(x.node(0), "toBool of %s accepts spellings (yes, on, 1, …) CEL's bool() does not; it has no exact CEL form", a.kind)
	return val{}
}

func trLen(t *translator, x *call) val {
	t.arity(x, 1, 1)
	a := x.args[0]
	switch a.kind {
	case vList:
		return val{kind: vInt, expr: "size(" + orValue(a, "[]") + ")", prec: precPrimary}
	case vMap:
		return val{kind: vInt, expr: "size(" + orValue(a, "{}") + ")", prec: precPrimary}
	case vString:
		if a.ascii {
			return val{kind: vInt, expr: "size(" + orValue(a, "''") + ")", prec: precPrimary}
		}
		t.failf(x.node(0), "len counts bytes, CEL's size() characters, and the string may hold non-ASCII text")
	}
	t.failf(x.node(0), "len of %s has no exact CEL form", a.kind)
	return val{}
}

// trTypeMap: a map is a map when present; anything else never. type()
// reads the value, so it fails where the legacy read failed.
func trTypeMap(t *translator, x *call) val {
	t.arity(x, 1, 1)
	a := x.args[0]
	switch a.kind {
	case vMap:
		if a.opt != nil {
			return val{kind: vBool, expr: p(*a.opt, precPrimary) + ".hasValue()", prec: precPrimary}
		}
		if len(a.fails) == 0 && !a.failsOther {
			return val{kind: vBool, expr: "true", prec: precPrimary, lit: true, nonEmpty: true}
		}
		return val{kind: vBool, expr: "type(" + a.expr + ") == map", prec: precRel}
	case vString, vInt, vDouble, vBool, vList:
		if a.opt == nil && len(a.fails) == 0 && !a.failsOther {
			return val{kind: vBool, expr: "false", prec: precPrimary, lit: false}
		}
		return val{kind: vBool, expr: "type(" + orValue(a, zeroOf(a.kind, x.node(0), t)) + ") == map", prec: precRel}
	}
	if a.dyn && a.plain != nil {
		// whatever the untyped field holds: a map or not (missing: not)
		if a.opt != nil {
			return val{kind: vBool, expr: p(*a.opt, precPrimary) + ".optMap(v, type(v) == map).orValue(false)", prec: precPrimary}
		}
		return val{kind: vBool, expr: "type(" + a.expr + ") == map", prec: precRel}
	}
	t.failf(x.node(0), "typeMap of an untyped value depends on the data")
	return val{}
}

// typeIs is the row of a type predicate (upstream docs/04-types.md): X is of
// that typeOf name, which in CEL is a test of the value's runtime type
// (celTypes; none: null). A typed value's kind is known at load, so where
// reading it cannot fail the answer is a literal.
func typeIs(name, typeOf string, kinds ...vkind) *function {
	celType := map[string]string{"string": "string", "bool": "bool", "slice": "list"}[typeOf]
	test := func(e string) string {
		switch typeOf {
		case "null":
			return "type(" + e + ") == null_type"
		case "number":
			return "(type(" + e + ") == int || type(" + e + ") == double)"
		}
		return "type(" + e + ") == " + celType
	}
	return &function{name: name, fn: func(v any) bool { return notes.TypeOf(v) == typeOf },
		doc: "`" + name + " X` (`typeOf X` is " + typeOf + ")",
		translate: func(t *translator, x *call) val {
			t.arity(x, 1, 1)
			a := x.args[0]
			if a.kind == vOther && !(a.dyn && a.plain != nil) {
				t.failf(x.node(0), "%s of %s depends on the data", name, kindName(a))
			}
			if a.opt != nil {
				o := p(*a.opt, precPrimary)
				if typeOf == "null" {
					return val{kind: vBool, expr: "!" + o + ".hasValue()", prec: precUnary}
				}
				return val{kind: vBool, expr: o + ".optMap(v, " + test("v") + ").orValue(false)", prec: precPrimary}
			}
			if a.kind == vOther || len(a.fails) > 0 || a.failsOther {
				// evaluated as the legacy engine did, failing where it failed
				return val{kind: vBool, expr: test(a.expr), prec: precRel}
			}
			if slices.Contains(kinds, a.kind) {
				return val{kind: vBool, expr: "true", prec: precPrimary, lit: true, nonEmpty: true}
			}
			return val{kind: vBool, expr: "false", prec: precPrimary, lit: false}
		}}
}

package gotmpl

import (
	"fmt"
	"text/template/parse"

	"github.com/orkspace/orkestra-cel/engine/notes"
)

// The conditional functions (upstream pkg/note/conditional.go,
// docs/03-conditional.md).

// valueFirstHint is the pipe-form message of the functions that take a
// value and its fallback.
const valueFirstHint = "%[1]s takes the value first; in the pipe form the piped value would come last and lose; write {{ X | default FALLBACK }} or {{ %[1]s X FALLBACK }}"

var conditionalFamily = family{name: "conditional", functions: []*function{
	{name: "boolTernary", fn: notes.BoolTernary, pipeFirst: true, translate: trBoolTernary,
		doc: "`boolTernary COND A B` (COND must be a real boolean: a missing field or a string is an error)"},
	{name: "default", fn: fnDefault, translate: trDefault,
		doc: "`default` — \"x, else fallback\": `default .spec.x \"y\"`, `default \"y\" .spec.x` and `.spec.x \\| default \"y\"` all mean the same (the order is read from the arguments: a field against a literal; two fields or two literals are rejected — use `coalesce`). Empty means nil, `\"\"`, `0`, `false`, an empty list or map: `.spec.replicas \\| default 2` turns 0 into 2"},
	{name: "coalesce", fn: fnCoalesce, pipeFirst: true, pipeHint: valueFirstHint, translate: trCoalesce,
		doc: "`coalesce A B …` (first non-empty)"},
	{name: "ternary", fn: fnTernary, pipeFirst: true, truthArgs: true, translate: trTernary, check: checkTernary,
		pipeHint: "%[1]s takes the condition first (%[1]s COND A B); in the pipe form the piped value would become the false value; write {{ %[1]s COND A B }}",
		doc:      "`ternary COND A B` (condition first; truthy = non-empty string, non-zero number, `true`, non-empty list or map — so the string `\"false\"` is true)"},
	{name: "boolDefault", fn: fnBoolDefault, pipeFirst: true, pipeHint: valueFirstHint, translate: trBoolDefault,
		doc: "`boolDefault X B` (X when it is a boolean, `false` included; else B)"},
	{name: "empty", fn: isEmpty, truthArgs: true, translate: trEmpty, doc: "`empty X`"},
	{name: "notEmpty", fn: fnNotEmpty, truthArgs: true, translate: trEmpty, doc: "`notEmpty X`"},
	{name: "eqTernary", fn: notes.EqTernary, pipeFirst: true, translate: trEqTernary,
		doc: "`eqTernary X TARGET A B` (A when X, printed, equals the string TARGET; else B)"},
}}

// isEmpty is the original engine's notion of empty: nil, "", "<no value>",
// false, numeric zero, an empty list or map — and anything whose %v is "".
func isEmpty(v any) bool {
	if v == nil {
		return true
	}
	switch x := v.(type) {
	case string:
		return x == "" || x == "<no value>"
	case bool:
		return !x
	case int:
		return x == 0
	case int32:
		return x == 0
	case int64:
		return x == 0
	case float32:
		return x == 0
	case float64:
		return x == 0
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return fmt.Sprintf("%v", v) == ""
}

func fnNotEmpty(v any) bool { return !isEmpty(v) }

// fnDefault takes (fallback, value); the parser puts `default VALUE FALLBACK`
// (value first) into this order.
func fnDefault(fallback, value any) any {
	if isEmpty(value) {
		return fallback
	}
	return value
}

func fnCoalesce(vals ...any) any {
	for _, v := range vals {
		if !isEmpty(v) {
			return v
		}
	}
	return nil
}

// fnBoolDefault is v when it is a boolean, else def (upstream
// docs/03-conditional.md: for a boolean field that may be absent).
func fnBoolDefault(v any, def bool) bool {
	if b, ok := v.(bool); ok {
		return b
	}
	return def
}

// fnTernary is the original engine's ternary: condition first (not Sprig's
// order), truthy by Go rules.
func fnTernary(cond, ifTrue, ifFalse any) any {
	if isTruthy(cond) {
		return ifTrue
	}
	return ifFalse
}

func isTruthy(v any) bool {
	if v == nil {
		return false
	}
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return x != ""
	case int:
		return x != 0
	case int8:
		return x != 0
	case int16:
		return x != 0
	case int32:
		return x != 0
	case int64:
		return x != 0
	case uint:
		return x != 0
	case uint8:
		return x != 0
	case uint16:
		return x != 0
	case uint32:
		return x != 0
	case uint64:
		return x != 0
	case float32:
		return x != 0
	case float64:
		return x != 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

// checkTernary warns where the original read an integer condition
// differently: only where it read the object's integers as int64 (its
// /convert decoded them as float64, whose 0 it held false).
func checkTernary(c *checker, id *parse.IdentifierNode, args []argInfo) {
	if len(args) == 0 || c.conversion {
		return
	}
	a := argText(args[0].node)
	switch {
	case isIntegerArg(args[0]):
		c.warn(int(id.Pos), fmt.Sprintf("ternary reads the integer %s as false when it is 0, as Go and the original's docs do; the original engine read every integer, 0 included, as true (its truthiness compared an int64 with an int); write ternary (ne %s 0) … to mean the same in both", a, a))
	case mayBeInteger(args[0]):
		c.warn(int(id.Pos), fmt.Sprintf("ternary reads %s, which the schema lets hold an integer, as false when it is the integer 0, as Go and the original's docs do; the original engine read every integer, 0 included, as true (its truthiness compared an int64 with an int); give the field a type (a boolean or a string reads the same in both; for a number write ternary (ne %s 0) …)", a, a))
	}
}

// ── translations ────────────────────────────────────────────────────────────

func trDefault(t *translator, x *call) val {
	t.arity(x, 2, 2)
	return t.dflt(x.args[0], x.args[1], x.node(0), x.node(1))
}

func trCoalesce(t *translator, x *call) val {
	t.arity(x, 1, -1)
	last := x.args[len(x.args)-1]
	if last.mayNil() || !last.nonEmpty {
		t.failf(x.id, "coalesce yields nothing when every argument is empty, and its last argument may be empty; end it with a literal, e.g. coalesce .spec.a .spec.b \"default\"")
	}
	r := last
	for i := len(x.args) - 2; i >= 0; i-- {
		r = t.dflt(r, x.args[i], x.node(i+1), x.node(i))
	}
	return r
}

func trTernary(t *translator, x *call) val {
	t.arity(x, 3, 3)
	for i := 1; i <= 2; i++ {
		if !covered(x.args[i], x.args[0]) {
			t.failf(x.node(i), "this alternative can fail (a field of a missing value) where the condition does not; the legacy engine evaluated both alternatives")
		}
	}
	a, b := t.unify(x.args[1], x.args[2], x.node(1), x.node(2))
	return t.choose(t.truthy(x.args[0], x.node(0)), truthPrec(x.args[0]), a, b)
}

// trEqTernary: a string compared with the target (a value of another kind
// is compared as printed, which has no exact CEL form).
func trEqTernary(t *translator, x *call) val {
	t.arity(x, 4, 4)
	if x.args[0].kind != vString {
		t.failf(x.node(0), "eqTernary compares %s as the legacy engine prints it, which has no exact CEL form; compare a string", kindName(x.args[0]))
	}
	// a missing value prints as ""
	v := val{expr: orValue(x.args[0], "''"), prec: precPrimary}
	if x.args[0].opt == nil {
		v.prec = x.args[0].prec
	}
	target := t.want(x.args[1], vString, x.name(), x.node(1))
	for i := 2; i <= 3; i++ {
		if !covered(x.args[i], x.args[0]) {
			t.failf(x.node(i), "this alternative can fail where the value does not; the legacy engine evaluated both alternatives")
		}
	}
	a, b := t.unify(x.args[2], x.args[3], x.node(2), x.node(3))
	return t.choose(p(v, precRel)+" == "+p(target, precRel), precRel, a, b)
}

func trBoolTernary(t *translator, x *call) val {
	t.arity(x, 3, 3)
	c := t.want(x.args[0], vBool, x.name(), x.node(0))
	for i := 1; i <= 2; i++ {
		if !covered(x.args[i], x.args[0]) {
			t.failf(x.node(i), "this alternative can fail where the condition does not; the legacy engine evaluated both alternatives")
		}
	}
	a, b := t.unify(x.args[1], x.args[2], x.node(1), x.node(2))
	return t.choose(c.expr, c.prec, a, b)
}

// trBoolDefault: a boolean that may be missing, with a literal fallback
// (CEL evaluates it only when needed; a literal cannot fail).
func trBoolDefault(t *translator, x *call) val {
	t.arity(x, 2, 2)
	v, def := x.args[0], x.args[1]
	if _, ok := def.lit.(bool); !ok {
		t.failf(x.node(1), "boolDefault's fallback has an exact CEL form only as true or false")
	}
	if v.kind != vBool {
		t.failf(x.node(0), "boolDefault has an exact CEL form only for a boolean (%s): otherwise what it gives depends on the value's type at run time", kindName(v))
	}
	return val{kind: vBool, expr: orValue(v, def.expr), prec: map[bool]int{true: precPrimary, false: v.prec}[v.opt != nil]}
}

// trEmpty is empty and notEmpty.
func trEmpty(t *translator, x *call) val {
	t.arity(x, 1, 1)
	tr := t.truthy(x.args[0], x.node(0))
	if x.name() == "empty" {
		return val{kind: vBool, expr: "!" + paren(tr, truthPrec(x.args[0]), precUnary), prec: precUnary}
	}
	return val{kind: vBool, expr: tr, prec: truthPrec(x.args[0])}
}

// dflt is `default fb v`: v unless it is empty (nil, "", 0, false, an
// empty list or map), else fb.
func (t *translator) dflt(fb, v val, nfb, nv parse.Node) val {
	out := t.dflt0(fb, v, nfb, nv)
	u := union(fb, v)
	out.fails, out.failsOther = append(out.fails, u.fails...), out.failsOther || u.failsOther
	return out
}

func (t *translator) dflt0(fb, v val, nfb, nv parse.Node) val {
	if fb.mayNil() {
		t.failf(nfb, "the fallback may itself be missing, which has no exact CEL form here")
	}
	lazy := func() {
		// CEL evaluates the fallback only when needed; the legacy engine
		// always did, failing with it
		if !covered(fb, v) {
			t.failf(nfb, "the fallback can fail (a field of a missing value) where the value does not; the legacy engine evaluated both")
		}
	}
	if !v.mayNil() && v.nonEmpty {
		lazy()
		return v // never empty
	}
	k := v.kind
	if c, ok := relit(fb, k); ok {
		fb = c
	}
	if v.kind != fb.kind {
		// the result is one or the other, printed
		lazy()
		cond := t.truthy(v, nv)
		return t.choose(cond, truthPrec(v), t.presentStr(v, nv), t.presentStr(fb, nfb))
	}
	if v.opt != nil && v.nonEmpty {
		// present means non-empty: the optional's own default is exact
		// (orValue evaluates its argument only when needed)
		lazy()
		return val{kind: k, elem: v.elem, expr: p(*v.opt, precPrimary) + ".orValue(" + fb.expr + ")", prec: precPrimary,
			nonEmpty: fb.nonEmpty, noEdgeSpace: v.noEdgeSpace && fb.noEdgeSpace, noSpace: v.noSpace && fb.noSpace, ascii: v.ascii && fb.ascii}
	}
	lazy()
	cond := t.truthy(v, nv)
	out := t.choose(cond, truthPrec(v), strictOf(v), fb)
	out.nonEmpty = fb.nonEmpty
	return out
}

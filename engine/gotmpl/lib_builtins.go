package gotmpl

import (
	"fmt"
	"strconv"
	"strings"
	"text/template/parse"
)

// Go's text/template builtins, with the original engine's overrides
// (print and println as fmt's).

var builtinFamily = family{name: "text/template builtins", functions: []*function{
	{name: "and", min: 1, max: -1, truthArgs: true, shortCircuit: true, translate: trAndOr, doc: "`and`"},
	{name: "or", min: 1, max: -1, truthArgs: true, shortCircuit: true, translate: trAndOr, doc: "`or` (stop at the deciding argument)"},
	{name: "not", min: 1, max: 1, truthArgs: true, translate: trNot, doc: "`not`"},
	{name: "index", min: 1, max: -1, translate: trIndex, doc: "`index X K…`"},
	{name: "slice", min: 1, max: -1, doc: "`slice`",
		noCEL: "slice cuts a string at byte offsets, CEL's substring at characters"},
	{name: "print", fn: fmt.Sprint, doc: "`print`",
		noCEL: "print puts a space only between two operands that are not strings (fmt.Sprint), which depends on the values' Go types"},
	{name: "println", fn: fmt.Sprintln, doc: "`println`",
		noCEL: "println formats each operand with %v, which depends on its Go type, and adds a newline"},
	{name: "eq", min: 2, max: -1, translate: trEq, check: checkCompare, doc: "`eq A B…` (A equals any of the others)"},
	{name: "ne", min: 2, max: 2, translate: trNe, check: checkCompare, doc: "`ne`"},
	{name: "lt", min: 2, max: 2, translate: trCompare, check: checkCompare, doc: "`lt`"},
	{name: "le", min: 2, max: 2, translate: trCompare, check: checkCompare, doc: "`le`"},
	{name: "gt", min: 2, max: 2, translate: trCompare, check: checkCompare, doc: "`gt`"},
	{name: "ge", min: 2, max: 2, translate: trCompare, check: checkCompare, doc: "`ge`"},
	{name: "html", min: 0, max: -1, doc: "`html`", noCEL: "Kubernetes' CEL has no HTML escaping"},
	{name: "js", min: 0, max: -1, doc: "`js`", noCEL: "Kubernetes' CEL has no JavaScript escaping"},
	{name: "urlquery", min: 0, max: -1, doc: "`urlquery`", noCEL: "Kubernetes' CEL has no URL query escaping"},
}}

// checkCompare: an integer field of a conversion compared as the
// original's /convert did (as a float64).
func checkCompare(c *checker, id *parse.IdentifierNode, args []argInfo) {
	for _, a := range args {
		if isIntegerArg(a) {
			c.floatWarning(int(id.Pos), a)
			return
		}
	}
}

// ── translations ────────────────────────────────────────────────────────────

func trNot(t *translator, x *call) val {
	t.arity(x, 1, 1)
	return val{kind: vBool, expr: "!" + paren(t.truthy(x.args[0], x.node(0)), truthPrec(x.args[0]), precUnary), prec: precUnary}
}

func trAndOr(t *translator, x *call) val {
	t.arity(x, 1, -1)
	return t.andOr(x)
}

// trIndex walks the raw key nodes.
func trIndex(t *translator, x *call) val {
	t.arity(x, 2, -1)
	return t.index(x.args[0], x.nodes[1:], x.node(0), false)
}

func trEq(t *translator, x *call) val {
	t.arity(x, 2, -1)
	return t.eq(x, false)
}

func trNe(t *translator, x *call) val {
	t.arity(x, 2, 2)
	return t.eq(x, true)
}

// trCompare is lt, le, gt and ge.
func trCompare(t *translator, x *call) val {
	t.arity(x, 2, 2)
	a, b := t.strict(x.args[0]), t.strict(x.args[1])
	if a.kind != b.kind || a.kind != vString && a.kind != vInt && a.kind != vDouble {
		t.failf(x.id, "%s compares %s with %s; the legacy engine failed unless both are strings, integers or numbers", x.name(), a.kind, b.kind)
	}
	op := map[string]string{"lt": " < ", "le": " <= ", "gt": " > ", "ge": " >= "}[x.name()]
	return val{kind: vBool, expr: p(a, precRel+1) + op + p(b, precRel+1), prec: precRel}
}

// andOr is and and or.
func (t *translator) andOr(x *call) val {
	name, args, node := x.name(), x.args, x.node
	allBool, boolTruth := true, true
	for _, a := range args {
		if a.kind != vBool || a.mayNil() || a.truth != "" {
			allBool = false
		}
		if a.kind != vBool && !a.boolTruth {
			boolTruth = false
		}
	}
	op, prec := " && ", precAnd
	if name == "or" {
		op, prec = " || ", precOr
	}
	// The legacy and/or stop at the deciding argument; CEL's && and ||
	// evaluate all, and an error loses to a deciding value. Exact when an
	// argument that fails makes every later one fail too.
	for i := range args {
		for j := i + 1; j < len(args); j++ {
			if !covered(args[i], args[j]) {
				t.failf(node(i), "%s stops at the deciding argument, CEL's %s does not, and this argument can fail where a later one decides", name, strings.TrimSpace(op))
			}
		}
	}
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = paren(t.truthy(a, node(i)), truthPrec(a), prec+1)
	}
	e := strings.Join(parts, op)
	if allBool {
		return val{kind: vBool, expr: e, prec: prec}
	}
	// The legacy and/or yield one of their arguments: only their truth
	// has a CEL form.
	return val{kind: vOther, truth: e, boolTruth: boolTruth, prec: prec}
}

// eq is the text/template eq: arg1 equal to any other argument; a nil
// arg1 equals nothing that is not nil; arguments of different kinds fail.
// ne (two arguments) is its negation.
func (t *translator) eq(x *call, ne bool) val {
	args, node := x.args, x.node
	op := " == "
	if ne {
		op = " != "
	}
	a := args[0]
	switch a.kind {
	case vString, vInt, vBool, vDouble:
	default:
		t.failf(node(0), "eq of %s has no exact CEL form", a.kind)
	}
	var others []string
	zero := zeroOf(a.kind, node(0), t)
	zeroListed := false
	for i, b := range args[1:] {
		if b.kind != a.kind {
			t.failf(node(i+1), "eq compares %s with %s, which the legacy engine rejected", a.kind, b.kind)
		}
		if b.mayNil() {
			t.failf(node(i+1), "eq with an argument after the first that may be missing has no exact CEL form")
		}
		others = append(others, b.expr)
		if b.lit == nil || celLiteralOf(b.lit) == zero {
			zeroListed = true
		}
	}
	lhs := p(a, precRel+1)
	if a.mayNil() {
		if zeroListed && len(others) == 1 {
			return val{kind: vBool, expr: p(*a.opt, precRel+1) + op + "optional.of(" + others[0] + ")", prec: precRel}
		}
		if zeroListed {
			t.failf(node(0), "eq of a value that may be missing with its zero value has no simple CEL form")
		}
		lhs = paren(orValue(a, zero), precPrimary, precRel+1)
	}
	if len(others) == 1 {
		return val{kind: vBool, expr: lhs + op + paren(others[0], args[1].prec, precRel+1), prec: precRel}
	}
	return val{kind: vBool, expr: lhs + " in [" + strings.Join(others, ", ") + "]", prec: precRel}
}

func celLiteralOf(l any) string {
	switch x := l.(type) {
	case string:
		return celString(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return celDouble(x)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

// index is `index X k…` (get: nil-safe at every step): keys are literals.
func (t *translator) index(base val, keys []parse.Node, n parse.Node, safe bool) val {
	if base.at == nil {
		t.failf(n, "index/get of a computed value has no CEL form here")
	}
	st := *base.at
	var last step
	var always, nullable bool
	optSteps := ""
	fails := append([]string(nil), base.fails...)
	failsOther := base.failsOther
	if !safe && base.mayNil() {
		// index of a missing value fails
		fails = append(fails, base.path)
	}
	for ki, k := range keys {
		if ki > 0 && !safe && (!always || nullable) {
			fails = append(fails, pathKey(st.path))
		}
		var key string
		switch x := k.(type) {
		case *parse.StringNode:
			key = x.Text
		case *parse.NumberNode:
			if safe || !x.IsInt || x.Int64 < 0 || st.s == nil || st.s.Type != "array" || st.s.Items == nil {
				t.failf(k, "a list index has an exact CEL form only as a non-negative literal into a typed list")
			}
			// out of range fails in both
			failsOther = true
			last = st
			st = step{s: st.s.Items, expr: st.expr + "[" + strconv.FormatInt(x.Int64, 10) + "]", path: append(append([]string(nil), st.path...), "*")}
			always, nullable = true, st.s.Nullable
			continue
		default:
			t.failf(k, "a key that is not a literal string has no CEL form here")
		}
		last = st
		if safe && optSteps == "" {
			// get reads a missing base as nil too: start from its optional chain
			optSteps = st.expr
			if base.absent != "" {
				optSteps = base.absent
			}
		}
		st, always, nullable = t.next(st, key, k)
		if safe {
			optSteps += optSelect(st.s, key, last.s)
		}
	}
	if len(keys) == 0 {
		return base
	}
	v := t.valueAt(st, n)
	v.at = &st
	v.path = pathKey(st.path)
	v.fails, v.failsOther = fails, failsOther
	if safe {
		v.opt = &val{kind: v.kind, elem: v.elem, expr: optSteps, prec: precPrimary}
		return v
	}
	if !always || nullable {
		if _, isIndex := keys[len(keys)-1].(*parse.NumberNode); isIndex {
			t.failf(n, "a list item that may be null has no exact CEL form here")
		}
		v.opt = &val{kind: v.kind, elem: v.elem, prec: precPrimary, expr: last.expr + optSelect(st.s, st.path[len(st.path)-1], last.s)}
	}
	return v
}

package gotmpl

import (
	"math"
	"strconv"
	"strings"
	"text/template/parse"
	"unicode/utf8"
)

// Functions: each legacy function with its exact CEL form, where it has
// one (see funcs.go for the semantics reproduced).

// call translates a function call. The result fails whenever an argument
// fails (the legacy engine evaluated every argument first) or a typed
// parameter received nil.
func (t *translator) call(id *parse.IdentifierNode, args []val, nodes []parse.Node) val {
	t.strictUsed = t.strictUsed[:0]
	out := t.call0(id, args, nodes)
	if id.Ident == "and" || id.Ident == "or" {
		// They stop at the deciding argument and CEL's && and || let a
		// deciding value win over an error: when the result fails is not
		// a plain union. Known only as "may fail".
		for _, a := range args {
			out.failsOther = out.failsOther || a.failsOther || len(a.fails) > 0
		}
		return out
	}
	for _, a := range args {
		out.fails = append(out.fails, a.fails...)
		out.failsOther = out.failsOther || a.failsOther
	}
	for _, a := range t.strictUsed {
		if a.mayNil() {
			if a.path != "" {
				out.fails = append(out.fails, a.path)
			} else {
				out.failsOther = true
			}
		}
	}
	t.strictUsed = t.strictUsed[:0]
	return out
}

// covered: whenever x fails, by fails too (by is always evaluated, x
// perhaps not).
func covered(x, by val) bool {
	if x.failsOther {
		return false
	}
	for _, q := range x.fails {
		ok := false
		for _, p := range by.fails {
			if p == q || strings.HasPrefix(p, q+"\x00") {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func union(vs ...val) val {
	var out val
	for _, v := range vs {
		out.fails = append(out.fails, v.fails...)
		out.failsOther = out.failsOther || v.failsOther
	}
	return out
}

// call0 translates one function call of the legacy function table.
func (t *translator) call0(id *parse.IdentifierNode, args []val, nodes []parse.Node) val {
	name := id.Ident
	node := func(i int) parse.Node {
		if i < len(nodes) && nodes[i] != nil {
			return nodes[i]
		}
		return id
	}
	arity := func(lo, hi int) {
		if len(args) < lo || hi >= 0 && len(args) > hi {
			t.failf(id, "%s called with %d arguments", name, len(args))
		}
	}
	for i, a := range args {
		if a.truth != "" && name != "not" && name != "and" && name != "or" && name != "ternary" && name != "empty" && name != "notEmpty" {
			t.failf(node(i), "the argument of %s is an and/or over values of different kinds, which has no CEL value", name)
		}
	}
	// index and get walk the raw argument nodes; the other functions are
	// translated by their group.
	switch name {
	case "index":
		arity(2, -1)
		return t.index(args[0], nodes[1:], node(0), false)
	case "get":
		arity(1, -1)
		return t.index(args[0], nodes[1:], node(0), true)
	}
	for _, group := range []func(*parse.IdentifierNode, string, []val, func(int) parse.Node, func(lo, hi int)) (val, bool){
		t.callLogic, t.callStrings, t.callMath, t.callTypes, t.callComparisons, t.callRandom,
	} {
		if v, ok := group(id, name, args, node, arity); ok {
			return v
		}
	}
	if v, ok := t.callUpstream(id, args, node); ok {
		return v
	}
	t.failf(id, "%s has no exact CEL equivalent", name)
	return val{}
}

// callLogic translates the conditionals and logic functions; ok is false for other names.
func (t *translator) callLogic(id *parse.IdentifierNode, name string, args []val, node func(int) parse.Node, arity func(lo, hi int)) (v val, ok bool) {
	switch name {
	case "default":
		arity(2, 2)
		return t.dflt(args[0], args[1], node(0), node(1)), true
	case "getOr":
		arity(2, 2)
		return t.dflt(args[1], args[0], node(1), node(0)), true
	case "coalesce":
		arity(1, -1)
		last := args[len(args)-1]
		if last.mayNil() || !last.nonEmpty {
			t.failf(id, "coalesce yields nothing when every argument is empty, and its last argument may be empty; end it with a literal, e.g. coalesce .spec.a .spec.b \"default\"")
		}
		r := last
		for i := len(args) - 2; i >= 0; i-- {
			r = t.dflt(r, args[i], node(i+1), node(i))
		}
		return r, true
	case "ternary":
		arity(3, 3)
		for i := 1; i <= 2; i++ {
			if !covered(args[i], args[0]) {
				t.failf(node(i), "this alternative can fail (a field of a missing value) where the condition does not; the legacy engine evaluated both alternatives")
			}
		}
		a, b := t.unify(args[1], args[2], node(1), node(2))
		return t.choose(t.truthy(args[0], node(0)), truthPrec(args[0]), a, b), true
	case "empty", "notEmpty":
		arity(1, 1)
		tr := t.truthy(args[0], node(0))
		if name == "empty" {
			return val{kind: vBool, expr: "!" + paren(tr, truthPrec(args[0]), precUnary), prec: precUnary}, true
		}
		return val{kind: vBool, expr: tr, prec: truthPrec(args[0])}, true
	case "not":
		arity(1, 1)
		return val{kind: vBool, expr: "!" + paren(t.truthy(args[0], node(0)), truthPrec(args[0]), precUnary), prec: precUnary}, true
	case "and", "or":
		arity(1, -1)
		return t.andOr(name, args, node), true
	}
	return val{}, false
}

// callStrings translates the strings functions; ok is false for other names.
func (t *translator) callStrings(id *parse.IdentifierNode, name string, args []val, node func(int) parse.Node, arity func(lo, hi int)) (v val, ok bool) {
	switch name {
	case "toUpper", "toLower":
		arity(1, 1)
		s := t.want(args[0], vString, name, node(0))
		if !s.ascii {
			t.failf(node(0), "%s changes every Unicode letter, CEL's %s only ASCII ones, and the value may hold non-ASCII text (the schema's enum or pattern would rule it out)", name, map[string]string{"toUpper": "upperAscii()", "toLower": "lowerAscii()"}[name])
		}
		fn := ".upperAscii()"
		if name == "toLower" {
			fn = ".lowerAscii()"
		}
		return val{kind: vString, expr: p(s, precPrimary) + fn, prec: precPrimary, nonEmpty: s.nonEmpty, noEdgeSpace: s.noEdgeSpace, noSpace: s.noSpace, ascii: true}, true
	case "trimSpace":
		arity(1, 1)
		s := t.want(args[0], vString, name, node(0))
		return val{kind: vString, expr: p(s, precPrimary) + ".trim()", prec: precPrimary, nonEmpty: s.nonEmpty && s.noEdgeSpace, noEdgeSpace: true, noSpace: s.noSpace, ascii: s.ascii}, true
	case "trim":
		arity(2, 2)
		s := t.want(args[0], vString, name, node(0))
		if cut, ok := args[1].lit.(string); ok && cut == "" {
			return s, true
		}
		t.failf(id, "trim removes a set of characters, which CEL's strings have no function for; trimSpace is trim() in CEL")
	case "trimPrefix", "trimSuffix":
		arity(2, 2)
		s := t.want(args[0], vString, name, node(0))
		pre := t.want(args[1], vString, name, node(1))
		n := "size(" + pre.expr + ")"
		if lit, ok := pre.lit.(string); ok {
			n = strconv.Itoa(utf8.RuneCountInString(lit))
		}
		var e string
		if name == "trimPrefix" {
			e = p(s, precPrimary) + ".startsWith(" + pre.expr + ") ? " + p(s, precPrimary) + ".substring(" + n + ") : " + p(s, precTernary)
		} else {
			e = p(s, precPrimary) + ".endsWith(" + pre.expr + ") ? " + p(s, precPrimary) + ".substring(0, size(" + s.expr + ") - " + n + ") : " + p(s, precTernary)
		}
		return val{kind: vString, expr: e, prec: precTernary, ascii: s.ascii, noSpace: s.noSpace, noEdgeSpace: s.noSpace}, true
	case "hasPrefix", "hasSuffix", "contains":
		arity(2, 2)
		s := t.want(args[0], vString, name, node(0))
		x := t.want(args[1], vString, name, node(1))
		fn := map[string]string{"hasPrefix": ".startsWith(", "hasSuffix": ".endsWith(", "contains": ".contains("}[name]
		return val{kind: vBool, expr: p(s, precPrimary) + fn + x.expr + ")", prec: precPrimary}, true
	case "replace":
		arity(3, 3)
		s := t.want(args[0], vString, name, node(0))
		old := t.want(args[1], vString, name, node(1))
		nw := t.want(args[2], vString, name, node(2))
		ns := s.noSpace && nw.noSpace
		return val{kind: vString, expr: p(s, precPrimary) + ".replace(" + old.expr + ", " + nw.expr + ")", prec: precPrimary, ascii: s.ascii && nw.ascii, noSpace: ns, noEdgeSpace: ns}, true
	case "split":
		arity(2, 2)
		s := t.want(args[0], vString, name, node(0))
		sep := t.want(args[1], vString, name, node(1))
		e := p(s, precPrimary) + ".split(" + sep.expr + ")"
		ef := strFacts{noSpace: s.noSpace, noEdge: s.noSpace, ascii: s.ascii}
		if !s.nonEmpty {
			// the legacy split of "" is an empty list, CEL's [""]
			if !covered(sep, s) {
				t.failf(node(1), "the separator can fail where the string does not")
			}
			e = p(s, precRel+1) + " == '' ? [] : " + e
			return val{kind: vList, elem: vString, elemFacts: ef, expr: e, prec: precTernary}, true
		}
		return val{kind: vList, elem: vString, elemFacts: ef, expr: e, prec: precPrimary, nonEmpty: true}, true
	case "join":
		arity(2, 2)
		l := args[0]
		if l.kind != vList {
			t.failf(node(0), "join takes a list, %s", kindName(l))
		}
		sep := t.want(args[1], vString, name, node(1))
		list := orValue(l, "[]")
		if l.opt == nil {
			list = p(l, precPrimary)
		}
		switch l.elem {
		case vString:
			ns := l.elemFacts.noSpace && sep.noSpace
			return val{kind: vString, expr: list + ".join(" + sep.expr + ")", prec: precPrimary, noSpace: ns, noEdgeSpace: ns, ascii: l.elemFacts.ascii && sep.ascii}, true
		case vInt, vBool, vDouble:
			return val{kind: vString, expr: list + ".map(x, string(x)).join(" + sep.expr + ")", prec: precPrimary, noSpace: sep.noSpace, noEdgeSpace: sep.noSpace, ascii: sep.ascii}, true
		}
		t.failf(node(0), "join formats each item with %%v; the items here are untyped or composite")
	}
	return val{}, false
}

// callMath translates the math functions; ok is false for other names.
func (t *translator) callMath(id *parse.IdentifierNode, name string, args []val, node func(int) parse.Node, arity func(lo, hi int)) (v val, ok bool) {
	switch name {
	case "add", "sub", "mul":
		arity(2, 2)
		a, b := t.number(args[0], name, node(0)), t.number(args[1], name, node(1))
		op := map[string]string{"add": " + ", "sub": " - ", "mul": " * "}[name]
		prec := precAdd
		if name == "mul" {
			prec = precMul
		}
		if name == "mul" && a.lit == nil && b.lit == nil && intBound(a)*intBound(b) > 1<<53 {
			t.failf(id, "a product of two fields the schema does not bound (maximum/minimum) can pass 2^53, where the legacy engine computed in float64 and CEL's int64 differs or overflows")
		}
		if a.kind == vInt && b.kind == vInt {
			return val{kind: vInt, expr: p(a, prec) + op + p(b, prec+1), prec: prec}, true
		}
		return numberVal(dbl(a, prec)+op+dbl(b, prec+1), prec), true
	case "div":
		arity(2, 2)
		a, b := t.number(args[0], name, node(0)), t.number(args[1], name, node(1))
		if a.kind == vInt && b.kind == vInt {
			// float division, printed as an integer when whole; % fails on
			// a zero divisor as the legacy div did
			pa, pb := p(a, precMul), p(b, precMul+1)
			whole := pa + " % " + pb + " == 0"
			return val{kind: vNumber, prec: precTernary, failsOther: !isNonZeroInt(b.lit),
				expr:     whole + " ? double(" + pa + " / " + pb + ") : double(" + a.expr + ") / double(" + b.expr + ")",
				render:   whole + " ? string(" + pa + " / " + pb + ") : string(double(" + a.expr + ") / double(" + b.expr + "))",
				nonEmpty: false}, true
		}
		if f, ok := b.lit.(float64); ok && f != 0 || isNonZeroInt(b.lit) {
			return numberVal(dbl(a, precMul)+" / "+dbl(b, precMul+1), precMul), true
		}
		t.failf(id, "a floating-point division by a value that may be 0 gives an infinity in CEL, an error in the legacy engine")
	case "mod":
		arity(2, 2)
		a, b := t.number(args[0], name, node(0)), t.number(args[1], name, node(1))
		out := val{kind: vInt, expr: intOf(a, precMul) + " % " + intOf(b, precMul+1), prec: precMul}
		out.failsOther = !isNonZeroInt(b.lit) || a.kind != vInt // a zero divisor, an int() out of range
		return out, true
	case "min", "max":
		arity(2, 2)
		a, b := t.number(args[0], name, node(0)), t.number(args[1], name, node(1))
		fn := "." + name + "()"
		if a.kind == vInt && b.kind == vInt {
			return val{kind: vInt, expr: "[" + a.expr + ", " + b.expr + "]" + fn, prec: precPrimary}, true
		}
		return numberVal("["+dbl(a, 0)+", "+dbl(b, 0)+"]"+fn, precPrimary), true
	case "abs":
		arity(1, 1)
		a := t.number(args[0], name, node(0))
		if a.kind == vInt {
			return val{kind: vInt, expr: p(a, precRel+1) + " < 0 ? -" + p(a, precUnary) + " : " + p(a, precTernary), prec: precTernary}, true
		}
		d := dbl(a, precRel+1)
		return numberVal(d+" < 0.0 ? -"+dbl(a, precUnary)+" : "+dbl(a, precTernary), precTernary), true
	case "clamp":
		arity(3, 3)
		x, lo, hi := t.number(args[0], name, node(0)), t.number(args[1], name, node(1)), t.number(args[2], name, node(2))
		if x.kind != vInt || lo.kind != vInt || hi.kind != vInt {
			t.failf(id, "clamp over numbers that are not all integers has no exact CEL form")
		}
		if !covered(hi, union(x, lo)) {
			t.failf(node(2), "the upper bound can fail where the value and the lower bound do not")
		}
		px := p(x, precRel+1)
		return val{kind: vInt, expr: px + " < " + p(lo, precRel+1) + " ? " + p(lo, precOr) + " : (" + px + " > " + p(hi, precRel+1) + " ? " + p(hi, precOr) + " : " + p(x, precTernary) + ")", prec: precTernary}, true
	}
	return val{}, false
}

// callTypes translates the types functions; ok is false for other names.
func (t *translator) callTypes(id *parse.IdentifierNode, name string, args []val, node func(int) parse.Node, arity func(lo, hi int)) (v val, ok bool) {
	switch name {
	case "toString":
		arity(1, 1)
		return t.str(args[0], node(0)), true
	case "toInt":
		arity(1, 1)
		a := t.strict(args[0])
		switch a.kind {
		case vInt:
			return a, true
		case vDouble, vNumber:
			return val{kind: vInt, expr: "int(" + a.expr + ")", prec: precPrimary, failsOther: true}, true
		case vBool:
			return val{kind: vInt, expr: p(a, precOr) + " ? 1 : 0", prec: precTernary}, true
		case vString:
			return val{kind: vInt, expr: "int(double(" + a.expr + "))", prec: precPrimary, failsOther: true}, true
		}
		t.failf(node(0), "toInt of %s has no exact CEL form", a.kind)
	case "toFloat":
		arity(1, 1)
		a := t.strict(args[0])
		switch a.kind {
		case vDouble:
			return a, true
		case vInt:
			return val{kind: vDouble, expr: "double(" + a.expr + ")", prec: precPrimary}, true
		case vString:
			return val{kind: vDouble, expr: "double(" + a.expr + ")", prec: precPrimary, failsOther: true}, true
		case vNumber:
			return val{kind: vDouble, expr: a.expr, prec: a.prec}, true
		case vBool:
			return val{kind: vDouble, expr: p(a, precOr) + " ? 1.0 : 0.0", prec: precTernary}, true
		}
		t.failf(node(0), "toFloat of %s has no exact CEL form", a.kind)
	case "toBool":
		arity(1, 1)
		a := t.strict(args[0])
		if a.kind == vBool {
			return a, true
		}
		t.failf(node(0), "toBool of %s accepts spellings (yes, on, 1, …) CEL's bool() does not; it has no exact CEL form", a.kind)
	case "len":
		arity(1, 1)
		a := args[0]
		switch a.kind {
		case vList:
			return val{kind: vInt, expr: "size(" + orValue(a, "[]") + ")", prec: precPrimary}, true
		case vMap:
			return val{kind: vInt, expr: "size(" + orValue(a, "{}") + ")", prec: precPrimary}, true
		case vString:
			if a.ascii {
				return val{kind: vInt, expr: "size(" + orValue(a, "''") + ")", prec: precPrimary}, true
			}
			t.failf(node(0), "len counts bytes, CEL's size() characters, and the string may hold non-ASCII text")
		}
		t.failf(node(0), "len of %s has no exact CEL form", a.kind)
	}
	return val{}, false
}

// callComparisons translates the comparisons functions; ok is false for other names.
func (t *translator) callComparisons(id *parse.IdentifierNode, name string, args []val, node func(int) parse.Node, arity func(lo, hi int)) (v val, ok bool) {
	switch name {
	case "eq":
		arity(2, -1)
		return t.eq(args, node, false), true
	case "ne":
		arity(2, 2)
		return t.eq(args, node, true), true
	case "lt", "le", "gt", "ge":
		arity(2, 2)
		a, b := t.strict(args[0]), t.strict(args[1])
		if a.kind != b.kind || a.kind != vString && a.kind != vInt && a.kind != vDouble {
			t.failf(id, "%s compares %s with %s; the legacy engine failed unless both are strings, integers or numbers", name, a.kind, b.kind)
		}
		op := map[string]string{"lt": " < ", "le": " <= ", "gt": " > ", "ge": " >= "}[name]
		return val{kind: vBool, expr: p(a, precRel+1) + op + p(b, precRel+1), prec: precRel}, true

	case "printf":
		return t.printf(id, args, node), true
	}
	return val{}, false
}

// callRandom translates the random values: only in the data of a once: true secret functions; ok is false for other names.
func (t *translator) callRandom(id *parse.IdentifierNode, name string, args []val, node func(int) parse.Node, arity func(lo, hi int)) (v val, ok bool) {
	switch name {
	case "randomHex", "randomAlphanumeric":
		arity(1, 1)
		if !t.random {
			t.failf(id, "%s is allowed only in the data of a once: true secret", name)
		}
		n, ok := args[0].lit.(int64)
		if !ok || n <= 0 {
			t.failf(node(0), "%s takes a positive literal length here", name)
		}
		return val{kind: vString, expr: name + "(" + strconv.FormatInt(n, 10) + ")", prec: precPrimary, nonEmpty: true, noEdgeSpace: true, noSpace: true, ascii: true}, true
	case "uuidv4":
		arity(0, 0)
		if !t.random {
			t.failf(id, "uuidv4 is allowed only in the data of a once: true secret")
		}
		return val{kind: vString, expr: "uuid()", prec: precPrimary, nonEmpty: true, noEdgeSpace: true, noSpace: true, ascii: true}, true
	case "randomBase64":
		t.failf(id, "the legacy randomBase64 uses the URL-safe alphabet (- and _), CEL's randomBase64 the standard one (+ and /); kept legacy so existing consumers see the same alphabet")
	}
	return val{}, false
}

// intBound is the largest magnitude a numeric value may have: a literal's
// own, a field's schema bounds, else +Inf.
func intBound(v val) float64 {
	switch x := v.lit.(type) {
	case int64:
		return math.Abs(float64(x))
	case float64:
		return math.Abs(x)
	}
	if v.at != nil && v.at.s != nil && v.at.s.ValueValidation != nil {
		vv := v.at.s.ValueValidation
		if vv.Minimum != nil && vv.Maximum != nil {
			return math.Max(math.Abs(*vv.Minimum), math.Abs(*vv.Maximum))
		}
	}
	return math.Inf(1)
}

func isNonZeroInt(l any) bool {
	i, ok := l.(int64)
	return ok && i != 0
}

// paren wraps e (of precedence prec) for a position needing min.
func paren(e string, prec, min int) string {
	if prec < min {
		return "(" + e + ")"
	}
	return e
}

// strictOf drops the optional form: the value read strictly (which fails
// when it is missing), where it is known to be present.
func strictOf(v val) val {
	v.opt = nil
	return v
}

// strict is an argument the legacy function took as a typed value (or
// converted, failing on nil): read strictly, failing when it is missing.
func (t *translator) strict(v val) val {
	t.strictUsed = append(t.strictUsed, v)
	return strictOf(v)
}

func (t *translator) want(v val, k vkind, fn string, n parse.Node) val {
	if v.kind != k {
		t.failf(n, "%s takes %s here, %s", fn, k, kindName(v))
	}
	return t.strict(v)
}

// number checks an arithmetic argument: integers and numbers (the legacy
// engine also took numeric strings and booleans, which have no exact form).
func (t *translator) number(v val, fn string, n parse.Node) val {
	switch v.kind {
	case vInt, vDouble, vNumber:
		return t.strict(v)
	}
	t.failf(n, "%s of %s: the legacy engine parsed it as a number, which has no exact CEL form", fn, v.kind)
	return val{}
}

// dbl is a numeric value as a CEL double.
func dbl(v val, min int) string {
	if v.kind == vInt {
		if i, ok := v.lit.(int64); ok {
			return paren(celDouble(float64(i)), precPrimary, min)
		}
		return "double(" + v.expr + ")"
	}
	return p(v, min)
}

func intOf(v val, min int) string {
	if v.kind == vInt {
		return p(v, min)
	}
	return "int(" + v.expr + ")"
}

// numberVal is the legacy number(): a float64 result that prints as an
// integer when whole.
func numberVal(d string, prec int) val {
	e := paren(d, prec, precRel+1)
	return val{kind: vNumber, expr: d, prec: prec, failsOther: true, // int() of a huge result
		render: e + " == double(int(" + d + ")) ? string(int(" + d + ")) : string(" + d + ")"}
}

// choose is cond ? a : b.
func (t *translator) choose(cond string, condPrec int, a, b val) val {
	u := union(a, b)
	return val{kind: a.kind, elem: a.elem, prec: precTernary, fails: u.fails, failsOther: u.failsOther,
		expr:     paren(cond, condPrec, precOr) + " ? " + p(a, precOr) + " : " + p(b, precTernary),
		nonEmpty: a.nonEmpty && b.nonEmpty, noEdgeSpace: a.noEdgeSpace && b.noEdgeSpace, noSpace: a.noSpace && b.noSpace, ascii: a.ascii && b.ascii,
	}
}

// unify gives two alternatives one kind: the same, a literal that prints
// like a value of the other's kind, or both printed as strings.
func (t *translator) unify(a, b val, na, nb parse.Node) (val, val) {
	if a.mayNil() || b.mayNil() {
		n := na
		if !a.mayNil() {
			n = nb
		}
		t.failf(n, "an alternative that may be missing has no exact CEL form here")
	}
	if a.kind == b.kind {
		return a, b
	}
	if c, ok := relit(b, a.kind); ok {
		return a, c
	}
	if c, ok := relit(a, b.kind); ok {
		return c, b
	}
	return t.presentStr(a, na), t.presentStr(b, nb)
}

// relit turns a string literal that prints exactly like a value of kind k
// into that value ("80" for an integer, "true" for a boolean).
func relit(v val, k vkind) (val, bool) {
	s, ok := v.lit.(string)
	if !ok {
		return v, false
	}
	switch k {
	case vInt:
		i, err := strconv.ParseInt(s, 10, 64)
		if err == nil && strconv.FormatInt(i, 10) == s {
			return val{kind: vInt, expr: s, prec: intPrec(i), lit: i, nonEmpty: i != 0}, true
		}
	case vBool:
		if s == "true" || s == "false" {
			return val{kind: vBool, expr: s, prec: precPrimary, lit: s == "true", nonEmpty: s == "true"}, true
		}
	}
	return v, false
}

// presentStr is a value that is not nil as the legacy engine prints it.
func (t *translator) presentStr(v val, n parse.Node) val {
	return t.str(strictOf(v), n)
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

func (t *translator) andOr(name string, args []val, node func(int) parse.Node) val {
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
func (t *translator) eq(args []val, node func(int) parse.Node, ne bool) val {
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

// printf with the verbs whose CEL format is exact: %s of strings, %d of
// integers, %v of strings, integers, booleans and numbers, %f and %.Nf of
// numbers, %%.
func (t *translator) printf(id *parse.IdentifierNode, args []val, node func(int) parse.Node) val {
	if len(args) == 0 {
		t.failf(id, "printf needs a format")
	}
	f, ok := args[0].lit.(string)
	if !ok {
		t.failf(node(0), "printf's format must be a literal string here")
	}
	var b strings.Builder
	ai := 1
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		prec := ""
		if j < len(f) && f[j] == '.' {
			k := j + 1
			for k < len(f) && f[k] >= '0' && f[k] <= '9' {
				k++
			}
			prec = f[j:k]
			j = k
		}
		if j >= len(f) {
			t.failf(id, "printf format %q ends inside a verb", f)
		}
		verb := f[j]
		i = j
		if verb == '%' && prec == "" {
			b.WriteString("%%")
			continue
		}
		if ai >= len(args) {
			t.failf(id, "printf format %q has more verbs than arguments (the legacy output shows %%!%c(MISSING))", f, verb)
		}
		a := args[ai]
		if a.mayNil() {
			t.failf(node(ai), "a printf argument that may be missing prints %%!%c(<nil>) in the legacy engine; it has no CEL form", verb)
		}
		ok := false
		switch verb {
		case 's':
			ok = prec == "" && a.kind == vString
		case 'd':
			ok = prec == "" && a.kind == vInt
		case 'v':
			ok = prec == "" && (a.kind == vString || a.kind == vInt || a.kind == vBool || a.kind == vDouble)
			verb = 's'
		case 'f':
			ok = a.kind == vDouble
		}
		if !ok {
			t.failf(node(ai), "printf %%%s%c of %s has no exact CEL format", prec, f[j], a.kind)
		}
		b.WriteString("%" + prec + string(verb))
		ai++
	}
	if ai != len(args) {
		t.failf(id, "printf has more arguments than verbs (the legacy output shows %%!(EXTRA …))")
	}
	out := stringLit(b.String())
	if len(args) == 1 {
		return stringLit(strings.ReplaceAll(b.String(), "%%", "%"))
	}
	items := make([]string, 0, len(args)-1)
	ascii := isASCII(f)
	noSpace := !strings.ContainsFunc(f, isSpace)
	for _, a := range args[1:] {
		items = append(items, a.expr)
		if a.kind == vString {
			ascii = ascii && a.ascii
			noSpace = noSpace && a.noSpace
		}
	}
	return val{kind: vString, expr: out.expr + ".format([" + strings.Join(items, ", ") + "])", prec: precPrimary, ascii: ascii, noSpace: noSpace, noEdgeSpace: noSpace}
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

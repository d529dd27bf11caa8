package gotmpl

import (
	"strconv"
	"text/template/parse"
	"unicode/utf8"
)

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

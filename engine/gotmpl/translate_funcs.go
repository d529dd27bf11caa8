package gotmpl

import (
	"math"
	"strconv"
	"strings"
	"text/template/parse"
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
	if name, ok := typedArgs[k]; ok && v.dyn && v.plain != nil {
		// text/template passes an untyped value of that Go type and fails
		// on any other (or a missing one): legacy.typed does the same.
		out := t.strict(v)
		out.kind, out.expr, out.prec = k, "legacy.typed("+out.expr+", "+celString(name)+")", precPrimary
		return out
	}
	if v.kind != k {
		t.failf(n, "%s takes %s here, %s", fn, k, kindName(v))
	}
	return t.strict(v)
}

// typedArgs name the kinds an untyped argument can be checked for.
var typedArgs = map[vkind]string{vString: "string", vBool: "bool"}

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

package cel

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"

	"github.com/orkspace/orkestra-cel/engine/jsonval"

	"k8s.io/apimachinery/pkg/util/validation"
)

// The totality analysis finds where an expression can fail on an object its
// `self` schema accepts: a field that is not required read without has(),
// ?. or a guard; a list index, or an index into split(…), beyond what the
// schema guarantees; a lookup in a literal map with a key the schema does
// not confine to the map's keys; an integer division by a value the schema
// allows to be 0; int(), duration(), quantity(), … of a string whose format
// the schema does not guarantee; optional.value() without hasValue();
// fail() on a branch nothing rules out. It is conservative: what it cannot
// prove safe it reports, but what the schema (required, default, pattern,
// enum, minItems, minimum) or a guard (a ternary or && on has(), a size or
// contains test, matches(), ?., orValue) makes safe it never reports.

// totality analyses one checked expression.
type totality struct {
	tree  *schemaTree
	a     *ast.AST
	src   string
	found []problem
	seen  map[string]bool
}

// aval is what the analysis knows of a value.
type aval struct {
	n        *node  // its schema, or nil
	path     string // its field path from self ("spec.hostPort"), or ""
	key      string // a canonical rendering of the expression, for guards
	optional bool   // an optional (of n)
	some     bool   // an optional that certainly holds a value
	// origin is the field a computed string derives from through string
	// functions (trim, lowerAscii, …), or nil.
	origin *aval
	lit    any // a literal's value
	// parts is the least number of items of a split(…) result (0: not a
	// split) and sep its separator.
	parts int
	sep   string
	// mapKeys are the keys of a map literal (nil: not one).
	mapKeys []any
}

// facts are what guards establish on a branch, keyed by expression.
type facts struct {
	present  map[string]bool
	nonzero  map[string]bool
	minSize  map[string]int
	contains map[string][]string
	matches  map[string][]string
}

func (f *facts) with(g *facts) *facts {
	out := &facts{present: map[string]bool{}, nonzero: map[string]bool{}, minSize: map[string]int{}, contains: map[string][]string{}, matches: map[string][]string{}}
	for _, x := range []*facts{f, g} {
		if x == nil {
			continue
		}
		for k, v := range x.present {
			out.present[k] = out.present[k] || v
		}
		for k, v := range x.nonzero {
			out.nonzero[k] = out.nonzero[k] || v
		}
		for k, v := range x.minSize {
			out.minSize[k] = max(out.minSize[k], v)
		}
		for k, v := range x.contains {
			out.contains[k] = append(out.contains[k], v...)
		}
		for k, v := range x.matches {
			out.matches[k] = append(out.matches[k], v...)
		}
	}
	return out
}

// analyseTotality returns where the expression (source src) can fail.
func analyseTotality(tree *schemaTree, a *ast.AST, src string) []problem {
	t := &totality{tree: tree, a: a, src: src, seen: map[string]bool{}}
	t.walk(a.Expr(), (&facts{}).with(nil), map[string]aval{})
	return t.found
}

func (t *totality) report(e ast.Expr, off int, why string) {
	if off < 0 {
		off = max(0, exprByteOffset(t.a, t.src, e.ID()))
	}
	if t.seen[why] {
		return
	}
	t.seen[why] = true
	t.found = append(t.found, problem{off: off, msg: why})
}

// text is the source of sub-expression e, for messages.
func (t *totality) text(e ast.Expr) string {
	runes := []rune(t.src)
	if start, stop, ok := span(t.a, runes, e); ok && start >= 0 && stop <= len(runes) && start < stop {
		return strings.TrimSpace(string(runes[start:stop]))
	}
	return shortKey(exprKeyOf(e))
}

// at is the offset of a selection's field name.
func (t *totality) nameOffset(e ast.Expr) int {
	return skipSelectOperator(t.src, max(0, exprByteOffset(t.a, t.src, e.ID())))
}

func (t *totality) walk(e ast.Expr, f *facts, env map[string]aval) aval {
	switch e.Kind() {
	case ast.IdentKind:
		name := e.AsIdent()
		if name == "self" {
			return aval{n: t.tree.root, key: "self"}
		}
		if v, ok := env[name]; ok {
			return v
		}
		return aval{key: name}
	case ast.LiteralKind:
		v := e.AsLiteral()
		return aval{lit: v.Value(), key: fmt.Sprintf("%#v", v.Value())}
	case ast.SelectKind:
		sel := e.AsSelect()
		op := t.walk(sel.Operand(), f, env)
		if sel.IsTestOnly() {
			return aval{key: "has(" + op.key + "." + sel.FieldName() + ")"}
		}
		return t.field(e, op, sel.FieldName(), false, f)
	case ast.CallKind:
		return t.call(e, f, env)
	case ast.ComprehensionKind:
		return t.comprehension(e, f, env)
	case ast.ListKind:
		for _, x := range e.AsList().Elements() {
			t.walk(x, f, env)
		}
		return aval{key: exprKeyOf(e)}
	case ast.MapKind:
		keys := []any{}
		literal := true
		for _, en := range e.AsMap().Entries() {
			me := en.AsMapEntry()
			k := t.walk(me.Key(), f, env)
			t.walk(me.Value(), f, env)
			if k.lit == nil {
				literal = false
			}
			keys = append(keys, k.lit)
		}
		if !literal {
			keys = nil
		}
		return aval{key: exprKeyOf(e), mapKeys: keys}
	case ast.StructKind:
		for _, x := range e.AsStruct().Fields() {
			t.walk(x.AsStructField().Value(), f, env)
		}
	}
	return aval{key: exprKeyOf(e)}
}

// field selects name of op; optional for `.?name`.
func (t *totality) field(e ast.Expr, op aval, name string, optional bool, f *facts) aval {
	key := op.key + "." + name
	out := aval{key: key, optional: optional || op.optional}
	if op.n == nil {
		return out
	}
	switch op.n.kind {
	case kObject:
		p := op.n.prop(name)
		if p == nil {
			return out
		}
		out.n, out.path = p.n, joinPath(op.path, p.name)
		if optional || t.present(op, p) || f.present[key] {
			return out
		}
		ref := t.text(e)
		t.report(e, t.nameOffset(e), fmt.Sprintf("%s is not required, so an object without it fails here (no such key); make it required or give it a default in the schema, or guard it: has(%s) ? … : …, or %s.orValue(…)",
			out.path, ref, optionalForm(ref)))
	case kMap:
		out.n, out.path = op.n.elem, op.path+"["+strconv.Quote(name)+"]"
		if !optional && !f.present[key] {
			m := shortKey(op.key)
			if op.key != "" && strings.HasPrefix(op.key, "self") {
				m = selfExpr(op.path)
			}
			t.report(e, t.nameOffset(e), fmt.Sprintf("%s may have no key %q, and then this fails (no such key); guard it: %q in %s ? … : …, or look it up with [?%q].orValue(…)",
				op.path, name, name, m, name))
		}
	case kDyn:
		out.n = dynNode
	}
	return out
}

// present reports whether the schema guarantees property p of op.
func (t *totality) present(op aval, p *prop) bool {
	if p.required || p.defaulted {
		return true
	}
	if op.n == t.tree.root {
		// A conversion reads an absent spec as an empty object; apiVersion,
		// kind and metadata are always there.
		switch p.name {
		case "spec", "apiVersion", "kind", "metadata":
			return true
		}
	}
	if op.path == "metadata" {
		switch p.name {
		case "name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp":
			return true
		}
	}
	return false
}

func (t *totality) call(e ast.Expr, f *facts, env map[string]aval) aval {
	call := e.AsCall()
	args := call.Args()
	fn := call.FunctionName()
	switch fn {
	case "_?._":
		op := t.walk(args[0], f, env)
		if name, ok := literalString(args[1]); ok {
			out := t.field(e, op, name, true, f)
			out.optional = true
			return out
		}
	case "_[_]":
		return t.index(e, t.walk(args[0], f, env), args[1], f, env)
	case "_[?_]":
		op := t.walk(args[0], f, env)
		t.walk(args[1], f, env)
		return aval{key: exprKeyOf(e), optional: true, n: elemOf(op.n)}
	case "_?_:_":
		t.walk(args[0], f, env)
		out := aval{key: exprKeyOf(e)}
		never, always := t.alwaysFalse(args[0], f, env), t.alwaysTrue(args[0], f, env)
		if !never {
			if v := t.walk(args[1], f.with(t.cond(args[0], true, f, env)), env); always {
				out = v
			}
		}
		if !always {
			if v := t.walk(args[2], f.with(t.cond(args[0], false, f, env)), env); never {
				out = v
			}
		}
		return out
	case "optional.of":
		v := t.walk(args[0], f, env)
		return aval{key: exprKeyOf(e), n: v.n, path: v.path, optional: true, some: true}
	case "_&&_":
		t.walk(args[0], f, env)
		t.walk(args[1], f.with(t.cond(args[0], true, f, env)), env)
		return aval{key: exprKeyOf(e)}
	case "_||_":
		t.walk(args[0], f, env)
		t.walk(args[1], f.with(t.cond(args[0], false, f, env)), env)
		return aval{key: exprKeyOf(e)}
	case "_/_", "_%_":
		t.walk(args[0], f, env)
		d := t.walk(args[1], f, env)
		t.divisor(e, args[1], d, f)
		return aval{key: exprKeyOf(e)}
	case "fail":
		for _, a := range args {
			t.walk(a, f, env)
		}
		t.report(e, callNameOffset(t.src, max(0, exprByteOffset(t.a, t.src, e.ID())), "fail"),
			"fail(…) is reached by objects the schema accepts: nothing in the schema rules out the branch that calls it; add a pattern or enum that rules those objects out, or convert them instead of failing")
		return aval{key: exprKeyOf(e)}
	}
	var target aval
	if call.IsMemberFunction() {
		target = t.walk(call.Target(), f, env)
	}
	var as []aval
	for _, a := range args {
		as = append(as, t.walk(a, f, env))
	}
	switch {
	case fn == "value" && call.IsMemberFunction() && len(args) == 0:
		if !target.some && !f.present[target.key] {
			t.report(e, -1, fmt.Sprintf("%s.value() fails when the optional is none; use .orValue(…), or test .hasValue() first", t.text(call.Target())))
		}
		return aval{n: target.n, path: target.path, key: target.key}
	case fn == "orValue" && call.IsMemberFunction():
		return aval{n: target.n, path: target.path, key: exprKeyOf(e)}
	case fn == "split" && call.IsMemberFunction() && len(args) == 1:
		sep, ok := as[0].lit.(string)
		out := aval{key: exprKeyOf(e), parts: 1, sep: sep}
		if ok {
			out.parts = 1 + t.separators(target, sep, f)
		}
		return out
	case call.IsMemberFunction() && stringFunctions[fn]:
		// The result of trim(), lowerAscii(), … derives from the same field.
		out := aval{key: exprKeyOf(e), origin: target.origin}
		if out.origin == nil && target.path != "" && target.n != nil && target.n.kind == kString {
			out.origin = &target
		}
		return out
	case !call.IsMemberFunction() && len(args) == 1:
		if target, ok := conversionTargets[fn]; ok {
			t.conversion(e, fn, target, args[0], as[0], f)
		}
		if fn == "json.decode" {
			t.jsonDecode(e, args[0], as[0])
		}
	}
	return aval{key: exprKeyOf(e)}
}

// stringFunctions turn a string into another string derived from it.
var stringFunctions = map[string]bool{
	"trim": true, "lowerAscii": true, "upperAscii": true, "replace": true, "substring": true, "reverse": true, "find": true,
}

// conversionTargets are the conversion functions of a string and the
// strings they certainly accept.
var conversionTargets = map[string]*lang{
	"int": intLang, "uint": uintLang, "double": doubleLang,
	"duration": durationLang, "timestamp": timestampLang, "quantity": quantityLang,
}

var conversionExamples = map[string]string{
	"int": `^-?[0-9]{1,18}$`, "uint": `^[0-9]{1,19}$`, "double": `^-?[0-9]{1,15}(\.[0-9]{1,15})?$`,
	"duration": `^([0-9]{1,6}h)?([0-9]{1,7}m)?([0-9]{1,9}s)?$`, "timestamp": `^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$`,
	"quantity": `^[0-9]{1,12}(m|k|M|G|Ki|Mi|Gi)?$`,
}

// conversion checks fn(arg) for a string arg.
func (t *totality) conversion(e ast.Expr, fn string, target *lang, argExpr ast.Expr, arg aval, f *facts) {
	if tp, ok := t.a.TypeMap()[argExpr.ID()]; !ok || tp.Kind() != types.StringKind {
		return
	}
	if s, ok := arg.lit.(string); ok {
		if enumLang([]string{s}).subsetOf(target) {
			return
		}
	}
	if t.stringIn(arg, target, f) {
		return
	}
	why := ""
	switch {
	case arg.n != nil && arg.n.pattern != "":
		why = fmt.Sprintf("the pattern of %s admits strings %s() rejects", arg.path, fn)
	case arg.path != "":
		why = "no pattern or enum of " + arg.path + " guarantees its format"
	case arg.origin != nil && arg.origin.n.pattern == "" && len(arg.origin.n.enum) == 0:
		why = fmt.Sprintf("it derives from %s, which no pattern or enum constrains", arg.origin.path)
	default:
		return // computed from values this analysis does not follow
	}
	text := t.text(argExpr)
	t.report(e, callNameOffset(t.src, max(0, exprByteOffset(t.a, t.src, e.ID())), fn),
		fmt.Sprintf("%s(%s) fails on values the schema allows (%s); add a pattern such as '%s' (and a maxLength), or guard it: %s.matches('%s') ? … : …",
			fn, text, why, conversionExamples[fn], text, conversionExamples[fn]))
}

// jsonDecode checks json.decode(arg): a schema guarantees JSON only by an
// enum of JSON documents.
func (t *totality) jsonDecode(e, argExpr ast.Expr, arg aval) {
	src := arg
	if src.path == "" && src.origin != nil {
		src = *src.origin
	}
	if src.path == "" || src.n == nil {
		return // computed (json.encode(…), a literal): not followed
	}
	if len(src.n.enum) > 0 {
		all := true
		for _, v := range src.n.enum {
			s, ok := v.(string)
			all = all && ok && json.Valid([]byte(s))
		}
		if all {
			return
		}
	}
	t.report(e, -1, fmt.Sprintf("json.decode(%s) fails when %s does not hold JSON, which the schema cannot rule out; decode only what a conversion wrote with json.encode, or keep the value a plain string", t.text(argExpr), src.path))
}

// stringIn reports whether every value of string arg is in l.
func (t *totality) stringIn(arg aval, l *lang, f *facts) bool {
	for _, re := range f.matches[arg.key] {
		if re == isQuantityFact {
			if l == quantityLang {
				return true
			}
			continue
		}
		if g, ok := patternLang(re, 0); ok && g.subsetOf(l) {
			return true
		}
	}
	if arg.n == nil || arg.n.kind != kString {
		return false
	}
	if len(arg.n.enum) > 0 {
		vals := make([]string, 0, len(arg.n.enum))
		for _, v := range arg.n.enum {
			s, ok := v.(string)
			if !ok {
				return false
			}
			vals = append(vals, s)
		}
		return enumLang(vals).subsetOf(l)
	}
	if arg.n.pattern != "" {
		if p, ok := patternLang(arg.n.pattern, arg.n.maxLength); ok && p.subsetOf(l) {
			return true
		}
	}
	return false
}

// separators is the least number of times sep occurs in the string s.
func (t *totality) separators(s aval, sep string, f *facts) int {
	n := 0
	for _, c := range f.contains[s.key] {
		if strings.Contains(c, sep) {
			n = max(n, 1)
		}
	}
	r, size := utf8.DecodeRuneInString(sep)
	single := size == len(sep) && sep != ""
	if single {
		for _, re := range f.matches[s.key] {
			n = max(n, minCount(re, r))
		}
	}
	if s.n == nil || s.n.kind != kString {
		return n
	}
	if single && s.n.pattern != "" {
		n = max(n, minCount(s.n.pattern, r))
	}
	if len(s.n.enum) > 0 {
		least := -1
		for _, v := range s.n.enum {
			str, _ := v.(string)
			if c := strings.Count(str, sep); least < 0 || c < least {
				least = c
			}
		}
		n = max(n, least)
	}
	return n
}

// index checks op[idx].
func (t *totality) index(e ast.Expr, op aval, idxExpr ast.Expr, f *facts, env map[string]aval) aval {
	idx := t.walk(idxExpr, f, env)
	out := aval{key: exprKeyOf(e), n: elemOf(op.n)}
	i, isInt := idx.lit.(int64)
	switch {
	case op.parts > 0 && isInt:
		if int(i) >= max(op.parts, f.minSize[op.key]) {
			text := t.text(e.AsCall().Args()[0])
			t.report(e, -1, fmt.Sprintf("%s has fewer than %d items for strings the schema allows (no pattern requires %d %q); add a pattern that does, or guard it: %s.size() > %d ? … : …",
				text, i+1, i, op.sep, text, i))
		}
	case op.n != nil && op.n.kind == kList && isInt:
		out.path = fmt.Sprintf("%s[%d]", op.path, i)
		if i >= max(op.n.minItems, int64(f.minSize[op.key])) {
			t.report(e, -1, fmt.Sprintf("%s may have fewer than %d items (minItems is %d); add minItems: %d to the schema, or guard it: size(%s) > %d ? … : …",
				op.path, i+1, op.n.minItems, i+1, selfExpr(op.path), i))
		}
	case op.n != nil && op.n.kind == kMap:
		if name, ok := idx.lit.(string); ok {
			return t.field(e, op, name, false, f)
		}
	case op.mapKeys != nil && idx.lit != nil && !slices.ContainsFunc(op.mapKeys, func(k any) bool { return jsonval.Equal(k, idx.lit) }):
		// {'': 0}['message'], the way to fail with a message before
		// fail(): it fails wherever it is reached, as fail() does.
		t.report(e, -1, fmt.Sprintf("%s is not a key of the map, so the lookup fails wherever it is reached, and nothing in the schema rules out the branch that reaches it; add a pattern or enum that rules those objects out, or convert them instead of failing",
			t.text(idxExpr)))
	case op.mapKeys != nil && len(op.mapKeys) == 0 && idx.lit == nil:
		t.report(e, -1, "a lookup in an empty map always fails; to fail on purpose write fail('…'), and make sure the schema rules out the objects that reach it")
	case op.mapKeys != nil && idx.lit == nil:
		if !t.valuesIn(idx, op.mapKeys) {
			text := t.text(idxExpr)
			what := text
			if idx.path != "" {
				what = idx.path
			}
			t.report(e, -1, fmt.Sprintf("the schema allows values of %s that are not keys of the map (%s); add an enum of those keys to the schema, or look it up with a default: {…}[?%s].orValue(…)",
				what, literalList(op.mapKeys), text))
		}
	}
	return out
}

// valuesIn reports whether every value of v is one of keys.
func (t *totality) valuesIn(v aval, keys []any) bool {
	if v.n == nil {
		return false
	}
	has := func(x any) bool {
		for _, k := range keys {
			if jsonval.Equal(k, x) {
				return true
			}
		}
		return false
	}
	if len(v.n.enum) > 0 {
		for _, x := range v.n.enum {
			if !has(x) {
				return false
			}
		}
		return true
	}
	if v.n.kind == kInt && v.n.minimum != nil && v.n.maximum != nil {
		lo, hi := int64(v.n.minimum.v), int64(v.n.maximum.v)
		if v.n.minimum.exclusive {
			lo++
		}
		if v.n.maximum.exclusive {
			hi--
		}
		if hi-lo > 256 {
			return false
		}
		for x := lo; x <= hi; x++ {
			if !has(x) {
				return false
			}
		}
		return true
	}
	return false
}

// divisor checks the divisor of an integer division or modulo.
func (t *totality) divisor(e, dExpr ast.Expr, d aval, f *facts) {
	tp, ok := t.a.TypeMap()[dExpr.ID()]
	if !ok || (tp.Kind() != types.IntKind && tp.Kind() != types.UintKind) {
		return // a double divided by zero is an infinity, not an error
	}
	switch x := d.lit.(type) {
	case int64:
		if x != 0 {
			return
		}
	case uint64:
		if x != 0 {
			return
		}
	}
	if f.nonzero[d.key] || excludesZero(d.n) {
		return
	}
	text := t.text(dExpr)
	what := text
	if d.path != "" {
		what = d.path
	}
	t.report(e, -1, fmt.Sprintf("the divisor %s may be 0 on objects the schema allows; add minimum: 1 to the schema, or guard it: %s != 0 ? … : …", what, text))
}

func excludesZero(n *node) bool {
	if n == nil {
		return false
	}
	if n.minimum != nil && (n.minimum.v > 0 || (n.minimum.v == 0 && n.minimum.exclusive)) {
		return true
	}
	if n.maximum != nil && (n.maximum.v < 0 || (n.maximum.v == 0 && n.maximum.exclusive)) {
		return true
	}
	if len(n.enum) > 0 {
		for _, v := range n.enum {
			if jsonval.Equal(v, int64(0)) {
				return false
			}
		}
		return true
	}
	return false
}

func (t *totality) comprehension(e ast.Expr, f *facts, env map[string]aval) aval {
	c := e.AsComprehension()
	rng := t.walk(c.IterRange(), f, env)
	inner := make(map[string]aval, len(env)+3)
	for k, v := range env {
		inner[k] = v
	}
	if c.IterRange().Kind() == ast.ListKind && len(c.IterRange().AsList().Elements()) == 0 {
		// cel.bind and optMap: the accumulator is a named value.
		inner[c.AccuVar()] = t.walk(c.AccuInit(), f, env)
		return t.walk(c.Result(), f, inner)
	}
	t.walk(c.AccuInit(), f, env)
	elem := aval{key: c.IterVar(), n: elemOf(rng.n)}
	if rng.path != "" {
		elem.path = rng.path + "[*]"
	}
	if rng.n != nil && rng.n.kind == kMap {
		elem.n = nil // map keys are strings
		if c.HasIterVar2() {
			inner[c.IterVar2()] = aval{key: c.IterVar2(), n: rng.n.elem, path: rng.path + "[*]"}
		}
	} else if c.HasIterVar2() {
		inner[c.IterVar()] = aval{key: c.IterVar()} // the index
		elem.key = c.IterVar2()
		inner[c.IterVar2()] = elem
	}
	if !c.HasIterVar2() || rng.n == nil || rng.n.kind == kMap {
		inner[c.IterVar()] = elem
	}
	inner[c.AccuVar()] = aval{key: c.AccuVar()}
	t.uniqueKeys(e, rng)
	t.walk(c.LoopCondition(), f, inner)
	t.walk(c.LoopStep(), f, inner)
	t.walk(c.Result(), f, inner)
	return aval{key: exprKeyOf(e)}
}

func elemOf(n *node) *node {
	if n == nil || (n.kind != kList && n.kind != kMap) {
		return nil
	}
	return n.elem
}

// labelValueProblem says why the value of a label expression may not be a
// valid label value, or "": only values taken from a field are judged (a
// computed string is checked when the conversion runs).
func labelValueProblem(tree *schemaTree, a *ast.AST, src string) string {
	t := &totality{tree: tree, a: a, src: src, seen: map[string]bool{}}
	v := t.quiet(a.Expr(), (&facts{}).with(nil), map[string]aval{})
	if v.path == "" || v.n == nil || v.n.kind != kString {
		return ""
	}
	if len(v.n.enum) > 0 {
		for _, x := range v.n.enum {
			s, ok := x.(string)
			if !ok || len(validation.IsValidLabelValue(s)) > 0 {
				return fmt.Sprintf("the label takes %s, whose enum value %v is not a valid label value", v.path, x)
			}
		}
		return ""
	}
	if v.n.pattern != "" && v.n.maxLength >= 0 && v.n.maxLength <= int64(validation.LabelValueMaxLength) {
		if l, ok := patternLang(v.n.pattern, v.n.maxLength); ok && l.subsetOf(labelValueLang) {
			return ""
		}
	}
	return fmt.Sprintf("the label takes %s, which the schema allows to be an invalid label value (at most 63 characters of [A-Za-z0-9_.-], alphanumeric at both ends); give it a pattern such as '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' and maxLength: 63, or an enum", v.path)
}

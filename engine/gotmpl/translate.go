package gotmpl

import (
	"fmt"
	"strconv"
	"strings"
	"text/template/parse"
	"unicode"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/engine"
)

// The template → CEL translator used by `orkestra migrate`.
//
// A translation is exact or it is refused: every rule below reproduces the
// legacy semantics (missing keys print as "", the output is trimmed and then
// coerced into the target, `default` treats 0/false/"" as empty, numbers
// print with %v, …) for every object the schema admits, using what the
// schema says about each field (required, enum, pattern, minLength,
// minimum, …) to pick the simplest form that is still exact. A template (or
// a part of one) without an exact CEL form is an *Untranslatable naming the
// offending part and why; it stays legacy.
//
// Known corners no translation reproduces (documented in the README): a
// field value that literally contains the text "<no value>" (the legacy
// engine deleted that text from every output and treated it as empty), and
// integer arithmetic beyond ±2^53 (the legacy engine computed in float64).

// TranslateOptions give the translator what the schema alone does not say.
type TranslateOptions struct {
	// Namespaced: the custom resource is namespaced, so metadata.namespace
	// is always set.
	Namespaced bool
	// Defaulted: the objects the expression sees went through the API
	// server's defaulting (reconciled custom resources do; the source
	// objects of a conversion may not), so a field with a schema default is
	// present whenever the object holding it is.
	Defaulted bool
	// Notes are the katalog's user-defined functions (name → template),
	// inlined where they are called.
	Notes map[string]string
}

// Untranslatable is a template, or part of one, without an exactly
// equivalent CEL form. Offset is the byte offset in the template source of
// the part (0 for the whole).
type Untranslatable struct {
	Offset int
	Reason string
}

func (e *Untranslatable) Error() string { return e.Reason }

// TranslateValue translates a legacy template string value, compiled at ctx
// (the context engine.Compile gives it: Self, Expected, Coerce,
// AllowRandom), into a CEL string value: `${…}` expressions and text. The
// result evaluates to what the template evaluates to after coercion into
// the target, including "absent" (a plain field reference whose field is
// missing leaves the target unset in both).
func TranslateValue(src string, ctx *engine.Context, opts TranslateOptions) (out string, err error) {
	t, tree, err := newTranslator(src, ctx, opts)
	if err != nil {
		return "", err
	}
	defer t.recover(&err)
	out = t.value(tree, coercionFor(ctx))
	return out, t.finalCheck(out)
}

// TranslateCondition translates a legacy `when:` template (one that renders
// true, false or nothing) into a bare CEL boolean expression.
func TranslateCondition(src string, ctx *engine.Context, opts TranslateOptions) (out string, err error) {
	t, tree, err := newTranslator(src, ctx, opts)
	if err != nil {
		return "", err
	}
	t.random = false
	defer t.recover(&err)
	out = t.condition(tree)
	return out, t.finalCheck(out)
}

func newTranslator(src string, ctx *engine.Context, opts TranslateOptions) (*translator, *parse.Tree, error) {
	tree, err := Parse(src)
	if err != nil {
		pe := err.(*ParseError)
		return nil, nil, &Untranslatable{Offset: pe.Offset, Reason: "the template does not parse: " + pe.Msg}
	}
	if ctx.Self == nil {
		return nil, nil, &Untranslatable{Reason: "self has no schema, so nothing is known about the fields' types"}
	}
	return &translator{src: src, root: rootSchema(ctx.Self), opts: opts, random: ctx.AllowRandom, itemRoots: itemRoots(ctx)}, tree, nil
}

// translator holds one translation.
type translator struct {
	src    string
	root   *structuralschema.Structural
	opts   TranslateOptions
	random bool // random functions allowed (once: true secret data)
	// strictUsed: the arguments of the call being translated that the
	// legacy function took as typed values (so a nil one failed).
	strictUsed []val
	// itemRoots are the roots a forEach declaration adds (.item, its alias,
	// .index, .value): not translated yet.
	itemRoots map[string]bool
	// noteStack names the notes being inlined.
	noteStack []string
}

// itemRoots are the legacy roots of a forEach declaration's item, nil
// outside one (the compiler declares the CEL variable each there).
func itemRoots(ctx *engine.Context) map[string]bool {
	var roots map[string]bool
	for _, v := range ctx.Vars {
		if v.Name == engine.EachVar {
			roots = map[string]bool{engine.LegacyItem: true, engine.IndexVar: true, engine.ValueVar: true}
		}
	}
	for _, v := range ctx.Vars {
		if roots != nil && v.Name != engine.ChildrenVar && v.Name != engine.EachVar {
			roots[v.Name] = true
		}
	}
	return roots
}

// failf abandons the translation: the part at n has no exact CEL form.
func (t *translator) failf(n parse.Node, format string, args ...any) {
	off := 0
	if n != nil {
		off = startOf(t.src, n)
	}
	panic(&Untranslatable{Offset: max(0, min(off, len(t.src))), Reason: fmt.Sprintf(format, args...)})
}

func (t *translator) recover(err *error) {
	if r := recover(); r != nil {
		u, ok := r.(*Untranslatable)
		if !ok {
			panic(r)
		}
		*err = u
	}
}

func (t *translator) finalCheck(out string) error {
	if strings.Contains(out, "{{") {
		return &Untranslatable{Reason: "the CEL form would contain {{, which reads as a legacy template"}
	}
	return nil
}

// ── values ──────────────────────────────────────────────────────────────────

// vkind is the type of a translated value.
type vkind int

const (
	vOther  vkind = iota // anything else (untyped fields, the whole object)
	vString              // string
	vInt                 // int (int64 in the data, int literals)
	vDouble              // double (number fields, float literals)
	vBool                // bool
	vNumber              // the legacy number(): a CEL double printed as an integer when whole
	vList                // list; elem says of what
	vMap                 // map or object
)

func (k vkind) String() string {
	switch k {
	case vString:
		return "a string"
	case vInt:
		return "an integer"
	case vDouble, vNumber:
		return "a number"
	case vBool:
		return "a boolean"
	case vList:
		return "a list"
	case vMap:
		return "a map"
	}
	return "an untyped value"
}

// CEL operator precedence, loosest first.
const (
	precTernary = iota + 1
	precOr
	precAnd
	precRel
	precAdd
	precMul
	precUnary
	precPrimary
)

// val is a translated legacy value.
type val struct {
	kind vkind
	elem vkind // of a list or map
	// elemFacts: what is known of a list's string items
	elemFacts strFacts
	// expr is the CEL expression of the value when the legacy value is not
	// nil. For field reads it fails exactly when the legacy read fails (a
	// step before the last is missing) and when the last step is missing.
	expr string
	prec int
	// opt is an optional-typed CEL expression that is none exactly when the
	// legacy value is nil (a missing or null field); nil when the value is
	// never nil.
	opt *val
	// truth is the CEL truthiness of values usable only as a truth value
	// (`and`/`or` over arguments of different kinds, or that may be nil).
	truth string
	// boolTruth: truth over booleans only, so the value renders true,
	// false or nothing — usable as a condition.
	boolTruth bool
	// render, for vNumber, is the CEL string the legacy engine prints.
	render string
	// Facts about the value when it is not nil. nonEmpty: never the
	// legacy-empty value ("", 0, false, an empty list or map); noEdgeSpace:
	// a string that neither starts nor ends with white space; ascii: a
	// string of ASCII characters only.
	nonEmpty, noEdgeSpace, ascii bool
	// noSpace: a string without any white space (implies noEdgeSpace).
	noSpace bool
	// nilInside: a rendered string assembled from parts, one of which may
	// be nil (printed by the legacy engine as "<no value>", removed only
	// after trimming, so trimming stopped there).
	nilInside bool
	// lit is the value of a literal.
	lit any
	// at is where a field read stands (index and get go on from it).
	at *step
	// path is the dotted path of a field read ("" for computed values).
	path string
	// fails lists paths whose absence makes the value fail to evaluate
	// (a field of a missing value), the same in the legacy engine and in
	// its translation; failsOther: it may fail for other reasons too
	// (division by zero, a string that does not parse, an index out of
	// range). Translations that evaluate an argument lazily, or not at
	// all, where the legacy engine evaluated every argument, check that
	// its failures are covered by what is always evaluated.
	fails      []string
	failsOther bool
	// plain is the field path of a field read.
	plain []string
	// absent is an optional-typed form of a field read that is none when
	// any step is missing; "" when every step is always present.
	absent string
	// parent and lastSel split a field read whose last step may be
	// missing: the strict read of its parent and the optional selection.
	parent, lastSel string
}

// plainForm is a field read as the legacy plain reference behaves: it
// fails on a missing parent and is none (the target left unset) on a
// missing last field. A CEL plain reference is absent on any missing step,
// so where a parent may be missing the read is wrapped in optional.of.
func plainForm(v val) string {
	switch {
	case len(v.fails) == 0:
		return v.expr
	case v.opt != nil:
		return "optional.of(" + v.parent + ")" + v.lastSel
	}
	return "optional.of(" + v.expr + ")"
}

// plainOpt is a field read as an optional that is none on a missing last
// field and fails on a missing parent (see plainForm).
func plainOpt(v val) string {
	switch {
	case v.absent == "":
		return "optional.of(" + v.expr + ")"
	case len(v.fails) == 0:
		return v.absent
	case v.opt != nil:
		return v.opt.expr
	}
	return "optional.of(" + v.expr + ")"
}

// plainMap is f applied to a field read as the legacy plain reference
// behaves (see plainForm): f(x) written with x as "v" inside .optMap when
// the read may be none, else on the strict read itself. wrap(x) builds f's
// CEL from the read x.
func plainMap(v val, wrap func(x string) string) string {
	switch {
	case v.absent == "":
		return wrap(v.expr)
	case len(v.fails) == 0:
		return v.absent + ".optMap(v, " + wrap("v") + ")"
	case v.opt != nil:
		return v.opt.expr + ".optMap(v, " + wrap("v") + ")"
	}
	// The last field is always there, a parent may not be: the strict read
	// fails where the legacy read failed.
	return wrap(v.expr)
}

func (v val) mayNil() bool { return v.opt != nil }

// p returns v's expression parenthesised for an operand position of
// precedence at least min.
func p(v val, min int) string {
	if v.prec < min {
		return "(" + v.expr + ")"
	}
	return v.expr
}

// orValue is v with nil replaced by zero (a CEL literal).
func orValue(v val, zero string) string {
	if v.opt == nil {
		return v.expr
	}
	return p(*v.opt, precPrimary) + ".orValue(" + zero + ")"
}

func zeroOf(k vkind, n parse.Node, t *translator) string {
	switch k {
	case vString:
		return "''"
	case vInt:
		return "0"
	case vDouble, vNumber:
		return "0.0"
	case vBool:
		return "false"
	case vList:
		return "[]"
	case vMap:
		return "{}"
	}
	t.failf(n, "the value is %s; its emptiness has no CEL test", k)
	return ""
}

// str is v as the legacy engine prints it, nil as "": a CEL string.
func (t *translator) str(v val, n parse.Node) val {
	switch v.kind {
	case vString:
		if v.opt == nil {
			return v
		}
		out := v
		out.expr, out.prec, out.opt, out.nonEmpty = orValue(v, "''"), precPrimary, nil, false
		return out
	case vInt, vBool, vDouble:
		// %v of an int64 or a bool is CEL's string(); of a float64 it is
		// %g, which is CEL's string() of a double too.
		out := val{kind: vString, prec: precPrimary, nonEmpty: true, noEdgeSpace: true, noSpace: true, ascii: true, fails: v.fails, failsOther: v.failsOther}
		if v.opt == nil {
			out.expr = "string(" + v.expr + ")"
			return out
		}
		out.expr = p(*v.opt, precPrimary) + ".optMap(v, string(v)).orValue('')"
		out.nonEmpty = false
		return out
	case vNumber:
		if v.opt != nil {
			t.failf(n, "a computed number that may be missing has no exact CEL form")
		}
		return val{kind: vString, expr: v.render, prec: precTernary, nonEmpty: true, noEdgeSpace: true, noSpace: true, ascii: true, fails: v.fails, failsOther: v.failsOther}
	case vList, vMap:
		t.failf(n, "%s, which prints as Go syntax (such as [a b] or map[k:v]) that CEL does not reproduce; render it with join or toJson", kindName(v))
	}
	if v.truth != "" {
		t.failf(n, "and/or over values of different kinds print one of them; only their truth has a CEL form")
	}
	t.failf(n, "the value is untyped (x-kubernetes-preserve-unknown-fields or int-or-string), so how it prints depends on the data")
	return val{}
}

// renderFacts say whether the legacy rendering of v (when not nil) is
// never empty and never starts or ends with white space.
func renderFacts(v val) (nonEmpty, noEdge bool) {
	switch v.kind {
	case vString:
		return v.nonEmpty, v.noEdgeSpace
	case vInt, vBool, vDouble, vNumber:
		return true, true
	}
	return false, false
}

func kindName(v val) string {
	if v.plain != nil {
		return "." + strings.Join(v.plain, ".") + " is " + v.kind.String()
	}
	return "the value is " + v.kind.String()
}

// truthy is the CEL truth of v: text/template's (and the original ternary's)
// notion — nil, false, 0, "" and empty lists and maps are false. It never
// fails on a nil value.
func (t *translator) truthy(v val, n parse.Node) string {
	if v.truth != "" {
		return v.truth
	}
	// x is v with nil as the zero value, ready for an operand of ==.
	x := func(zero string) string {
		if v.opt == nil {
			return p(v, precRel+1)
		}
		return orValue(v, zero)
	}
	switch v.kind {
	case vBool:
		if v.opt == nil {
			return v.expr
		}
		return orValue(v, "false")
	case vString:
		return x("''") + " != ''"
	case vInt:
		return x("0") + " != 0"
	case vDouble, vNumber:
		return x("0.0") + " != 0.0"
	case vList:
		return "size(" + orValue(v, "[]") + ") > 0"
	case vMap:
		return "size(" + orValue(v, "{}") + ") > 0"
	}
	t.failf(n, "the value is untyped, so its truth depends on the data")
	return ""
}

// truthPrec is the precedence of what truthy returns.
func truthPrec(v val) int {
	if v.truth != "" {
		return precOr
	}
	if v.kind == vBool {
		if v.opt == nil {
			return v.prec
		}
		return precPrimary
	}
	return precRel
}

// ── template structure ──────────────────────────────────────────────────────

// piece is one part of a template's output: text or a value.
type piece struct {
	text   string
	isText bool
	v      val
	node   parse.Node
}

func (t *translator) pieces(list *parse.ListNode) []piece {
	var out []piece
	if list == nil {
		return nil
	}
	for _, n := range list.Nodes {
		switch x := n.(type) {
		case *parse.TextNode:
			out = append(out, piece{text: string(x.Text), isText: true, node: n})
		case *parse.ActionNode:
			if len(x.Pipe.Decl) > 0 {
				t.failf(n, "variables ({{ $x := … }}) have no CEL form here; use the expression where the variable is used")
			}
			out = append(out, piece{v: t.pipe(x.Pipe), node: n})
		case *parse.IfNode:
			out = append(out, piece{v: t.ifNode(x), node: n})
		case *parse.RangeNode:
			t.failf(n, "{{ range }} has no exact CEL form; write it with map() and join() in CEL by hand")
		case *parse.WithNode:
			t.failf(n, "{{ with }} has no exact CEL form; write it as a conditional in CEL by hand")
		case *parse.CommentNode:
		default:
			t.failf(n, "%s has no CEL form", n)
		}
	}
	return out
}

// concat is the legacy output of pieces as one CEL string expression, nil
// parts as "". Its facts describe the legacy raw output, in which a nil part
// printed as the marker "<no value>" (non-empty, no white space).
func (t *translator) concat(ps []piece) val {
	if len(ps) == 0 {
		return stringLit("")
	}
	if len(ps) == 1 {
		if ps[0].isText {
			return stringLit(ps[0].text)
		}
		v := t.str(ps[0].v, ps[0].node)
		v.nonEmpty = v.nonEmpty || ps[0].v.mayNil()
		v.nilInside = ps[0].v.nilInside || ps[0].v.mayNil()
		return v
	}
	var parts []string
	out := val{kind: vString, prec: precAdd, ascii: true, noSpace: true}
	for _, pc := range ps {
		if pc.isText {
			parts = append(parts, celString(pc.text))
			out.ascii = out.ascii && isASCII(pc.text)
			out.noSpace = out.noSpace && !strings.ContainsFunc(pc.text, isSpace)
			out.nonEmpty = out.nonEmpty || pc.text != ""
			continue
		}
		s := t.str(pc.v, pc.node)
		parts = append(parts, p(s, precAdd+1))
		ne, _ := renderFacts(pc.v)
		out.ascii = out.ascii && s.ascii
		out.noSpace = out.noSpace && s.noSpace
		out.nonEmpty = out.nonEmpty || ne || pc.v.mayNil()
		out.nilInside = out.nilInside || pc.v.mayNil() || pc.v.nilInside
		out.fails = append(out.fails, pc.v.fails...)
		out.failsOther = out.failsOther || pc.v.failsOther
	}
	out.noEdgeSpace = out.noSpace || t.edgeClean(ps, false) && t.edgeClean(ps, true)
	out.expr = strings.Join(parts, " + ")
	return out
}

// edgeClean reports that the legacy raw output of ps cannot start (or,
// with trailing, end) with white space: trimming it removes nothing.
func (t *translator) edgeClean(ps []piece, trailing bool) bool {
	for i := range ps {
		pc := ps[i]
		if trailing {
			pc = ps[len(ps)-1-i]
		}
		if pc.isText {
			if pc.text == "" {
				continue
			}
			if trailing {
				return strings.TrimRightFunc(pc.text, isSpace) == pc.text
			}
			return strings.TrimLeftFunc(pc.text, isSpace) == pc.text
		}
		t.str(pc.v, pc.node) // fails for values that do not print
		nonEmpty, noEdge := renderFacts(pc.v)
		if !noEdge {
			return false
		}
		if nonEmpty {
			return true
		}
	}
	return true
}

func isSpace(r rune) bool { return unicode.IsSpace(r) }

// ifNode translates {{ if P }}A{{ else }}B{{ end }} into P ? A : B over the
// rendered branches.
func (t *translator) ifNode(x *parse.IfNode) val {
	if len(x.Pipe.Decl) > 0 {
		t.failf(x, "variables in {{ if }} have no CEL form here")
	}
	c := t.pipe(x.Pipe)
	cond := t.truthy(c, x)
	a := t.concat(t.pieces(x.List))
	b := t.concat(t.pieces(x.ElseList))
	condSrc := cond
	if truthPrec(c) <= precTernary {
		condSrc = "(" + cond + ")"
	}
	// the branches are evaluated lazily, in both engines
	lazy := len(a.fails) > 0 || len(b.fails) > 0 || a.failsOther || b.failsOther
	return val{
		kind: vString, prec: precTernary, fails: c.fails, failsOther: c.failsOther || lazy,
		expr:     condSrc + " ? " + p(a, precOr) + " : " + p(b, precTernary),
		nonEmpty: a.nonEmpty && b.nonEmpty, noEdgeSpace: a.noEdgeSpace && b.noEdgeSpace, noSpace: a.noSpace && b.noSpace, ascii: a.ascii && b.ascii,
		nilInside: a.nilInside || b.nilInside,
	}
}

// value translates a whole template string value coerced with c.
func (t *translator) value(tree *parse.Tree, c coercion) string {
	ps := t.pieces(tree.Root)
	var vals []int
	for i, pc := range ps {
		if !pc.isText {
			vals = append(vals, i)
		} else if strings.TrimSpace(pc.text) != "" {
			vals = append(vals, -1)
		}
	}
	if len(vals) == 0 {
		t.failf(nil, "the template has no action")
	}
	if len(vals) == 1 && vals[0] >= 0 {
		pc := ps[vals[0]]
		return t.sole(pc, plainRef(tree.Root), c)
	}
	if c.mode != modeString {
		t.failf(nil, "the template interpolates text into %s; the legacy engine parsed the text (so %s), which has no exact CEL form", describeMode(c.mode), modeHint(c.mode))
	}
	if c.emptyNull && !hasText(ps) {
		if !c.nullUnset {
			t.failf(nil, "an empty result became null here (a conversion output), and every part of this one may be empty")
		}
		return "${" + noneIfEmpty(t.whole(ps)) + "}"
	}
	return t.interpolate(ps)
}

// noneIfEmpty makes a string expression an optional that is none when it is
// empty: where the legacy engine wrote null for an empty rendering and null
// leaves the field unset, as none does.
func noneIfEmpty(e string) string {
	return "optional.of(" + e + ").optFlatMap(v, v != '' ? optional.of(v) : optional.none())"
}

// whole is the legacy rendering of pieces as one CEL string: trimmed
// where a value may bring white space to an edge.
func (t *translator) whole(ps []piece) string {
	ps = trimStaticEdges(ps)
	v := t.concat(ps)
	if t.edgeClean(ps, false) && t.edgeClean(ps, true) {
		return v.expr
	}
	if v.nilInside {
		t.failf(nil, "the output's leading or trailing white space depends on missing fields (the legacy engine trimmed around a \"<no value>\" marker)")
	}
	return p(v, precPrimary) + ".trim()"
}

// hasText: some text of the template survives the trimming, so the
// output is never empty.
func hasText(ps []piece) bool {
	for _, pc := range ps {
		if pc.isText && strings.TrimSpace(pc.text) != "" {
			return true
		}
	}
	return false
}

func modeHint(m coerceMode) string {
	switch m {
	case modeGuess:
		return "numbers, booleans and JSON in it became typed values"
	case modeIntOrString:
		return "an all-digits result became an integer"
	}
	return "the text had to parse as that type"
}

// sole translates a value that is one action (white space around it).
func (t *translator) sole(pc piece, plain []string, c coercion) string {
	v := pc.v
	n := pc.node
	if plain != nil && v.plain != nil {
		// The legacy plain reference: a missing (or null) field at any
		// step leaves the target unset. A CEL plain reference does the
		// same; anything else goes through an optional chain.
		if c.emptyNull && c.mode == modeString && v.kind == vString && !v.nonEmpty {
			if !c.nullUnset {
				t.failf(n, "an empty string became null here (a conversion output); CEL keeps the empty string — a minLength: 1 or a pattern in the CRD rules it out")
			}
			// none on a missing field and on an empty string, as the
			// legacy engine left the field unset or wrote null
			trimmed := "v"
			if !v.noEdgeSpace {
				trimmed = "v.trim()"
			}
			return "${" + plainOpt(v) + ".optFlatMap(v, " + trimmed + " != '' ? optional.of(" + trimmed + ") : optional.none())}"
		}
		switch {
		case c.mode == modeString && v.kind == vString && v.noEdgeSpace:
			return "${" + plainForm(v) + "}"
		case c.mode == modeString && v.kind == vString:
			return "${" + plainMap(v, func(x string) string { return x + ".trim()" }) + "}"
		case c.mode == modeString && (v.kind == vInt || v.kind == vBool || v.kind == vDouble):
			return "${" + plainMap(v, func(x string) string { return "string(" + x + ")" }) + "}"
		case typedFits(c.mode, v.kind):
			return "${" + plainForm(v) + "}"
		}
		t.failf(n, "%s into %s: %s", kindName(v), describeMode(c.mode), fitProblem(c.mode, v.kind))
	}
	// A bare field read left as it is would be a CEL plain reference,
	// absent when any step is missing, where this (non-plain) legacy
	// template failed on a missing step before the last.
	bare := v.plain != nil && v.absent != ""
	if c.mode == modeString {
		wrap := func(e string) string { return e }
		if ne, _ := renderFacts(v); c.emptyNull && (!ne || v.mayNil() || v.nilInside) {
			if !c.nullUnset {
				t.failf(n, "an empty result became null here (a conversion output); CEL keeps the empty string")
			}
			wrap = noneIfEmpty
		}
		if bare && v.opt == nil && v.kind == vString {
			v.expr, v.prec = "string("+v.expr+")", precPrimary
		}
		s := t.str(v, n)
		if _, noEdge := renderFacts(v); !noEdge {
			if v.nilInside {
				// A nil part printed "<no value>", which stopped the trimming.
				t.failf(n, "the output's leading and trailing white space depends on missing fields (the legacy engine trimmed around a \"<no value>\" marker)")
			}
			return "${" + wrap(p(s, precPrimary)+".trim()") + "}"
		}
		return "${" + wrap(s.expr) + "}"
	}
	if !typedFits(c.mode, v.kind) {
		t.failf(n, "%s into %s: %s", kindName(v), describeMode(c.mode), fitProblem(c.mode, v.kind))
	}
	if v.mayNil() {
		if c.emptyNull && !c.nullUnset {
			t.failf(n, "a missing value renders empty, which the legacy engine made null here")
		}
		if bare {
			t.failf(n, "a field read that is not the whole template fails on a missing parent but renders empty on a missing field; write it as a plain reference {{ .a.b }}")
		}
		// none leaves the target unset, as an empty rendering did.
		return "${" + v.opt.expr + "}"
	}
	if bare {
		conv := map[vkind]string{vInt: "int", vDouble: "double", vBool: "bool"}[v.kind]
		return "${" + conv + "(" + v.expr + ")}"
	}
	return "${" + v.expr + "}"
}

// typedFits: a value of kind k, printed with %v and parsed as the legacy
// coercion m does, is k's value itself (equal as JSON).
func typedFits(m coerceMode, k vkind) bool {
	switch m {
	case modeInteger:
		return k == vInt
	case modeNumber:
		return k == vInt || k == vDouble || k == vNumber
	case modeBoolean:
		return k == vBool
	case modeIntOrString:
		return k == vInt
	case modeGuess, modeAuto:
		return k == vInt || k == vDouble || k == vBool || k == vNumber
	}
	return false
}

func fitProblem(m coerceMode, k vkind) string {
	switch {
	case k == vString && (m == modeGuess || m == modeAuto || m == modeIntOrString):
		return "the legacy engine turned text that looks like a number (or a boolean) into one, which has no exact CEL form"
	case k == vString:
		return "the legacy engine parsed the text, which has no exact CEL form"
	case (k == vDouble || k == vNumber) && m == modeInteger:
		return "a whole number parsed as an integer and any other failed, which has no exact CEL form"
	case m == modeObject || m == modeArray:
		return "the legacy engine parsed the text as JSON"
	}
	return "no exact CEL form"
}

// interpolate translates text and values into a string.
func (t *translator) interpolate(ps []piece) string {
	ps = trimStaticEdges(ps)
	if !t.edgeClean(ps, false) || !t.edgeClean(ps, true) {
		whole := t.concat(ps)
		if whole.nilInside {
			t.failf(nil, "the output's leading or trailing white space depends on missing fields (the legacy engine trimmed around a \"<no value>\" marker)")
		}
		return "${" + p(whole, precPrimary) + ".trim()}"
	}
	var b strings.Builder
	for i, pc := range ps {
		if pc.isText {
			text := strings.ReplaceAll(pc.text, "${", "$${")
			if i+1 < len(ps) {
				// a $ right before ${ would read as the escape $${
				body := strings.TrimRight(text, "$")
				if n := len(text) - len(body); n > 0 {
					text = body + "${'" + strings.Repeat("$", n) + "'}"
				}
			}
			b.WriteString(text)
			continue
		}
		v := pc.v
		switch {
		case (v.kind == vInt || v.kind == vBool) && v.opt == nil:
			// Interpolation prints integers and booleans as %v does.
			b.WriteString("${" + v.expr + "}")
		default:
			b.WriteString("${" + t.str(v, pc.node).expr + "}")
		}
	}
	return b.String()
}

// trimStaticEdges drops the white space of text at the edges of pieces:
// the legacy output is trimmed as a whole, so static white space at the
// edges goes (white space a value may bring to an edge needs .trim()).
func trimStaticEdges(ps []piece) []piece {
	for len(ps) > 0 && ps[0].isText {
		ps[0].text = strings.TrimLeftFunc(ps[0].text, isSpace)
		if ps[0].text != "" {
			break
		}
		ps = ps[1:]
	}
	for len(ps) > 0 && ps[len(ps)-1].isText {
		last := &ps[len(ps)-1]
		last.text = strings.TrimRightFunc(last.text, isSpace)
		if last.text != "" {
			break
		}
		ps = ps[:len(ps)-1]
	}
	return ps
}

// condition translates a `when:` template.
func (t *translator) condition(tree *parse.Tree) string {
	ps := t.pieces(tree.Root)
	var only *piece
	for i := range ps {
		switch {
		case !ps[i].isText && only == nil:
			only = &ps[i]
		case !ps[i].isText || strings.TrimSpace(ps[i].text) != "":
			t.failf(ps[i].node, "a condition template must render only true or false; text around the action has no CEL form")
		}
	}
	if only == nil {
		t.failf(nil, "the template has no action")
	}
	v := only.v
	if v.truth != "" && v.boolTruth {
		return v.truth
	}
	if v.kind != vBool {
		t.failf(only.node, "the condition renders %s; only a boolean has an exact CEL form (anything but true, false or nothing was an error)", v.kind)
	}
	return orValue(v, "false")
}

// ── pipelines and arguments ─────────────────────────────────────────────────

func (t *translator) pipe(pn *parse.PipeNode) val {
	if len(pn.Decl) > 0 {
		t.failf(pn, "variables have no CEL form here")
	}
	var v val
	for i, cmd := range pn.Cmds {
		if i == 0 {
			v = t.command(cmd, nil)
		} else {
			prev := v
			v = t.command(cmd, &prev)
		}
	}
	return v
}

func (t *translator) command(cmd *parse.CommandNode, piped *val) val {
	if len(cmd.Args) == 0 {
		t.failf(cmd, "empty command")
	}
	id, ok := cmd.Args[0].(*parse.IdentifierNode)
	if !ok {
		if len(cmd.Args) > 1 || piped != nil {
			t.failf(cmd, "%s is not a function", cmd.Args[0])
		}
		return t.arg(cmd.Args[0])
	}
	nodes := append([]parse.Node(nil), cmd.Args[1:]...)
	args := make([]val, 0, len(nodes)+1)
	for _, a := range nodes {
		args = append(args, t.arg(a))
	}
	if piped != nil {
		args = append(args, *piped)
		nodes = append(nodes, cmd)
	}
	return t.call(id, args, nodes)
}

func (t *translator) arg(n parse.Node) val {
	switch x := n.(type) {
	case *parse.FieldNode:
		return t.field(x.Ident, n)
	case *parse.VariableNode:
		if x.Ident[0] == "$" && len(x.Ident) > 1 {
			return t.field(x.Ident[1:], n)
		}
		if x.Ident[0] == "$" {
			return t.field(nil, n)
		}
		t.failf(n, "variable %s has no CEL form here", x.Ident[0])
	case *parse.DotNode:
		return t.field(nil, n)
	case *parse.StringNode:
		return stringLit(x.Text)
	case *parse.NumberNode:
		if x.IsFloat && !strings.HasPrefix(strings.ToLower(strings.TrimLeft(x.Text, "+-")), "0x") && !strings.HasPrefix(x.Text, "'") && strings.ContainsAny(x.Text, ".eEpP") {
			return val{kind: vDouble, expr: celDouble(x.Float64), prec: precPrimary, lit: x.Float64, nonEmpty: x.Float64 != 0}
		}
		if x.IsInt {
			s := strconv.FormatInt(x.Int64, 10)
			return val{kind: vInt, expr: s, prec: intPrec(x.Int64), lit: x.Int64, nonEmpty: x.Int64 != 0}
		}
		t.failf(n, "the number %s has no CEL form", x.Text)
	case *parse.BoolNode:
		return val{kind: vBool, expr: strconv.FormatBool(x.True), prec: precPrimary, lit: x.True, nonEmpty: x.True}
	case *parse.PipeNode:
		v := t.pipe(x)
		return v
	case *parse.IdentifierNode:
		return t.call(x, nil, nil)
	case *parse.ChainNode:
		t.failf(n, "a field of a computed value ((…).x) has no CEL form here")
	case *parse.NilNode:
		t.failf(n, "nil has no CEL form here")
	}
	t.failf(n, "%s has no CEL form", n)
	return val{}
}

func intPrec(i int64) int {
	if i < 0 {
		return precUnary
	}
	return precPrimary
}

func stringLit(s string) val {
	return val{kind: vString, expr: celString(s), prec: precPrimary, lit: s, nonEmpty: s != "", noEdgeSpace: strings.TrimSpace(s) == s,
		noSpace: !strings.ContainsFunc(s, isSpace), ascii: isASCII(s)}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

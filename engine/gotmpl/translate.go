package gotmpl

import (
	"fmt"
	"strconv"
	"strings"
	"text/template/parse"

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
	t := &translator{src: src, root: rootSchema(ctx.Self), opts: opts, random: ctx.AllowRandom, itemRoots: itemRoots(ctx), live: liveVars(ctx)}
	for _, v := range ctx.Vars {
		if v.Name == engine.ChildrenVar {
			t.children = v.Schema
		}
	}
	return t, tree, nil
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
	// .index, .value), each with the CEL variable it reads.
	itemRoots map[string]engine.Var
	// children is the schema of the children variable; nil where the
	// expression cannot read children.
	children *structuralschema.Structural
	// live are the schemas of the live inputs' variables (cross, external)
	// the expression may read.
	live map[string]*structuralschema.Structural
	// noteStack names the notes being inlined.
	noteStack []string
}

// itemRoots are the legacy roots of a forEach declaration's item and the
// CEL variables they read (.item: each, .index, .value, the alias), nil
// outside one.
func itemRoots(ctx *engine.Context) map[string]engine.Var {
	vars := map[string]engine.Var{}
	for _, v := range ctx.Vars {
		vars[v.Name] = v
	}
	each, ok := vars[engine.EachVar]
	if !ok {
		return nil
	}
	roots := map[string]engine.Var{engine.LegacyItem: each}
	for _, v := range ctx.Vars {
		if v.Name != engine.ChildrenVar && v.Name != engine.EachVar && !liveRoots[v.Name] {
			roots[v.Name] = v
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
	case vOther:
		if v.dyn && v.plain != nil {
			out := val{kind: vString, prec: precPrimary, fails: v.fails, failsOther: v.failsOther, expr: "legacy.print(" + v.expr + ")"}
			if v.opt != nil {
				out.expr = "legacy.printOpt(" + v.opt.expr + ")"
			}
			return out
		}
	}
	if v.truth != "" {
		t.failf(n, "and/or over values of different kinds print one of them; only their truth has a CEL form")
	}
	t.failf(n, "the value is untyped (x-kubernetes-preserve-unknown-fields or int-or-string), so how it prints depends on the data")
	return val{}
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
	case vOther:
		if v.dyn && v.plain != nil {
			// text/template's own truth of whatever the field holds
			if v.opt == nil {
				return "legacy.truth(" + v.expr + ")"
			}
			return p(*v.opt, precPrimary) + ".optMap(v, legacy.truth(v)).orValue(false)"
		}
	}
	t.failf(n, "the value is untyped, so its truth depends on the data")
	return ""
}

// ── template structure ──────────────────────────────────────────────────────

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
		// The legacy engine parsed the rendered text for the target:
		// legacy.value runs that very parsing on the text CEL renders.
		return "${" + legacyValue(t.whole(ps), c) + "}"
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
		case v.dyn:
			// Printed, trimmed and parsed for the target by the same code
			// as the legacy engine; none where it left the field unset.
			return "${" + plainOpt(v) + ".optFlatMap(v, legacy.value(v, " + celString(c.name()) + "))}"
		case c.mode == modeString && v.kind == vString && v.noEdgeSpace:
			return "${" + plainForm(v) + "}"
		case c.mode == modeString && v.kind == vString:
			return "${" + plainMap(v, func(x string) string { return x + ".trim()" }) + "}"
		case c.mode == modeString && (v.kind == vInt || v.kind == vBool || v.kind == vDouble):
			return "${" + plainMap(v, func(x string) string { return "string(" + x + ")" }) + "}"
		case typedFits(c.mode, v.kind):
			return "${" + plainForm(v) + "}"
		}
		// Printed and parsed for the target by the legacy engine's code.
		return "${" + plainOpt(v) + ".optFlatMap(v, " + legacyValue("v", c) + ")}"
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
		return "${" + wrap(t.soleString(v, n, bare)) + "}"
	}
	if !typedFits(c.mode, v.kind) {
		return "${" + legacyValue(t.soleString(v, n, bare), c) + "}"
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

// soleString is a one-action value as the legacy engine renders it: the
// value printed, then trimmed.
func (t *translator) soleString(v val, n parse.Node, bare bool) string {
	if bare && v.opt == nil && v.kind == vString {
		v.expr, v.prec = "string("+v.expr+")", precPrimary
	}
	s := t.str(v, n)
	if _, noEdge := renderFacts(v); !noEdge {
		if v.nilInside {
			// A nil part printed "<no value>", which stopped the trimming.
			t.failf(n, "the output's leading and trailing white space depends on missing fields (the legacy engine trimmed around a \"<no value>\" marker)")
		}
		return p(s, precPrimary) + ".trim()"
	}
	return s.expr
}

// legacyValue is the CEL call that parses the rendered text x for the
// target with the legacy engine's own coercion: an optional, none where
// the legacy engine left the field unset.
func legacyValue(x string, c coercion) string {
	return "legacy.value(" + x + ", " + celString(c.name()) + ")"
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

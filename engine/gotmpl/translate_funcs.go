package gotmpl

import (
	"strconv"
	"strings"
	"text/template/parse"

	"github.com/orkspace/orkestra-cel/katalog"
)

// Function calls: the arguments' failures and the library's translation of
// each function (its row's, lib_*.go).

// call translates a function call. The result fails whenever an argument
// fails (the legacy engine evaluated every argument first) or a typed
// parameter received nil.
func (t *translator) call(id *parse.IdentifierNode, args []val, nodes []parse.Node) val {
	t.strictUsed = t.strictUsed[:0]
	out := t.call0(id, args, nodes)
	if f := funcs[id.Ident]; f != nil && f.shortCircuit {
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

// call0 translates one function call: a note (a user-defined function),
// or a function of the library by its row.
func (t *translator) call0(id *parse.IdentifierNode, args []val, nodes []parse.Node) val {
	x := &call{id: id, args: args, nodes: nodes}
	if src, ok := t.opts.Notes[id.Ident]; ok {
		t.arity(x, 0, 0)
		return t.note(id, id.Ident, src)
	}
	f := funcs[id.Ident]
	if f == nil && katalog.IsSentinel(id.Ident) {
		t.failf(id, "the sentinel %s is left as written: in CEL write sentinels.%s (a bool)", id.Ident, id.Ident)
	}
	if f == nil {
		t.failf(id, "%s is not a function of the legacy library", id.Ident)
	}
	for i, a := range args {
		if a.truth != "" && !f.truthArgs {
			t.failf(x.node(i), "the argument of %s is an and/or over values of different kinds, which has no CEL value", id.Ident)
		}
	}
	if f.translate == nil {
		t.failf(id, "%s has no exact CEL equivalent: %s", id.Ident, f.noCEL)
	}
	return f.translate(t, x)
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

// note inlines a user-defined note: its template's rendering (trimmed,
// `<no value>` removed) as a string.
func (t *translator) note(id *parse.IdentifierNode, name, src string) val {
	for _, active := range t.noteStack {
		if active == name {
			t.failf(id, "the note %s calls itself", name)
		}
	}
	tree, err := Parse(src)
	if err != nil {
		t.failf(id, "the note %s does not parse", name)
	}
	outer := t.src
	t.src, t.noteStack = src, append(t.noteStack, name)
	defer func() {
		t.src, t.noteStack = outer, t.noteStack[:len(t.noteStack)-1]
		if r := recover(); r != nil {
			u, ok := r.(*Untranslatable)
			if !ok {
				panic(r)
			}
			// a problem inside the note is reported at the call
			t.failf(id, "in the note %s: %s", name, u.Reason)
		}
	}()
	ps := trimStaticEdges(t.pieces(tree.Root))
	v := t.concat(ps)
	if t.edgeClean(ps, false) && t.edgeClean(ps, true) {
		v.nilInside, v.noEdgeSpace = false, true
		return v
	}
	if v.nilInside {
		t.failf(id, "the note %s's leading or trailing white space depends on missing fields", name)
	}
	return val{kind: vString, expr: p(v, precPrimary) + ".trim()", prec: precPrimary, fails: v.fails, failsOther: v.failsOther, ascii: v.ascii, noSpace: v.noSpace, noEdgeSpace: true}
}

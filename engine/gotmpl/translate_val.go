package gotmpl

import (
	"strings"
	"text/template/parse"
	"unicode"
)

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
	// dyn: a field read into an untyped value; it prints and coerces as the
	// legacy engine's own code does (legacy.print, legacy.value).
	dyn bool
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

func isSpace(r rune) bool { return unicode.IsSpace(r) }

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

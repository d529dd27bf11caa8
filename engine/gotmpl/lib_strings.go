package gotmpl

import (
	"github.com/google/cel-go/cel"

	"fmt"
	"reflect"
	"strconv"
	"strings"
	"text/template/parse"
	"unicode/utf8"

	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/notes"
)

// The string functions (upstream pkg/note/strings.go,
// docs/01-strings.md), value first.

var stringsFamily = family{name: "strings (value first)", functions: []*function{
	{name: "toLower", fn: strings.ToLower, translate: trCase, doc: "`toLower`"},
	{name: "toUpper", fn: strings.ToUpper, translate: trCase, doc: "`toUpper`"},
	{name: "trimSpace", fn: strings.TrimSpace, translate: trTrimSpace, doc: "`trimSpace`"},
	{name: "trim", fn: strings.Trim, pipeFirst: true, translate: trTrim, doc: "`trim S CUTSET`"},
	{name: "trimPrefix", fn: strings.TrimPrefix, pipeFirst: true, translate: trTrimAffix, doc: "`trimPrefix S P`"},
	{name: "trimSuffix", fn: strings.TrimSuffix, pipeFirst: true, translate: trTrimAffix, doc: "`trimSuffix S P`"},
	{name: "hasPrefix", fn: strings.HasPrefix, pipeFirst: true, translate: trHasAffix, doc: "`hasPrefix S P`"},
	{name: "hasSuffix", fn: strings.HasSuffix, pipeFirst: true, translate: trHasAffix, doc: "`hasSuffix S P`"},
	{name: "contains", fn: strings.Contains, pipeFirst: true, translate: trHasAffix, doc: "`contains S SUB`"},
	{name: "replace", fn: fnReplace, pipeFirst: true, translate: trReplace, doc: "`replace S OLD NEW` (all occurrences)"},
	{name: "split", fn: fnSplit, pipeFirst: true, translate: trSplit, doc: "`split S SEP` (`\"\"` gives `[]`)"},
	{name: "join", fn: fnJoin, pipeFirst: true, translate: trJoin, doc: "`join LIST SEP`"},
	{name: "repeat", fn: fnRepeat, pipeFirst: true, built: repeatSize, doc: "`repeat S N`", celDecl: []celengine.Overload{celengine.NativeFunction("repeat", []*cel.Type{cel.StringType, cel.IntType}, cel.StringType, 0, MaxOutputBytes, nativeImpl("repeat", fnRepeat))},
		translate: trStringInt},
	{name: "truncate", fn: fnTruncate, pipeFirst: true, doc: "`truncate S N` (at most N bytes, ending in `...` when it cuts)", celDecl: anyFunction("truncate", fnTruncate, cel.StringType, cel.StringType, cel.IntType),
		translate: trStringInt},
	{name: "printf", fn: fnPrintf, translate: trPrintf, doc: "`printf`"},
	noteString("camelToKebab", notes.CamelToKebab, 2, nil, "`camelToKebab` (`HTTPRequest` → `http-request`)"),
	{name: "concat", fn: notes.Concat, translate: trConcat, doc: "`concat A B …` (strings joined without a separator)"},
}}

// trConcat is CEL's string concatenation.
func trConcat(t *translator, x *call) val {
	if len(x.args) == 0 {
		return stringLit("")
	}
	parts := make([]string, len(x.args))
	for i := range x.args {
		parts[i] = p(t.want(x.args[i], vString, x.name(), x.node(i)), precAdd+1)
	}
	out := val{kind: vString, expr: strings.Join(parts, " + "), prec: precAdd}
	if len(parts) == 1 {
		out.prec = precPrimary
	}
	return out
}

// noteString is the row of a string → string function of the original's
// library (engine/notes) whose CEL counterpart has the same name and
// implementation: it builds at most grow bytes per byte read, and facts
// (nil: none) adjusts what is known of its result from its argument.
func noteString[F func(string) string | func(string) (string, error)](name string, fn F, grow float64, facts func(in, out val) val, doc string) *function {
	var impl func(string) (string, error)
	switch f := any(fn).(type) {
	case func(string) string:
		impl = func(s string) (string, error) { return f(s), nil }
	case func(string) (string, error):
		impl = f
	}
	fails := reflect.TypeOf(fn).NumOut() == 2
	return &function{name: name, fn: fn, doc: doc, celDecl: []celengine.Overload{celengine.StringFunction(name, grow, impl)},
		translate: func(t *translator, x *call) val {
			t.arity(x, 1, 1)
			s := t.want(x.args[0], vString, name, x.node(0))
			out := val{kind: vString, expr: name + "(" + s.expr + ")", prec: precPrimary, ascii: s.ascii, noSpace: s.noSpace, noEdgeSpace: s.noSpace, failsOther: fails}
			if facts != nil {
				out = facts(s, out)
			}
			return out
		}}
}

// trStringInt calls the CEL counterpart of a function of a string and a
// count (repeat, truncate), which share the legacy implementation.
func trStringInt(t *translator, x *call) val {
	t.arity(x, 2, 2)
	s, n := t.want(x.args[0], vString, x.name(), x.node(0)), t.want(x.args[1], vInt, x.name(), x.node(1))
	return val{kind: vString, expr: x.name() + "(" + s.expr + ", " + n.expr + ")", prec: precPrimary, failsOther: true, ascii: s.ascii}
}

func fnSplit(s, sep string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, sep)
}

// fnJoin joins a list: the []string that split returns, or a list field of
// the object (its items formatted with %v). The original took only []string,
// so joining a list field failed at run time.
func fnJoin(elems any, sep string) (string, error) {
	var parts []string
	switch x := elems.(type) {
	case []string:
		parts = x
	case []any:
		parts = make([]string, len(x))
		for i, e := range x {
			parts[i] = fnToString(e)
		}
	case nil:
		return "", nil
	default:
		return "", fmt.Errorf("join: expected a list, got %T", elems)
	}
	total := len(sep) * max(len(parts)-1, 0)
	for _, p := range parts {
		total += len(p)
	}
	if total > MaxOutputBytes {
		return "", fmt.Errorf("join: the result would be longer than %d bytes", MaxOutputBytes)
	}
	return strings.Join(parts, sep), nil
}

// Functions whose result can be much larger than their arguments check
// its size before building it: no string a template builds may exceed
// MaxOutputBytes, whatever the budget left.

func fnRepeat(s string, n int) (string, error) {
	if n < 0 {
		return "", fmt.Errorf("repeat: negative count %d", n)
	}
	if n > 0 && len(s) > MaxOutputBytes/n {
		return "", fmt.Errorf("repeat: the result would be longer than %d bytes", MaxOutputBytes)
	}
	return strings.Repeat(s, n), nil
}

// repeatSize is the size repeat builds from a literal string and count.
func repeatSize(args []parse.Node) float64 {
	if len(args) != 2 {
		return 0
	}
	s, ok1 := args[0].(*parse.StringNode)
	n, ok2 := args[1].(*parse.NumberNode)
	if !ok1 || !ok2 || !n.IsInt || n.Int64 < 0 {
		return 0
	}
	return float64(len(s.Text)) * float64(n.Int64)
}

func fnReplace(s, old, new string) (string, error) {
	n := strings.Count(s, old)
	if n > 0 && len(new) > len(old) && len(s)+n*(len(new)-len(old)) > MaxOutputBytes {
		return "", fmt.Errorf("replace: the result would be longer than %d bytes", MaxOutputBytes)
	}
	return strings.ReplaceAll(s, old, new), nil
}

// fnTruncate cuts s to at most n bytes, ending in "..." when it cut.
func fnTruncate(s string, n int) (string, error) {
	if n < 0 {
		return "", fmt.Errorf("truncate: negative length %d", n)
	}
	if len(s) <= n {
		return s, nil
	}
	if n <= 3 {
		return s[:n], nil
	}
	return s[:n-3] + "...", nil
}

// fnPrintf is fmt.Sprintf, refusing widths and precisions that would build
// a string longer than MaxOutputBytes from a few bytes of format.
func fnPrintf(format string, args ...any) (string, error) {
	if w := maxFormatWidth(format, args); w > MaxOutputBytes {
		return "", fmt.Errorf("printf: a width or precision of %d is larger than %d", w, MaxOutputBytes)
	}
	return fmt.Sprintf(format, args...), nil
}

// maxFormatWidth is the largest width or precision in a format, `*` ones
// read from args.
func maxFormatWidth(format string, args []any) int {
	out, argi := 0, 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		if i < len(format) && format[i] == '%' {
			continue
		}
		for i < len(format) && strings.IndexByte("+-# 0", format[i]) >= 0 {
			i++
		}
		for part := 0; part < 2; part++ {
			n := 0
			switch {
			case i < len(format) && format[i] == '*':
				if argi < len(args) {
					if v, ok := args[argi].(int); ok {
						n = v
					}
				}
				argi++
				i++
			default:
				for i < len(format) && format[i] >= '0' && format[i] <= '9' {
					n = min(n*10+int(format[i]-'0'), 1<<30)
					i++
				}
			}
			out = max(out, n)
			if part == 0 && i < len(format) && format[i] == '.' {
				i++
				continue
			}
			break
		}
		argi++
	}
	return out
}

// ── translations ────────────────────────────────────────────────────────────

// trCase is toUpper and toLower.
func trCase(t *translator, x *call) val {
	t.arity(x, 1, 1)
	s := t.want(x.args[0], vString, x.name(), x.node(0))
	if !s.ascii {
		t.failf(x.node(0), "%s changes every Unicode letter, CEL's %s only ASCII ones, and the value may hold non-ASCII text (the schema's enum or pattern would rule it out)", x.name(), map[string]string{"toUpper": "upperAscii()", "toLower": "lowerAscii()"}[x.name()])
	}
	fn := ".upperAscii()"
	if x.name() == "toLower" {
		fn = ".lowerAscii()"
	}
	return val{kind: vString, expr: p(s, precPrimary) + fn, prec: precPrimary, nonEmpty: s.nonEmpty, noEdgeSpace: s.noEdgeSpace, noSpace: s.noSpace, ascii: true}
}

func trTrimSpace(t *translator, x *call) val {
	t.arity(x, 1, 1)
	s := t.want(x.args[0], vString, x.name(), x.node(0))
	return val{kind: vString, expr: p(s, precPrimary) + ".trim()", prec: precPrimary, nonEmpty: s.nonEmpty && s.noEdgeSpace, noEdgeSpace: true, noSpace: s.noSpace, ascii: s.ascii}
}

func trTrim(t *translator, x *call) val {
	t.arity(x, 2, 2)
	s := t.want(x.args[0], vString, x.name(), x.node(0))
	if cut, ok := x.args[1].lit.(string); ok && cut == "" {
		return s
	}
	t.failf(x.id, "trim removes a set of characters, which CEL's strings have no function for; trimSpace is trim() in CEL")
	return val{}
}

// trTrimAffix is trimPrefix and trimSuffix.
func trTrimAffix(t *translator, x *call) val {
	t.arity(x, 2, 2)
	s := t.want(x.args[0], vString, x.name(), x.node(0))
	pre := t.want(x.args[1], vString, x.name(), x.node(1))
	n := "size(" + pre.expr + ")"
	if lit, ok := pre.lit.(string); ok {
		n = strconv.Itoa(utf8.RuneCountInString(lit))
	}
	var e string
	if x.name() == "trimPrefix" {
		e = p(s, precPrimary) + ".startsWith(" + pre.expr + ") ? " + p(s, precPrimary) + ".substring(" + n + ") : " + p(s, precTernary)
	} else {
		e = p(s, precPrimary) + ".endsWith(" + pre.expr + ") ? " + p(s, precPrimary) + ".substring(0, size(" + s.expr + ") - " + n + ") : " + p(s, precTernary)
	}
	return val{kind: vString, expr: e, prec: precTernary, ascii: s.ascii, noSpace: s.noSpace, noEdgeSpace: s.noSpace}
}

// trHasAffix is hasPrefix, hasSuffix and contains.
func trHasAffix(t *translator, x *call) val {
	t.arity(x, 2, 2)
	s := t.want(x.args[0], vString, x.name(), x.node(0))
	sub := t.want(x.args[1], vString, x.name(), x.node(1))
	fn := map[string]string{"hasPrefix": ".startsWith(", "hasSuffix": ".endsWith(", "contains": ".contains("}[x.name()]
	return val{kind: vBool, expr: p(s, precPrimary) + fn + sub.expr + ")", prec: precPrimary}
}

func trReplace(t *translator, x *call) val {
	t.arity(x, 3, 3)
	s := t.want(x.args[0], vString, x.name(), x.node(0))
	old := t.want(x.args[1], vString, x.name(), x.node(1))
	nw := t.want(x.args[2], vString, x.name(), x.node(2))
	ns := s.noSpace && nw.noSpace
	return val{kind: vString, expr: p(s, precPrimary) + ".replace(" + old.expr + ", " + nw.expr + ")", prec: precPrimary, ascii: s.ascii && nw.ascii, noSpace: ns, noEdgeSpace: ns}
}

func trSplit(t *translator, x *call) val {
	t.arity(x, 2, 2)
	s := t.want(x.args[0], vString, x.name(), x.node(0))
	sep := t.want(x.args[1], vString, x.name(), x.node(1))
	e := p(s, precPrimary) + ".split(" + sep.expr + ")"
	ef := strFacts{noSpace: s.noSpace, noEdge: s.noSpace, ascii: s.ascii}
	if !s.nonEmpty {
		// the legacy split of "" is an empty list, CEL's [""]
		if !covered(sep, s) {
			t.failf(x.node(1), "the separator can fail where the string does not")
		}
		e = p(s, precRel+1) + " == '' ? [] : " + e
		return val{kind: vList, elem: vString, elemFacts: ef, expr: e, prec: precTernary}
	}
	return val{kind: vList, elem: vString, elemFacts: ef, expr: e, prec: precPrimary, nonEmpty: true}
}

func trJoin(t *translator, x *call) val {
	t.arity(x, 2, 2)
	l := x.args[0]
	if l.kind != vList {
		t.failf(x.node(0), "join takes a list, %s", kindName(l))
	}
	sep := t.want(x.args[1], vString, x.name(), x.node(1))
	list := orValue(l, "[]")
	if l.opt == nil {
		list = p(l, precPrimary)
	}
	switch l.elem {
	case vString:
		ns := l.elemFacts.noSpace && sep.noSpace
		return val{kind: vString, expr: list + ".join(" + sep.expr + ")", prec: precPrimary, noSpace: ns, noEdgeSpace: ns, ascii: l.elemFacts.ascii && sep.ascii}
	case vInt, vBool, vDouble:
		return val{kind: vString, expr: list + ".map(x, string(x)).join(" + sep.expr + ")", prec: precPrimary, noSpace: sep.noSpace, noEdgeSpace: sep.noSpace, ascii: sep.ascii}
	}
	t.failf(x.node(0), "join formats each item with %%v; the items here are untyped or composite")
	return val{}
}

// printf with the verbs whose CEL format is exact: %s of strings, %d of
// integers, %v of strings, integers, booleans and numbers, %f and %.Nf of
// numbers, %%.
func trPrintf(t *translator, x *call) val {
	if len(x.args) == 0 {
		t.failf(x.id, "printf needs a format")
	}
	f, ok := x.args[0].lit.(string)
	if !ok {
		t.failf(x.node(0), "printf's format must be a literal string here")
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
			t.failf(x.id, "printf format %q ends inside a verb", f)
		}
		verb := f[j]
		i = j
		if verb == '%' && prec == "" {
			b.WriteString("%%")
			continue
		}
		if ai >= len(x.args) {
			t.failf(x.id, "printf format %q has more verbs than arguments (the legacy output shows %%!%c(MISSING))", f, verb)
		}
		a := x.args[ai]
		if a.mayNil() {
			t.failf(x.node(ai), "a printf argument that may be missing prints %%!%c(<nil>) in the legacy engine; it has no CEL form", verb)
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
			t.failf(x.node(ai), "printf %%%s%c of %s has no exact CEL format", prec, f[j], a.kind)
		}
		b.WriteString("%" + prec + string(verb))
		ai++
	}
	if ai != len(x.args) {
		t.failf(x.id, "printf has more arguments than verbs (the legacy output shows %%!(EXTRA …))")
	}
	out := stringLit(b.String())
	if len(x.args) == 1 {
		return stringLit(strings.ReplaceAll(b.String(), "%%", "%"))
	}
	items := make([]string, 0, len(x.args)-1)
	ascii := isASCII(f)
	noSpace := !strings.ContainsFunc(f, isSpace)
	for _, a := range x.args[1:] {
		items = append(items, a.expr)
		if a.kind == vString {
			ascii = ascii && a.ascii
			noSpace = noSpace && a.noSpace
		}
	}
	return val{kind: vString, expr: out.expr + ".format([" + strings.Join(items, ", ") + "])", prec: precPrimary, ascii: ascii, noSpace: noSpace, noEdgeSpace: noSpace}
}

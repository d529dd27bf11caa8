package cel

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
)

// Compile-time messages: CEL error locations mapped to the katalog source,
// and error texts that say how to fix the problem.

// locationByte converts a CEL error location (1-based line, 0-based column
// in characters) to a byte offset in src.
func locationByte(src string, loc common.Location) int {
	if loc == nil || loc.Line() < 1 {
		return 0
	}
	lineStart := 0
	for line := 1; line < loc.Line(); line++ {
		i := strings.IndexByte(src[lineStart:], '\n')
		if i < 0 {
			break
		}
		lineStart += i + 1
	}
	return lineStart + runeToByte(src[lineStart:], loc.Column())
}

var (
	undefinedFieldRe = regexp.MustCompile(`^undefined field '([^']*)'`)
	undeclaredRefRe  = regexp.MustCompile(`^undeclared reference to '([^']*)'`)
	containerRe      = regexp.MustCompile(` \(in container '[^']*'\)`)
	reservedSelectRe = regexp.MustCompile(`\.\??(in|true|false|null)\b`)
)

// celErrorMessage turns a CEL compile error into a message that says how to
// fix it.
func (b *Backend) celErrorMessage(se *schemaEnv, src, display string, e *common.Error) string {
	msg := containerRe.ReplaceAllString(e.Message, "")
	if m := undefinedFieldRe.FindStringSubmatch(msg); m != nil {
		return display + ": " + msg + b.fieldSuggestion(se, src, e.ExprID, m[1])
	}
	if m := undeclaredRefRe.FindStringSubmatch(msg); m != nil {
		name := m[1]
		if p := se.tree.root.prop(name); p != nil {
			return display + ": " + msg + "; did you mean self." + name + "? (the custom resource is self)"
		}
		return display + ": " + msg + didYouMean(name, []string{"self"})
	}
	if strings.HasPrefix(msg, "expected type '") {
		return display + ": " + msg + "; Kubernetes CEL needs list and map literals of one type: wrap each value in dyn(), e.g. {'a': dyn(1), 'b': dyn('x')}"
	}
	if strings.HasPrefix(msg, "Syntax error") {
		if m := reservedSelectRe.FindStringSubmatch(src); m != nil {
			return fmt.Sprintf("%s: %s; %s is a reserved word: select it as `%s` or __%s__", display, msg, m[1], m[1], m[1])
		}
		return display + ": " + msg
	}
	return display + ": " + msg
}

// fieldSuggestion proposes the fields of the object an undefined field was
// selected from.
func (b *Backend) fieldSuggestion(se *schemaEnv, src string, id int64, name string) string {
	parsed, iss := se.env.Parse(src)
	var parent *node
	where := "" // the variable path of parent when it is not self's
	if iss == nil || iss.Err() == nil {
		native := parsed.NativeRep()
		ast.PreOrderVisit(native.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
			if e.ID() != id {
				return
			}
			var operand ast.Expr
			switch e.Kind() {
			case ast.SelectKind:
				operand = e.AsSelect().Operand()
			case ast.CallKind:
				if args := e.AsCall().Args(); len(args) == 2 {
					operand = args[0]
				}
			}
			if operand != nil {
				if parent = resolveChain(se.tree, operand); parent == nil {
					parent, where = varChain(se, operand)
				}
			}
		}))
	}
	if parent != nil && parent.kind == kObject {
		if s := didYouMean(name, parent.fieldNames()); s != "" {
			return s
		}
		names := parent.fieldNames()
		if where == "" {
			where = parent.selfPath()
		}
		if len(names) == 0 {
			return fmt.Sprintf("; %s has no fields", where)
		}
		if len(names) <= 30 {
			return fmt.Sprintf("; %s has %s", where, strings.Join(names, ", "))
		}
		return ""
	}
	return didYouMean(name, se.tree.allName)
}

// varChain resolves a chain of plain selects from a variable besides self
// (sentinels.<name>, cross.<as>.…) and says it as written; nil when e is
// not one.
func varChain(se *schemaEnv, e ast.Expr) (*node, string) {
	switch e.Kind() {
	case ast.IdentKind:
		if t := se.vars[e.AsIdent()]; t != nil {
			return t.root, e.AsIdent()
		}
	case ast.SelectKind:
		if sel := e.AsSelect(); !sel.IsTestOnly() {
			parent, path := varChain(se, sel.Operand())
			if n := childNode(parent, sel.FieldName(), false); n != nil {
				return n, path + "." + sel.FieldName()
			}
		}
	}
	return nil, ""
}

// interpolationProblem says why a value of type t cannot be formatted into
// a string, or "".
func interpolationProblem(tree *schemaTree, t *types.Type, display, text string) string {
	switch t.Kind() {
	case types.StringKind, types.IntKind, types.UintKind, types.DoubleKind, types.BoolKind,
		types.TimestampKind, types.DurationKind, types.DynKind, types.AnyKind, types.TypeParamKind:
		return ""
	case types.ListKind:
		how := "join it, e.g. ${" + strings.TrimSpace(text) + ".join(',')}"
		if t.Parameters()[0].Kind() != types.StringKind {
			how = "join it, e.g. ${" + strings.TrimSpace(text) + ".map(x, string(x)).join(',')}"
		}
		return fmt.Sprintf("%s yields %s, which cannot be interpolated into a string; %s, or make the expression the whole value to keep the list", display, typeWord(tree, t), how)
	case types.MapKind, types.StructKind:
		return fmt.Sprintf("%s yields %s, which cannot be interpolated into a string; make the expression the whole value to keep the map, or pick a field of it", display, typeWord(tree, t))
	case types.NullTypeKind:
		return fmt.Sprintf("%s yields null, which cannot be interpolated into a string", display)
	case types.BytesKind:
		return fmt.Sprintf("%s yields bytes, which cannot be interpolated into a string; convert with string(%s)", display, strings.TrimSpace(text))
	case types.OpaqueKind:
		if t.TypeName() == "optional_type" {
			return fmt.Sprintf("%s yields %s, which cannot be interpolated into a string; give it a default, e.g. ${%s.orValue('')}", display, typeWord(tree, t), strings.TrimSpace(text))
		}
	}
	return fmt.Sprintf("%s yields %s, which cannot be interpolated into a string", display, typeWord(tree, t))
}

func boolHint(t *types.Type, text string) string {
	switch t.Kind() {
	case types.IntKind, types.UintKind, types.DoubleKind:
		return "compare it, e.g. `" + text + " > 0`"
	case types.StringKind:
		return "compare it, e.g. `" + text + " == 'value'`"
	case types.ListKind, types.MapKind:
		return "test its size, e.g. `size(" + text + ") > 0`"
	case types.OpaqueKind:
		if t.TypeName() == "optional_type" {
			return "test it, e.g. `" + text + ".hasValue()`, or give it a default with .orValue(false)"
		}
	case types.NullTypeKind:
		return "compare something with null instead"
	}
	return "make it a comparison or a test that yields true or false"
}

// skipSelectOperator moves from the `.` (or `.?`) of a selection to the
// field name.
func skipSelectOperator(src string, off int) int {
	if off < len(src) && src[off] == '.' {
		off++
		if off < len(src) && src[off] == '?' {
			off++
		}
	}
	return off
}

// callNameOffset moves from the `(` of a global call to its function name.
func callNameOffset(src string, off int, name string) int {
	if off < len(src) && src[off] == '(' && off >= len(name) && src[off-len(name):off] == name {
		return off - len(name)
	}
	return off
}

// span is the source range of e and everything under it, in characters of
// src. Selections are recorded at their dot: their range is extended over
// the field name; calls at their parenthesis: closing brackets are added.
func span(a *ast.AST, src []rune, e ast.Expr) (int, int, bool) {
	start, stop, found := 0, 0, false
	ast.PreOrderVisit(e, ast.NewExprVisitor(func(sub ast.Expr) {
		r, ok := a.SourceInfo().GetOffsetRange(sub.ID())
		if !ok {
			return
		}
		s, t := int(r.Start), int(r.Stop)
		if sub.Kind() == ast.SelectKind {
			t = s + 1
			if t < len(src) && src[t] == '?' {
				t++
			}
			for t < len(src) && src[t] == ' ' {
				t++
			}
			if t < len(src) && src[t] == '`' {
				t += len([]rune(sub.AsSelect().FieldName())) + 2
			} else {
				t += len([]rune(sub.AsSelect().FieldName()))
			}
		}
		if !found || s < start {
			start = s
		}
		if !found || t > stop {
			stop = t
		}
		found = true
	}))
	if !found {
		return 0, 0, false
	}
	stop = min(stop, len(src))
	// Close what the range opened: f(x → f(x), l[0 → l[0].
	var open []rune
	for _, c := range src[start:stop] {
		switch c {
		case '(', '[', '{':
			open = append(open, c)
		case ')', ']', '}':
			if len(open) > 0 {
				open = open[:len(open)-1]
			}
		}
	}
	for len(open) > 0 && stop < len(src) {
		c := src[stop]
		if c == ' ' {
			stop++
			continue
		}
		want := map[rune]rune{'(': ')', '[': ']', '{': '}'}[open[len(open)-1]]
		if c != want {
			break
		}
		open = open[:len(open)-1]
		stop++
	}
	return start, stop, true
}

// spanStart is the byte offset in src of the first character of e.
func spanStart(a *ast.AST, src string, e ast.Expr) int {
	start, _, ok := span(a, []rune(src), e)
	if !ok {
		return -1
	}
	return runeToByte(src, start)
}

// exprByteOffset is the byte offset, in src, of the first character of the
// expression with id.
func exprByteOffset(a *ast.AST, src string, id int64) int {
	r, ok := a.SourceInfo().GetOffsetRange(id)
	if !ok {
		return -1
	}
	return runeToByte(src, int(r.Start))
}

func runeToByte(src string, runeOff int) int {
	if runeOff <= 0 {
		return 0
	}
	n := 0
	for i := range src {
		if n == runeOff {
			return i
		}
		n++
	}
	return len(src)
}

// costHints lists the schema bounds that would lower an expression's
// estimated cost: each list, map or string reachable from self that lacks
// maxItems, maxProperties or maxLength, and each subtree without a schema.
func costHints(tree *schemaTree, a *ast.AST) (paths, hints, untyped []string) {
	seen := map[string]bool{}
	type h struct{ path, kw string }
	var found []h
	addNode := func(n *node) {
		if n == nil || n.bound == "" || seen[n.path] {
			return
		}
		seen[n.path] = true
		found = append(found, h{n.path, n.bound})
	}
	ast.PreOrderVisit(a.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		switch e.Kind() {
		case ast.SelectKind, ast.CallKind:
		default:
			return
		}
		n := resolveChain(tree, e)
		if n == nil {
			return
		}
		addNode(n)
		if n.kind == kList || n.kind == kMap {
			addNode(n.elem)
		}
	}))
	sort.Slice(found, func(i, j int) bool { return found[i].path < found[j].path })
	top := map[string]bool{}
	for _, f := range found {
		if f.kw == "schema" {
			untyped = append(untyped, f.path)
			continue
		}
		p := f.path
		if i := strings.Index(p, "[*]"); i >= 0 {
			p = p[:i]
		}
		if !top[p] {
			top[p] = true
			paths = append(paths, p)
		}
		hints = append(hints, f.path+": "+f.kw)
	}
	return paths, hints, untyped
}

func formatCost(c uint64) string {
	return fmt.Sprintf("%.2g", float64(c))
}

func costMessage(cost, limit uint64, tree *schemaTree, a *ast.AST) string {
	factor := float64(cost) / float64(limit)
	var f string
	switch {
	case factor > 100 || math.IsInf(factor, 0):
		f = "more than 100x"
	default:
		f = fmt.Sprintf("%.1fx", factor)
	}
	msg := fmt.Sprintf("estimated cost %s exceeds budget by factor of %s (limit %s)", formatCost(cost), f, formatCost(limit))
	paths, hints, untyped := costHints(tree, a)
	var fixes []string
	if len(paths) > 0 {
		fixes = append(fixes, fmt.Sprintf("add maxItems/maxLength/maxProperties to the schema of %s (%s)",
			strings.Join(paths, ", "), strings.Join(hints, ", ")))
	}
	if len(untyped) > 0 {
		fixes = append(fixes, fmt.Sprintf("declare the properties of %s (it preserves unknown fields, so its size is only bounded by the request size)",
			strings.Join(untyped, ", ")))
	}
	fixes = append(fixes, "simplify the expression")
	return msg + "; " + strings.Join(fixes, ", or ")
}

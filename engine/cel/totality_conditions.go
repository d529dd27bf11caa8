package cel

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/google/cel-go/common/ast"
)

const isQuantityFact = "\x00isQuantity"

// cond is what condition c establishes when it is truth.
func (t *totality) cond(c ast.Expr, truth bool, f *facts, env map[string]aval) *facts {
	out := (&facts{}).with(nil)
	switch c.Kind() {
	case ast.SelectKind:
		if sel := c.AsSelect(); sel.IsTestOnly() && truth {
			out.present[t.keyIn(sel.Operand(), env)+"."+sel.FieldName()] = true
		}
		return out
	case ast.CallKind:
	default:
		return out
	}
	call := c.AsCall()
	args := call.Args()
	switch fn := call.FunctionName(); fn {
	case "!_":
		return t.cond(args[0], !truth, f, env)
	case "_&&_":
		if truth {
			return t.cond(args[0], true, f, env).with(t.cond(args[1], true, f, env))
		}
	case "_||_":
		if !truth {
			return t.cond(args[0], false, f, env).with(t.cond(args[1], false, f, env))
		}
	case "@in":
		if k, ok := literalString(args[0]); ok && truth {
			out.present[t.keyIn(args[1], env)+"."+k] = true
		}
	case "hasValue", "contains", "matches", "isQuantity":
		if !truth {
			return out
		}
		var target ast.Expr
		rest := args
		if call.IsMemberFunction() {
			target = call.Target()
		} else if len(args) > 0 {
			target, rest = args[0], args[1:]
		}
		if target == nil {
			return out
		}
		k := t.keyIn(target, env)
		switch fn {
		case "hasValue":
			out.present[k] = true
		case "isQuantity":
			out.matches[k] = append(out.matches[k], isQuantityFact)
		default:
			if len(rest) == 1 {
				if s, ok := literalString(rest[0]); ok {
					if fn == "contains" {
						out.contains[k] = append(out.contains[k], s)
					} else {
						out.matches[k] = append(out.matches[k], s)
					}
				}
			}
		}
	case "_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_":
		t.comparison(fn, args, truth, out, env)
	}
	return out
}

// comparison records what `x op literal` establishes: a size bound, or x ≠ 0.
func (t *totality) comparison(fn string, args []ast.Expr, truth bool, out *facts, env map[string]aval) {
	x, lit := args[0], args[1]
	if args[0].Kind() == ast.LiteralKind {
		x, lit = args[1], args[0]
		fn = map[string]string{"_==_": "_==_", "_!=_": "_!=_", "_<_": "_>_", "_<=_": "_>=_", "_>_": "_<_", "_>=_": "_<=_"}[fn]
	}
	if lit.Kind() != ast.LiteralKind {
		return
	}
	n, ok := lit.AsLiteral().Value().(int64)
	if !ok {
		return
	}
	if !truth {
		fn = map[string]string{"_==_": "_!=_", "_!=_": "_==_", "_<_": "_>=_", "_<=_": "_>_", "_>_": "_<=_", "_>=_": "_<_"}[fn]
	}
	// The least value x can have, when the comparison holds.
	least := map[string]int64{"_>_": n + 1, "_>=_": n, "_==_": n}
	if x.Kind() == ast.CallKind {
		if call := x.AsCall(); call.FunctionName() == "size" {
			var of ast.Expr
			if call.IsMemberFunction() {
				of = call.Target()
			} else if len(call.Args()) == 1 {
				of = call.Args()[0]
			}
			if lo, ok := least[fn]; ok && of != nil {
				k := t.keyIn(of, env)
				out.minSize[k] = max(out.minSize[k], int(lo))
			}
			return
		}
	}
	k := t.keyIn(x, env)
	switch {
	case fn == "_!=_" && n == 0, fn == "_==_" && n != 0:
		out.nonzero[k] = true
	case fn == "_>_" && n >= 0, fn == "_>=_" && n > 0, fn == "_<_" && n <= 0, fn == "_<=_" && n < 0:
		out.nonzero[k] = true
	}
}

// alwaysTrue reports whether condition c holds on every object the schema
// accepts: has() of a field the schema guarantees, matches() of a pattern
// the field's own pattern implies, contains() of a separator it requires.
func (t *totality) alwaysTrue(c ast.Expr, f *facts, env map[string]aval) bool {
	if c.Kind() != ast.CallKind {
		return false
	}
	call := c.AsCall()
	if call.FunctionName() == "!_" {
		return t.alwaysFalse(call.Args()[0], f, env)
	}
	if call.IsMemberFunction() && call.FunctionName() == "hasValue" {
		return t.quiet(call.Target(), f, env).some
	}
	if !call.IsMemberFunction() || len(call.Args()) != 1 {
		return false
	}
	s := t.quiet(call.Target(), f, env)
	lit, ok := literalString(call.Args()[0])
	if !ok {
		return false
	}
	switch call.FunctionName() {
	case "matches":
		if l, ok := patternLang(lit, 0); ok {
			return t.stringIn(s, l, f)
		}
	case "contains":
		return t.separators(s, lit, f) > 0
	}
	return false
}

// alwaysFalse reports whether condition c fails on every object: !c holds.
func (t *totality) alwaysFalse(c ast.Expr, f *facts, env map[string]aval) bool {
	if c.Kind() == ast.CallKind && c.AsCall().FunctionName() == "!_" {
		return t.alwaysTrue(c.AsCall().Args()[0], f, env)
	}
	return false
}

// quiet evaluates e's abstract value without reporting anything.
func (t *totality) quiet(e ast.Expr, f *facts, env map[string]aval) aval {
	saved, seen := t.found, t.seen
	t.seen = map[string]bool{}
	v := t.walk(e, f, env)
	t.found, t.seen = saved, seen
	return v
}

// keyIn is the key of e with bound names resolved.
func (t *totality) keyIn(e ast.Expr, env map[string]aval) string {
	return t.quiet(e, (&facts{}).with(nil), env).key
}

// exprKeyOf renders an expression canonically: optional and plain selections
// alike, so that a guard on self.spec.?x covers self.spec.x.
func exprKeyOf(e ast.Expr) string {
	switch e.Kind() {
	case ast.IdentKind:
		return e.AsIdent()
	case ast.LiteralKind:
		return fmt.Sprintf("%#v", e.AsLiteral().Value())
	case ast.SelectKind:
		return exprKeyOf(e.AsSelect().Operand()) + "." + e.AsSelect().FieldName()
	case ast.CallKind:
		call := e.AsCall()
		args := call.Args()
		switch call.FunctionName() {
		case "_?._":
			if s, ok := literalString(args[1]); ok {
				return exprKeyOf(args[0]) + "." + s
			}
		case "_[_]", "_[?_]":
			return exprKeyOf(args[0]) + "[" + exprKeyOf(args[1]) + "]"
		}
		parts := make([]string, 0, len(args)+1)
		if call.IsMemberFunction() {
			parts = append(parts, exprKeyOf(call.Target()))
		}
		for _, a := range args {
			parts = append(parts, exprKeyOf(a))
		}
		return call.FunctionName() + "(" + strings.Join(parts, ", ") + ")"
	}
	return "#" + strconv.FormatInt(e.ID(), 10)
}

// shortKey makes a key readable in a message.
func shortKey(k string) string {
	for _, r := range []struct{ from, to string }{{`"`, `'`}} {
		k = strings.ReplaceAll(k, r.from, r.to)
	}
	if strings.HasPrefix(k, "split(") {
		// split(self.spec.x, ':') → self.spec.x.split(':')
		inner := strings.TrimSuffix(strings.TrimPrefix(k, "split("), ")")
		if i := strings.LastIndex(inner, ", "); i >= 0 {
			return inner[:i] + ".split(" + inner[i+2:] + ")"
		}
	}
	return k
}

func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

func selfExpr(path string) string {
	if strings.HasPrefix(path, "[") || path == "" {
		return "self" + path
	}
	return "self." + path
}

// optionalForm turns the last selection of a reference into an optional
// one: self.spec.x → self.spec.?x.
func optionalForm(ref string) string {
	i := strings.LastIndexByte(ref, '.')
	if i < 0 {
		return ref
	}
	return ref[:i] + ".?" + ref[i+1:]
}

func literalList(keys []any) string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = formatEnumValue(k)
	}
	return strings.Join(out, ", ")
}

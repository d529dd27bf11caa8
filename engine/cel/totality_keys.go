package cel

import (
	"fmt"

	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
)

// mapInsertFn is the function the two-variable comprehension macros
// (transformMapEntry) insert entries with; an entry whose key is already in
// the map fails the evaluation (duplicate key).
const mapInsertFn = "cel.@mapInsert"

// uniqueKeys reports a transformMapEntry (a comprehension whose step
// inserts a map into the accumulator) that can give two entries the same
// key on objects the schema accepts. A key is unique when it is the range
// map's own key; a rename of one key to a literal the map does not hold
// (k == 'a' && !('b' in m) ? 'b' : k); a list-map's key field
// (x-kubernetes-list-type: map, one key); or a set's item.
func (t *totality) uniqueKeys(e ast.Expr, rng aval) {
	c := e.AsComprehension()
	ins := mapInsertOf(c.LoopStep(), c.AccuVar())
	if ins == nil {
		return
	}
	where := rng.path
	if where == "" {
		where = t.text(c.IterRange())
	}
	if ins.Kind() == ast.MapKind && len(ins.AsMap().Entries()) == 1 {
		key := ins.AsMap().Entries()[0].AsMapEntry().Key()
		if uniqueKey(key, c, rng) {
			return
		}
		t.report(e, -1, fmt.Sprintf("transformMapEntry can give two entries of %s the same key %s on objects the schema accepts, and the conversion then fails (duplicate key); key the map by what is unique: the map's own keys, the key field of a list-map (x-kubernetes-list-type: map), the items of a set, or a rename that cannot collide (k == 'a' && !('b' in m) ? 'b' : k)",
			where, t.text(key)))
		return
	}
	t.report(e, -1, fmt.Sprintf("transformMapEntry can give two entries of %s the same key on objects the schema accepts, and the conversion then fails (duplicate key); return a map of one entry whose key is unique: the map's own key, the key field of a list-map (x-kubernetes-list-type: map), or the items of a set", where))
}

// mapInsertOf returns the map the comprehension step inserts into accu
// (also under a filter: cond ? insert : accu), or nil.
func mapInsertOf(step ast.Expr, accu string) ast.Expr {
	if step.Kind() != ast.CallKind {
		return nil
	}
	call := step.AsCall()
	args := call.Args()
	switch {
	case call.FunctionName() == mapInsertFn && len(args) == 2 && identNamed(args[0], accu):
		return args[1]
	case call.FunctionName() == operators.Conditional && len(args) == 3:
		return mapInsertOf(args[1], accu)
	}
	return nil
}

// uniqueKey reports whether key takes a different value for every entry
// the comprehension c goes through.
func uniqueKey(key ast.Expr, c ast.ComprehensionExpr, rng aval) bool {
	if rng.n == nil {
		return false
	}
	switch rng.n.kind {
	case kMap:
		return identNamed(key, c.IterVar()) || guardedRename(key, c)
	case kList:
		if !c.HasIterVar2() {
			return false
		}
		item := c.IterVar2()
		switch {
		case rng.n.listType == "set":
			return identNamed(key, item)
		case rng.n.listType == "map" && len(rng.n.listMapKeys) == 1:
			return key.Kind() == ast.SelectKind && !key.AsSelect().IsTestOnly() &&
				key.AsSelect().FieldName() == rng.n.listMapKeys[0] && identNamed(key.AsSelect().Operand(), item)
		}
	}
	return false
}

// guardedRename: key is `k == 'a' && !('b' in m) ? 'b' : k` (the operands
// of == and of the conjunction in either order), which renames one key to
// one the map m does not hold, and leaves the others as they are.
func guardedRename(key ast.Expr, c ast.ComprehensionExpr) bool {
	if key.Kind() != ast.CallKind || key.AsCall().FunctionName() != operators.Conditional {
		return false
	}
	args := key.AsCall().Args()
	if !identNamed(args[2], c.IterVar()) || args[1].Kind() != ast.LiteralKind {
		return false
	}
	to, ok := args[1].AsLiteral().Value().(string)
	if !ok {
		return false
	}
	pinned, absent := false, false
	for _, x := range conjuncts(args[0]) {
		pinned = pinned || equalsLiteral(x, c.IterVar())
		absent = absent || notIn(x, to, c.IterRange())
	}
	return pinned && absent
}

func conjuncts(e ast.Expr) []ast.Expr {
	if e.Kind() == ast.CallKind && e.AsCall().FunctionName() == operators.LogicalAnd {
		var out []ast.Expr
		for _, a := range e.AsCall().Args() {
			out = append(out, conjuncts(a)...)
		}
		return out
	}
	return []ast.Expr{e}
}

// equalsLiteral: e is `v == 'literal'` or `'literal' == v`.
func equalsLiteral(e ast.Expr, v string) bool {
	if e.Kind() != ast.CallKind || e.AsCall().FunctionName() != operators.Equals {
		return false
	}
	a := e.AsCall().Args()
	return identNamed(a[0], v) && a[1].Kind() == ast.LiteralKind || identNamed(a[1], v) && a[0].Kind() == ast.LiteralKind
}

// notIn: e is `!('lit' in m)` with m the expression rng.
func notIn(e ast.Expr, lit string, rng ast.Expr) bool {
	if e.Kind() != ast.CallKind || e.AsCall().FunctionName() != operators.LogicalNot {
		return false
	}
	in := e.AsCall().Args()[0]
	if in.Kind() != ast.CallKind || in.AsCall().FunctionName() != operators.In {
		return false
	}
	a := in.AsCall().Args()
	s, ok := literalString(a[0])
	return ok && s == lit && exprKeyOf(a[1]) == exprKeyOf(rng)
}

// identNamed: e is the identifier name.
func identNamed(e ast.Expr, name string) bool {
	return e.Kind() == ast.IdentKind && e.AsIdent() == name
}

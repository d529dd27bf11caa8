package engine

import "fmt"

// Two declarations of one hook must never name the same object: the second
// would overwrite the first on every reconcile. When it is provable at load —
// both declarations unconditional, and their kind, namespace and name the
// same literal or the same expression — it is an error here; otherwise the
// renderer reports it when both conditions hold (render: "two declarations
// name …"). Declarations of one object in onCreate and onReconcile are one
// child declared twice (as upstream's reconcile: true shorthand), not a
// collision.

// identity is what names a declaration's object, as written.
type identity struct {
	kind, apiVersion, objKind, namespace, name string
}

// writtenAs renders a field's node as a comparable string: a literal's value,
// an expression's source, "" when the field is absent. ok is false when the
// node is neither (a map or a list, which the loader reports).
func writtenAs(n *Node) (s string, ok bool) {
	switch {
	case n == nil:
		return "", true
	case n.IsLiteral():
		return fmt.Sprintf("literal %v", n.Literal), true
	case n.IsExpr():
		return "expression " + n.Expr.Source(), true
	}
	return "", false
}

func resourceIdentity(r *Resource) (identity, bool) {
	id := identity{kind: r.Kind.Key}
	parts := []*string{&id.name, &id.namespace}
	for i, key := range []string{"name", "namespace"} {
		s, ok := writtenAs(r.Fields.Get(key))
		if !ok {
			return id, false
		}
		*parts[i] = s
	}
	if r.Kind.Open {
		av, ok1 := writtenAs(r.Fields.Get("apiVersion"))
		k, ok2 := writtenAs(r.Fields.Get("kind"))
		if !ok1 || !ok2 {
			return id, false
		}
		id.apiVersion, id.objKind = av, k
	}
	return id, true
}

// checkIdentities reports unconditional declarations of one hook that
// provably name the same object.
func (c *compiler) checkIdentities(sc compileScope, rs []*Resource) {
	first := map[identity]*Resource{}
	for _, r := range rs {
		if r.When != nil {
			continue
		}
		id, ok := resourceIdentity(r)
		if !ok {
			continue
		}
		prev, dup := first[id]
		if !dup {
			first[id] = r
			continue
		}
		what := "name"
		if r.Source.Fields.Get("name") == nil {
			what = "default name <cr>-" + r.Kind.NameSuffix
		}
		c.errorf(sc, r.Source.Pos, "operatorBox."+r.Source.FieldPath(),
			"names the same object as operatorBox.%s (%s): both are unconditional and have the same %s and namespace, so each reconcile would overwrite one with the other; give each its own name",
			prev.Source.FieldPath(), prev.Source.Pos, what)
	}
}

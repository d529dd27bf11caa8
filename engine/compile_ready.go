package engine

import (
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/katalog"
)

// Readiness and order of a custom resource's children, kro's readyWhen and
// dependency graph (katalog/readiness.go decodes them): readyWhen is
// compiled over the observed child — self typed by its kind's schema, a
// forEach child's item and a motif's inputs readable as in its other
// expressions — and
// dependsOn is resolved to the declarations it names, which gives every
// declaration its wave: the order children are made in, and deleted in
// reverse.

// Need is one declaration another waits for.
type Need struct {
	On *Resource
	// Condition is katalog.DependencyReady or katalog.DependencyCreated.
	Condition string
	Pos       katalog.Pos
}

// readyWhen compiles a declaration's readyWhen; nil when it has none.
func (c *compiler) readyWhen(sc compileScope, r *katalog.Resource, out *Resource) Condition {
	if r.ReadyWhen.Empty() {
		return nil
	}
	rsc := compileScope{entry: sc.entry, self: c.declarationSchema(r, out), selfVersion: declarationKind(r, out), timed: sc.timed}
	if out.Inputs != nil {
		rsc = rsc.withInputs(out.Inputs)
	}
	if out.ForEach != nil {
		rsc = rsc.withForEach(out.ForEach)
	}
	return c.when(rsc, r.ReadyWhen, true, "operatorBox."+r.FieldPath()+".readyWhen")
}

// declarationSchema types the observed child of a declaration: a built-in
// kind by Kubernetes' schema, a custom one of a literal kind by the CRD of
// the katalog entry serving it, else untyped.
func (c *compiler) declarationSchema(r *katalog.Resource, out *Resource) *structuralschema.Structural {
	if !out.Kind.Open {
		return builtinSchema(out.Kind)
	}
	if out.GVK == nil || c.k == nil {
		return &anyObject
	}
	return customSchema(c.k, *out.GVK)
}

// declarationKind names a declaration's kind for messages ("the schema of
// apps/v1 Deployment").
func declarationKind(r *katalog.Resource, out *Resource) string {
	if out.GVK == nil {
		return r.Kind
	}
	return out.GVK.GroupVersion().String() + " " + out.GVK.Kind
}

// order resolves the dependsOn of an entry's onCreate and onReconcile
// declarations and gives each its wave: 0 without dependsOn, else one more
// than the highest wave it waits for. The loader refused unknown ids and
// cycles.
func (c *compiler) order(e *Entry) {
	byID := map[string]*Resource{}
	var decls []*Resource
	for _, h := range []string{katalog.OnCreate, katalog.OnReconcile} {
		for _, r := range e.Hooks[h] {
			decls = append(decls, r)
			if r.Source.ID != "" {
				byID[r.Source.ID] = r
			}
		}
	}
	for _, r := range decls {
		for _, dep := range r.Source.DependsOn {
			if on := byID[dep.Name]; on != nil && on != r {
				r.Needs = append(r.Needs, &Need{On: on, Condition: dep.Condition, Pos: dep.Pos})
			}
		}
	}
	waves := map[*Resource]int{}
	var wave func(r *Resource, depth int) int
	wave = func(r *Resource, depth int) int {
		if w, ok := waves[r]; ok || depth > len(decls) {
			return w
		}
		w := 0
		for _, n := range r.Needs {
			w = max(w, wave(n.On, depth+1)+1)
		}
		waves[r] = w
		return w
	}
	for _, r := range decls {
		r.Wave = wave(r, 0)
		if r.Wave > 0 {
			e.Ordered = true
		}
	}
}

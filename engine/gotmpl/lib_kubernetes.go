package gotmpl

import (
	"github.com/google/cel-go/cel"

	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/notes"
)

// The functions of a Kubernetes object (upstream pkg/note/kubernetes.go,
// docs/09-kubernetes.md): of a child of the custom resource, e.g.
// `.children.deployment`.

var kubernetesFamily = family{name: "kubernetes (a child object, e.g. `.children.deployment`)", functions: []*function{
	objectFunction("resourceExists", notes.ResourceExists, "`resourceExists` (a real child, not the placeholder of a kind without children)"),
	objectFunction("phase", notes.Phase, "`phase`"),
	objectFunction("resourceCPU", notes.ResourceCPU, "`resourceCPU`"),
	objectFunction("resourceMemory", notes.ResourceMemory, "`resourceMemory` (the object's `spec.resources.requests`)"),
}}

// objectFunction is the row of a function of a Kubernetes object from the
// original's library (engine/notes), whose CEL counterpart has the same
// name and implementation. A missing object reads as nil, as in the legacy
// engine: the translation gives fn(nil) then.
func objectFunction[R bool | int | int64 | string](name string, fn func(any) R, doc string) *function {
	kind, result := vString, cel.StringType
	switch any(*new(R)).(type) {
	case bool:
		kind, result = vBool, cel.BoolType
	case int, int64:
		kind, result = vInt, cel.IntType
	}
	zero := celLiteralOf(celNativeOf(fn(nil)))
	return &function{name: name, fn: fn, doc: doc,
		celDecl: []celengine.Overload{celengine.ObjectFunction(name, result, func(o any) any { return fn(o) })},
		translate: func(t *translator, x *call) val {
			t.arity(x, 1, 1)
			a := x.args[0]
			if a.kind != vMap {
				t.failf(x.node(0), "%s takes a Kubernetes object, %s", name, kindName(a))
			}
			out := val{kind: kind, prec: precPrimary}
			if a.opt == nil {
				out.expr = name + "(" + a.expr + ")"
				return out
			}
			out.expr = p(*a.opt, precPrimary) + ".hasValue() ? " + name + "(" + p(*a.opt, precPrimary) + ".value()) : " + zero
			out.prec = precTernary
			return out
		}}
}

// celNativeOf is v as the CEL literal of its kind takes it (int64 for any
// integer).
func celNativeOf(v any) any {
	if i, ok := v.(int); ok {
		return int64(i)
	}
	return v
}

package gotmpl

import (
	"strings"

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
	objectFunction("resourceName", notes.ResourceName, "`resourceName`"),
	objectFunction("resourceNamespace", notes.ResourceNamespace, "`resourceNamespace`"),
	objectFunction("resourceUID", notes.ResourceUID, "`resourceUID`"),
	objectFunction("resourceVersion", notes.ResourceVersion, "`resourceVersion`"),
	objectFunction("creationTimestamp", notes.CreationTimestamp, "`creationTimestamp` (metadata fields, `\"\"` when absent)"),
	objectFunction("generation", notes.Generation, "`generation`"),
	objectFunction("observedGeneration", notes.ObservedGeneration, "`observedGeneration`"),
	objectFunction("isSynced", notes.IsSynced, "`isSynced` (generation equals status.observedGeneration)"),
	objectFunction("isTerminating", notes.IsTerminating, "`isTerminating` (deletionTimestamp set)"),
	objectFunction("ownerKind", notes.OwnerKind, "`ownerKind`"),
	objectFunction("ownerName", notes.OwnerName, "`ownerName` (of the first owner reference)"),
	valueFirst(noteFunction("getLabel", notes.GetLabel, argObjKey, 0, "`getLabel OBJ KEY`")),
	valueFirst(noteFunction("getAnnotation", notes.GetAnnotation, argObjKey, 0, "`getAnnotation OBJ KEY` (`\"\"` when absent)")),
	valueFirst(noteFunction("getLabelInt", notes.GetLabelInt, argObjKey, 0, "`getLabelInt OBJ KEY`")),
	valueFirst(noteFunction("getAnnotationInt", notes.GetAnnotationInt, argObjKey, 0, "`getAnnotationInt OBJ KEY` (the value as an integer, 0 when absent or not one)")),
	valueFirst(noteFunction("hasLabel", notes.HasLabel, argObjKey, 0, "`hasLabel OBJ KEY`")),
	valueFirst(noteFunction("hasAnnotation", notes.HasAnnotation, argObjKey, 0, "`hasAnnotation OBJ KEY` (set and not empty)")),
	{name: "labelMatches", fn: notes.LabelMatches, pipeFirst: true, doc: "`labelMatches OBJ K1 V1 K2 V2 …` (every pair is a label of the object)",
		celDecl: labelMatchesDecls(3), translate: trLabelMatches},
	valueFirst(noteFunction("hasCondition", notes.HasCondition, argObjKey, 0, "`hasCondition OBJ TYPE` (a condition of that type with status `True`)")),
	valueFirst(noteFunction("conditionReason", notes.ConditionReason, argObjKey, 0, "`conditionReason OBJ TYPE`")),
	valueFirst(noteFunction("conditionMessage", notes.ConditionMessage, argObjKey, 0, "`conditionMessage OBJ TYPE` (`\"\"` when there is no such condition)")),
	valueFirst(noteFunction("getStatus", notes.GetStatus, argObjKey, 0, "`getStatus OBJ KEY` (a scalar status field as a string; `\"\"` for a map, a list or nothing)")),
	valueFirst(noteFunction("hasStatus", notes.HasStatus, argObjKey, 0, "`hasStatus OBJ KEY` (present and not empty)")),
	objectMap("meta", notes.Meta, "`meta`"),
	objectMap("labels", notes.Labels, "`labels`"),
	objectMap("annotations", notes.Annotations, "`annotations`"),
	objectMap("spec", notes.Spec, "`spec`"),
	objectMap("status", notes.Status, "`status` (that map of the object; empty when absent, never nil)"),
}}

// objectMap is the row of a reader of one of an object's maps. A call is
// not translated: in CEL the object's field is typed by its schema, read it
// as o.?metadata.?labels.orValue({}).
func objectMap(name string, fn func(any) map[string]any, doc string) *function {
	return &function{name: name, fn: fn, doc: doc, celDecl: anyFunction(name, fn, cel.MapType(cel.StringType, cel.DynType), cel.DynType),
		noCEL: "the object's map is typed by its schema in CEL; read the field, e.g. o.?metadata.?labels.orValue({}), or call " + name + "(o)"}
}

// labelMatchesDecls are labelMatches' CEL overloads of 1 to n key/value
// pairs (CEL has no variadic functions).
func labelMatchesDecls(n int) []celengine.Overload {
	var out []celengine.Overload
	for pairs := 1; pairs <= n; pairs++ {
		args := []*cel.Type{cel.DynType}
		for i := 0; i < 2*pairs; i++ {
			args = append(args, cel.StringType)
		}
		out = append(out, celengine.NativeFunction("labelMatches", args, cel.BoolType, 0, 0, func(in []any) (any, error) {
			kv := make([]string, len(in)-1)
			for i, a := range in[1:] {
				kv[i], _ = a.(string)
			}
			return notes.LabelMatches(in[0], kv...), nil
		}))
	}
	return out
}

// trLabelMatches calls the counterpart with up to three pairs.
func trLabelMatches(t *translator, x *call) val {
	t.arity(x, 1, -1)
	if len(x.args) > 7 || len(x.args)%2 == 0 {
		t.failf(x.id, "labelMatches has a CEL counterpart for one to three complete key/value pairs")
	}
	if x.args[0].kind != vMap || x.args[0].opt != nil {
		t.failf(x.node(0), "labelMatches takes a Kubernetes object that is present, %s", kindName(x.args[0]))
	}
	parts := []string{x.args[0].expr}
	for i := 1; i < len(x.args); i++ {
		parts = append(parts, t.want(x.args[i], vString, x.name(), x.node(i)).expr)
	}
	return val{kind: vBool, expr: "labelMatches(" + strings.Join(parts, ", ") + ")", prec: precPrimary}
}

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

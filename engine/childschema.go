package engine

import (
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/engine/kubeschema"
	"github.com/orkspace/orkestra-cel/katalog"
)

// ChildrenVar is the CEL variable holding a custom resource's observed
// children, the values of Scope.Children: `children.deployments['web']` (by
// name) and `children.deployment` (the first by name), as the original
// engine's `.children` (katalog.KindSpec.Children).
const ChildrenVar = "children"

// childrenSchema types the children variable of an entry: for every kind its
// hooks declare, the plural key maps a child's name to the child and the
// singular key holds one child. Built-in kinds are typed by Kubernetes'
// published schema (kubeschema); custom children by the CRD of the katalog
// entry serving their kind when all custom children of the entry have that
// one literal kind, else they are dyn.
func childrenSchema(k *katalog.Katalog, e *katalog.CRDEntry) *structuralschema.Structural {
	out := &structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Properties: map[string]structuralschema.Structural{}}
	if e.Box == nil {
		return out
	}
	for _, h := range katalog.Hooks {
		hook := e.Box.Hooks[h]
		if hook == nil {
			continue
		}
		for _, r := range hook.Resources {
			spec, ok := katalog.ResourceKinds[r.Kind]
			if !ok {
				continue
			}
			key := spec.Children
			if _, done := out.Properties[key.Plural]; done {
				continue
			}
			child := childSchema(k, e, r.Kind)
			out.Properties[key.Plural] = structuralschema.Structural{
				Generic:              structuralschema.Generic{Type: "object"},
				AdditionalProperties: &structuralschema.StructuralOrBool{Bool: true, Structural: child},
			}
			out.Properties[key.Singular] = *child
		}
	}
	return out
}

var anyObject = structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Extensions: structuralschema.Extensions{XPreserveUnknownFields: true}}

func childSchema(k *katalog.Katalog, e *katalog.CRDEntry, kind string) *structuralschema.Structural {
	spec := katalog.ResourceKinds[kind]
	if !spec.Open {
		return builtinSchema(spec)
	}
	gvk, ok := customKind(e)
	if !ok {
		return &anyObject
	}
	return customSchema(k, gvk)
}

// builtinSchema is a built-in kind's schema as Kubernetes publishes it.
func builtinSchema(spec *katalog.KindSpec) *structuralschema.Structural {
	if s := kubeschema.Schema(schema.FromAPIVersionAndKind(spec.APIVersion, spec.Kind)); s != nil {
		return s
	}
	return &anyObject
}

// customSchema is the schema of a custom kind: its CRD's, where an entry of
// the katalog serves it, with apiVersion, kind and metadata; else any object.
func customSchema(k *katalog.Katalog, gvk schema.GroupVersionKind) *structuralschema.Structural {
	for _, other := range k.CRDs {
		if other.CRD == nil || other.GVK() != gvk || other.Schema() == nil || !other.CRD.Typed() {
			continue
		}
		cp := *other.Schema()
		cp.Properties = make(map[string]structuralschema.Structural, len(other.Schema().Properties)+3)
		for p, v := range other.Schema().Properties {
			cp.Properties[p] = v
		}
		str := structuralschema.Structural{Generic: structuralschema.Generic{Type: "string"}}
		cp.Properties["apiVersion"], cp.Properties["kind"] = str, str
		cp.Properties["metadata"] = anyObject
		return &cp
	}
	return &anyObject
}

// customKind is the one literal kind of an entry's custom children.
func customKind(e *katalog.CRDEntry) (schema.GroupVersionKind, bool) {
	var found *schema.GroupVersionKind
	for _, h := range katalog.Hooks {
		hook := e.Box.Hooks[h]
		if hook == nil {
			continue
		}
		for _, r := range hook.Resources {
			if r.Kind != "custom" {
				continue
			}
			av, kd := r.Fields.Get("apiVersion"), r.Fields.Get("kind")
			if av == nil || kd == nil || av.Kind != katalog.StringValue || kd.Kind != katalog.StringValue || Classify(av.Str) != Literal || Classify(kd.Str) != Literal {
				return schema.GroupVersionKind{}, false
			}
			gvk := schema.FromAPIVersionAndKind(av.Str, kd.Str)
			if found != nil && *found != gvk {
				return schema.GroupVersionKind{}, false
			}
			found = &gvk
		}
	}
	if found == nil {
		return schema.GroupVersionKind{}, false
	}
	return *found, true
}

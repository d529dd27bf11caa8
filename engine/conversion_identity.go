package engine

import (
	"slices"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ConvertsByWebhook reports whether the CRD of gk needs the /convert
// webhook: the katalog declares its conversion and it is not the identity.
// An identity conversion is installed with `conversion.strategy: None`, so
// the API server never calls out.
func (p *Plan) ConvertsByWebhook(gk schema.GroupKind) bool {
	c := p.Conversions[gk]
	return c != nil && !c.Identity
}

// isIdentity reports whether every conversion between the CRD's versions
// gives the object back unchanged but for apiVersion: all versions share one
// schema, and every path maps no labels or annotations and either leaves
// spec (and status) alone or copies each field to the same place with a
// plain CEL field reference. What the API server's `None` strategy does is
// then exactly what the webhook would do.
func isIdentity(c *Conversion) bool {
	if !c.CRD.SameSchemas() {
		return false
	}
	for _, p := range c.Paths {
		if p.Labels != nil || p.Annotations != nil {
			return false
		}
		s := c.Schemas[p.To]
		for _, part := range []struct {
			name string
			node *Node
		}{{"spec", p.Spec}, {"status", p.Status}} {
			if part.node != nil && !copies(part.node, []string{part.name}, property(s, part.name)) {
				return false
			}
		}
	}
	return true
}

// copies reports whether n writes, at path, exactly the source's value at
// path: a plain reference to that field, or a map copying every property of
// a closed object schema field by field.
func copies(n *Node, path []string, s *structuralschema.Structural) bool {
	switch {
	case n.IsExpr():
		r, ok := n.Expr.(FieldRef)
		return ok && slices.Equal(r.FieldPath(), path)
	case n.IsMap():
		if s == nil || s.XPreserveUnknownFields || s.AdditionalProperties != nil || len(n.Fields) != len(s.Properties) {
			return false
		}
		for _, f := range n.Fields {
			sub, ok := s.Properties[f.Key]
			if !ok || !copies(f.Value, append(slices.Clip(path), f.Key), &sub) {
				return false
			}
		}
		return true
	}
	return false
}

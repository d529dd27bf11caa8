package objgen

import structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

// embedded generates an x-kubernetes-embedded-resource: an object with
// apiVersion, kind, usually metadata, and the schema's fields.
func (g *generator) embedded(s *structuralschema.Structural, l loc, depth int) (map[string]any, error) {
	obj, err := g.objectFields(s, l, depth, true, nil)
	if err != nil {
		return nil, err
	}
	obj["apiVersion"] = g.typeMetaField(s, l, "apiVersion", depth, embeddedAPIVersions, validAPIVersion)
	obj["kind"] = g.typeMetaField(s, l, "kind", depth, embeddedKinds, validKind)
	_, declared := s.Properties["metadata"]
	counted := s.ValueValidation != nil && s.ValueValidation.MinProperties != nil // objectFields counted it
	if declared || counted || g.chance(0.7) {
		meta := map[string]any{}
		name := g.dnsLabel(12)
		if ms, ok := s.Properties["metadata"]; ok {
			if ns, ok := ms.Properties["name"]; ok && hasValueValidation(&ns) {
				name = ""
				for a := 0; a < attempts; a++ {
					v, err := g.value(&ns, l.child("metadata").child("name"), depth+2)
					if str, ok := v.(string); err == nil && ok && validEmbeddedName(str) {
						name = str
						break
					}
				}
			}
		}
		if name != "" {
			meta["name"] = name
		}
		if labels := g.labels(); labels != nil {
			meta["labels"] = labels
		}
		obj["metadata"] = meta
	}
	return obj, nil
}

var (
	embeddedAPIVersions = []string{"v1", "apps/v1", "batch/v1", "example.com/v1alpha1"}
	embeddedKinds       = []string{"ConfigMap", "Deployment", "Job", "Widget"}
)

// typeMetaField picks apiVersion or kind of an embedded resource: from the
// schema when it constrains the field, else from a list of plausible values.
func (g *generator) typeMetaField(s *structuralschema.Structural, l loc, name string, depth int, fallback []string, valid func(string) bool) string {
	if p, ok := s.Properties[name]; ok && hasValueValidation(&p) {
		for a := 0; a < attempts; a++ {
			v, err := g.value(&p, l.child(name), depth+1)
			if str, ok := v.(string); err == nil && ok && valid(str) {
				return str
			}
		}
	}
	return fallback[g.r.IntN(len(fallback))]
}

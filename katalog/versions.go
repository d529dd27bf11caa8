package katalog

import "k8s.io/apimachinery/pkg/api/equality"

// SameSchemas reports whether every version of the CRD declares the same
// schema: converting between them then only changes apiVersion.
func (c *CRD) SameSchemas() bool {
	vs := c.Object.Spec.Versions
	for _, v := range vs[min(1, len(vs)):] {
		if !equality.Semantic.DeepEqual(v.Schema, vs[0].Schema) {
			return false
		}
	}
	return true
}

package engine

import (
	"fmt"

	"github.com/orkspace/orkestra-cel/katalog"
)

// conversion compiles an entry's conversion paths, each in a scope of its
// own: self is the path's source object, and nothing else.
func (c *compiler) conversion(sc compileScope) *Conversion {
	e := sc.entry
	crd := e.CRD
	conv := &Conversion{
		GroupKind:      crd.GroupKind(),
		CRD:            crd,
		Entry:          e.Name,
		StorageVersion: crd.StorageVersion,
		Versions:       crd.Served,
		Schemas:        crd.Schemas,
		Paths:          map[[2]string]*Path{},
	}
	for _, p := range e.Conversion.Paths {
		from, to := crd.Schemas[p.From], crd.Schemas[p.To]
		if from == nil || to == nil {
			continue // the loader reported the unknown version
		}
		base := fmt.Sprintf("conversion.paths[%d]", p.Index)
		ps := compileScope{entry: e, self: from, selfVersion: p.From}
		t := target{coerce: CoerceGuess, checkRequired: true, total: true}
		cp := &Path{Source: p, From: p.From, To: p.To, ToAPIVersion: crd.Object.Spec.Group + "/" + p.To}
		start := len(c.diags)
		if p.Spec != nil {
			t.field = base + ".spec"
			cp.Spec = c.value(ps, p.Spec, property(to, "spec"), t)
		}
		if p.Status != nil {
			t.field = base + ".status"
			cp.Status = c.value(ps, p.Status, property(to, "status"), t)
		}
		stringMap := katalog.ResourceKinds["configMaps"].Fields["data"]
		if p.Labels != nil {
			lt := t
			lt.field, lt.labels = base+".metadata.labels", true
			cp.Labels = c.value(ps, p.Labels, stringMap, lt)
		}
		if p.Annotations != nil {
			t.field = base + ".metadata.annotations"
			cp.Annotations = c.value(ps, p.Annotations, stringMap, t)
		}
		c.pathFindings(cp, e.Name, c.diags[start:])
		conv.Paths[[2]string{p.From, p.To}] = cp
	}
	// Every pair of served versions must be reachable, directly or through
	// the storage version.
	for _, a := range crd.Served {
		for _, b := range crd.Served {
			if a == b {
				continue
			}
			if _, ok := conv.Route(a, b); !ok {
				hint := fmt.Sprintf("add a path from %s to %s", a, b)
				if a != crd.StorageVersion && b != crd.StorageVersion {
					hint += fmt.Sprintf(", or paths %s→%s and %s→%s through the storage version", a, crd.StorageVersion, crd.StorageVersion, b)
				}
				c.errorf(sc, e.Conversion.Pos, "conversion.paths", "no conversion from %s to %s: %s", a, b, hint)
			}
		}
	}
	conv.Identity = isIdentity(conv)
	return conv
}

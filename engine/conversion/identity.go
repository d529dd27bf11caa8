package conversion

import (
	"slices"

	"github.com/orkspace/orkestra-cel/engine"
)

// identityLeaves finds, for every pair of direct paths A→B and B→A, the
// leaves of B→A's spec that read back exactly what A→B copied.
func identityLeaves(plan *engine.Plan) map[*engine.Node]bool {
	out := map[*engine.Node]bool{}
	for _, conv := range plan.Conversions {
		for pair, back := range conv.Paths {
			fwd := conv.Paths[[2]string{pair[1], pair[0]}]
			if fwd == nil || fwd.Spec == nil || back.Spec == nil {
				continue
			}
			var walk func(n *engine.Node, target []string)
			walk = func(n *engine.Node, target []string) {
				switch {
				case n.IsMap():
					for _, f := range n.Fields {
						walk(f.Value, append(target, f.Key))
					}
				case n.IsExpr():
					src := fieldPath(n)
					if len(src) < 2 || src[0] != "spec" {
						return
					}
					w := fwd.Spec
					for _, k := range src[1:] {
						if w == nil || !w.IsMap() {
							return
						}
						w = w.Get(k)
					}
					if w != nil && w.IsExpr() && slices.Equal(fieldPath(w), target) {
						out[n] = true
					}
				}
			}
			walk(back.Spec, []string{"spec"})
		}
	}
	return out
}

func fieldPath(n *engine.Node) []string {
	if r, ok := n.Expr.(engine.FieldRef); ok {
		return r.FieldPath()
	}
	return nil
}

package conversion

import (
	"github.com/orkspace/orkestra-cel/engine"
)

// stableObject are the parts of an object an expression that reads it whole
// depends on: what a client edits, not what the API server bumps on every
// write (resourceVersion, generation, managedFields, timestamps).
var stableObject = [][]string{
	{"apiVersion"}, {"kind"}, {"spec"}, {"status"},
	{"metadata", "name"}, {"metadata", "namespace"}, {"metadata", "labels"}, {"metadata", "annotations"},
	{"metadata", "finalizers"}, {"metadata", "ownerReferences"},
}

// nodeInputs finds, for every computing node of every path — an expression,
// or a list holding expressions — the data paths of self it reads.
func nodeInputs(plan *engine.Plan) map[*engine.Node][][]string {
	out := map[*engine.Node][][]string{}
	for _, conv := range plan.Conversions {
		for _, p := range conv.Paths {
			for _, root := range []*engine.Node{p.Spec, p.Status, p.Labels, p.Annotations} {
				root.Walk(func(n *engine.Node) {
					switch {
					case n.IsExpr():
						out[n] = exprInputs(n.Expr)
					case n.IsList():
						var all [][]string
						computes := false
						n.Walk(func(x *engine.Node) {
							if x.IsExpr() {
								computes = true
								all = append(all, exprInputs(x.Expr)...)
							}
						})
						if computes {
							out[n] = all
						}
					}
				})
			}
		}
	}
	return out
}

// exprInputs are the paths an expression reads, with "the whole object" (or
// its whole metadata) narrowed to stableObject.
func exprInputs(e engine.Expr) [][]string {
	r, ok := e.(engine.InputReader)
	if !ok {
		return stableObject // legacy templates: anything may be read
	}
	var out [][]string
	for _, p := range r.Inputs() {
		switch {
		case len(p) == 0:
			return stableObject
		case len(p) == 1 && p[0] == "metadata":
			for _, s := range stableObject {
				if s[0] == "metadata" {
					out = append(out, s)
				}
			}
		default:
			out = append(out, p)
		}
	}
	return out
}

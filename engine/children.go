package engine

import (
	"sort"

	"github.com/orkspace/orkestra-cel/katalog"
)

// PlaceholderKey marks the object that stands in the singular key of a
// declared kind with no child yet: {"_placeholder": true, "status": {}}, so
// `.children.deployment.status.readyReplicas` renders empty instead of
// failing, as in the original engine.
const PlaceholderKey = "_placeholder"

// ChildrenView builds Scope.Children from the observed children of each
// declared kind (keyed by katalog kind, e.g. "deployments"; a declared kind
// with no child yet has an empty or nil slice). Objects are not modified: one
// without a status gets a shallow copy with an empty status map, as the
// original engine gave every child. The singular key holds the child whose
// name sorts first (the original took a Go map's first entry, which is
// random when there are several).
func ChildrenView(observed map[string][]map[string]any) map[string]any {
	out := make(map[string]any, 2*len(observed))
	for kind, objs := range observed {
		spec, ok := katalog.ResourceKinds[kind]
		if !ok {
			continue
		}
		key := spec.Children
		byName := make(map[string]any, len(objs))
		names := make([]string, 0, len(objs))
		for _, o := range objs {
			name := objectName(o)
			if _, ok := o["status"].(map[string]any); !ok {
				c := make(map[string]any, len(o)+1)
				for k, v := range o {
					c[k] = v
				}
				c["status"] = map[string]any{}
				o = c
			}
			byName[name] = o
			names = append(names, name)
		}
		out[key.Plural] = byName
		if len(names) == 0 {
			out[key.Singular] = map[string]any{PlaceholderKey: true, "status": map[string]any{}}
			continue
		}
		sort.Strings(names)
		out[key.Singular] = byName[names[0]]
	}
	return out
}

func objectName(o map[string]any) string {
	md, _ := o["metadata"].(map[string]any)
	n, _ := md["name"].(string)
	return n
}

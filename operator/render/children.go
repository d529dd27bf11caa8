package render

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// ChildrenView groups a custom resource's observed children (objects as
// maps, each with apiVersion and kind) by the kinds entry declares, in the
// shape expressions read them (engine.ChildrenView): every declared kind has
// its keys, an object of a kind the entry does not declare is left out. The
// operator passes what its caches hold; `orkestra render --children` the
// objects of the files given.
func ChildrenView(entry *engine.Entry, objs []map[string]any) map[string]any {
	observed := map[string][]map[string]any{}
	declared := map[string]bool{}
	for _, h := range katalog.Hooks {
		for _, r := range entry.Hooks[h] {
			declared[r.Kind.Key] = true
			if _, ok := observed[r.Kind.Key]; !ok {
				observed[r.Kind.Key] = nil
			}
		}
	}
	for _, o := range objs {
		av, _ := o["apiVersion"].(string)
		k, _ := o["kind"].(string)
		key := KindKeyOf(schema.FromAPIVersionAndKind(av, k))
		if declared[key] {
			observed[key] = append(observed[key], o)
		}
	}
	return engine.ChildrenView(observed)
}

// KindKeyOf is the katalog kind key of objects of gvk: a built-in kind's
// key, else custom.
func KindKeyOf(gvk schema.GroupVersionKind) string {
	for key, k := range katalog.ResourceKinds {
		if !k.Open && k.APIVersion == gvk.GroupVersion().String() && k.Kind == gvk.Kind {
			return key
		}
	}
	return "custom"
}

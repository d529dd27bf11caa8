package operator

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/operator/render"
)

// Children read back: expressions may read a custom resource's children as
// the operator observed them (CEL `children`, legacy `.children`). They come
// from the informer caches the controllers already hold — listed through an
// index of the orkestra-owner label, no API call — and are read only for
// entries whose expressions mention them.

// ownerIndex indexes cached children by their orkestra-owner label.
const ownerIndex = "orkestra.orkspace.io/owner"

// indexChildren registers ownerIndex on the cache of every child kind the
// plan's entries read back (once per kind, before the caches start).
func indexChildren(ctx context.Context, mgr manager.Manager, plan *engine.Plan) error {
	done := map[schema.GroupVersionKind]bool{}
	for _, e := range plan.Entries {
		if !e.Enabled || !e.Reconciles || !indexesChildren(e) {
			continue
		}
		for _, k := range childKinds(e) {
			if done[k.gvk] {
				continue
			}
			done[k.gvk] = true
			if k.custom {
				if _, err := mgr.GetRESTMapper().RESTMapping(k.gvk.GroupKind(), k.gvk.Version); err != nil {
					continue // not served: not watched either (see setup)
				}
			}
			obj, err := cachedObject(mgr.GetScheme(), k)
			if err != nil {
				return err
			}
			if err := mgr.GetFieldIndexer().IndexField(ctx, obj, ownerIndex, func(o client.Object) []string {
				if v, ok := o.GetLabels()[render.LabelOwner]; ok {
					return []string{v}
				}
				return nil
			}); err != nil {
				return fmt.Errorf("indexing %s children: %w", k.gvk, err)
			}
		}
	}
	return nil
}

// indexesChildren reports whether the caches index the children of e by
// owner: when e reads them back, has forEach declarations or deletes its
// children in order.
func indexesChildren(e *engine.Entry) bool {
	return e.ReadsChildren || hasForEach(e) || e.Ordered
}

// hasForEach reports whether an entry has forEach declarations: their
// children of items that are gone are found through ownerIndex.
func hasForEach(e *engine.Entry) bool {
	for _, rs := range e.Hooks {
		for _, r := range rs {
			if r.ForEach != nil {
				return true
			}
		}
	}
	return false
}

// cachedObject is an empty object of the kind the cache holds: typed for
// built-in kinds, unstructured for custom ones.
func cachedObject(s *runtime.Scheme, k childKind) (client.Object, error) {
	if k.custom {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(k.gvk)
		return u, nil
	}
	return newObject(s, k.gvk)
}

// observedChildren returns the custom resource's children of every kind the
// entry declares, in engine.ChildrenView's shape; nil when the entry reads
// none back.
func (e *entryController) observedChildren(ctx context.Context, cr *unstructured.Unstructured) (map[string]any, error) {
	if !e.entry.ReadsChildren {
		return nil, nil
	}
	var objs []map[string]any
	for _, k := range childKinds(e.entry) {
		got, err := e.listChildren(ctx, cr, k)
		if err != nil {
			return nil, err
		}
		if got, err = e.withPods(ctx, k.gvk.Kind, got); err != nil {
			return nil, err
		}
		objs = append(objs, got...)
	}
	return render.ChildrenView(e.entry, objs), nil
}

// listChildren lists from the cache the objects of kind k the custom
// resource owns, as maps.
func (e *entryController) listChildren(ctx context.Context, cr *unstructured.Unstructured, k childKind) ([]map[string]any, error) {
	objs, err := e.ownedObjects(ctx, cr, k)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, 0, len(objs))
	for _, obj := range objs {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			out = append(out, u.Object)
			continue
		}
		m, err := e.views.of(obj, k.gvk)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// childViews keeps the map form of typed children by UID and resource
// version: a child converts once per change, not once per reconcile. The
// maps are shared read-only by the evaluations (nothing writes to them).
type childViews struct {
	mu sync.Mutex
	m  map[types.UID]childView
}

type childView struct {
	rv  string
	obj map[string]any
}

// maxChildViews bounds the cache; past it, it starts over.
const maxChildViews = 1 << 14

func (v *childViews) of(obj client.Object, gvk schema.GroupVersionKind) (map[string]any, error) {
	v.mu.Lock()
	cur, ok := v.m[obj.GetUID()]
	v.mu.Unlock()
	if ok && cur.rv == obj.GetResourceVersion() {
		return cur.obj, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	m["apiVersion"], m["kind"] = gvk.GroupVersion().String(), gvk.Kind
	v.mu.Lock()
	if v.m == nil || len(v.m) >= maxChildViews {
		v.m = map[types.UID]childView{}
	}
	v.m[obj.GetUID()] = childView{rv: obj.GetResourceVersion(), obj: m}
	v.mu.Unlock()
	return m, nil
}

// ownedObjects lists from the cache the objects of kind k the custom
// resource owns (none when a custom kind is not served).
func (e *entryController) ownedObjects(ctx context.Context, cr *unstructured.Unstructured, k childKind) ([]client.Object, error) {
	var list client.ObjectList
	if k.custom {
		if _, err := e.mapper.RESTMapping(k.gvk.GroupKind(), k.gvk.Version); err != nil {
			return nil, nil
		}
		ul := &unstructured.UnstructuredList{}
		ul.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
		list = ul
	} else {
		l, err := e.scheme.New(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
		if err != nil {
			return nil, err
		}
		list = l.(client.ObjectList)
	}
	// By the owner index when the caches keep one, else by the owner label
	// (the HTTP API's reads). The objects are only read: no deep copy out
	// of the cache.
	var owner client.ListOption = client.MatchingFields{ownerIndex: render.LabelValue(cr.GetName())}
	if !indexesChildren(e.entry) {
		owner = client.MatchingLabels{render.LabelOwner: render.LabelValue(cr.GetName())}
	}
	if err := e.client.List(ctx, list, owner, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("reading %s children back: %w", k.gvk.Kind, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]client.Object, 0, len(items))
	for _, it := range items {
		if obj, ok := it.(client.Object); ok && render.IsOwnedBy(obj, cr) {
			out = append(out, obj)
		}
	}
	return out, nil
}

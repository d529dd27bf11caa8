package operator

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/operator/render"
)

// What the operator's caches hold. Memory at rest grows with every custom
// resource and child the caches hold, so they hold only what the runtime
// reads: objects are trimmed as they enter (trimObject), and the entries
// that only count their custom resources watch metadata alone.

// CacheOptions restricts the manager's caches: child kinds to objects
// labelled orkestra.orkspace.io/managed=true (a cluster's Secrets and Pods
// are not all held in memory) unless an entry observes the kind (cross
// reads, watches: then every object of it), every kind to the namespaces the katalog
// limits it to (engine.Plan.WatchNamespaces: allowedNamespaces, namespace:),
// and everything to namespace when it is set. Every object is trimmed as it
// enters (trimObject).
func CacheOptions(plan *engine.Plan, namespace string) cache.Options {
	sel := labels.SelectorFromSet(labels.Set{render.LabelManaged: "true"})
	byObject := map[client.Object]cache.ByObject{}
	scheme := Scheme()
	inNamespaces := func(gvk schema.GroupVersionKind) map[string]cache.Config {
		nss := plan.WatchNamespaces(gvk)
		if nss == nil || namespace != "" {
			return nil
		}
		out := make(map[string]cache.Config, len(nss))
		for _, ns := range nss {
			out[ns] = cache.Config{}
		}
		return out
	}
	seen := map[schema.GroupVersionKind]bool{}
	for _, e := range plan.Entries {
		if e.Namespaced && !seen[e.GVK] {
			seen[e.GVK] = true
			if nss := inNamespaces(e.GVK); nss != nil {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(e.GVK)
				byObject[u] = cache.ByObject{Namespaces: nss}
			}
		}
		for _, k := range childKinds(e) {
			// Only built-in kinds: the manager asks the API server about
			// every kind listed here when it starts, and a custom kind may
			// not be served yet.
			if seen[k.gvk] || k.custom || !scheme.Recognizes(k.gvk) {
				continue
			}
			seen[k.gvk] = true
			obj, err := newObject(scheme, k.gvk)
			if err != nil {
				continue
			}
			bo := cache.ByObject{Label: sel, Namespaces: inNamespaces(k.gvk)}
			if plan.Observes(k.gvk) {
				// Watched or read by a cross read: not only Orkestra's own.
				bo.Label = nil
			}
			byObject[obj] = bo
		}
		for _, o := range e.Observations {
			// Built-in kinds here; custom kinds observed are entries' own
			// (above) or cached everywhere (a kind not served yet must
			// not keep the manager from starting).
			if seen[o.GVK] || !scheme.Recognizes(o.GVK) {
				continue
			}
			seen[o.GVK] = true
			if nss := inNamespaces(o.GVK); nss != nil {
				obj, err := newObject(scheme, o.GVK)
				if err != nil {
					continue
				}
				byObject[obj] = cache.ByObject{Namespaces: nss}
			}
		}
		if e.EnrichesPods() && !seen[engine.PodGVK] {
			// Read for their summaries only: held trimmed to them.
			seen[engine.PodGVK] = true
			byObject[&corev1.Pod{}] = cache.ByObject{Namespaces: inNamespaces(engine.PodGVK), Transform: trimPod}
		}
	}
	// Every kind, listed above or not, defaults to this transform.
	opts := cache.Options{ByObject: byObject, DefaultTransform: trimObject(plan)}
	if namespace != "" {
		opts.DefaultNamespaces = map[string]cache.Config{namespace: {}}
	}
	return opts
}

// wholeObjects undoes the trimming of CacheOptions: the caches hold objects
// as the API server sends them (ManagerOptions.WholeObjects).
func wholeObjects(opts cache.Options) cache.Options {
	opts.DefaultTransform = nil
	for obj, bo := range opts.ByObject {
		bo.Transform = nil
		opts.ByObject[obj] = bo
	}
	return opts
}

// trimObject drops from every object entering the caches what the runtime
// never reads: metadata.managedFields (every writer's record of the fields
// it set, often larger than the object's spec) and the annotation
// kubectl.kubernetes.io/last-applied-configuration (a second copy of what
// kubectl applied) — each kept when an expression of the katalog may read it
// (engine.Entry.ReadsManagedFields, ReadsLastApplied). Writes never depend on
// them: children are corrected with patches of the fields that drifted, and
// custom resources with patches of their status, finalizers and annotations,
// so what the caches drop is never written back. Nil when nothing is
// dropped.
func trimObject(plan *engine.Plan) toolscache.TransformFunc {
	keepManaged, keepApplied := false, false
	for _, e := range plan.Entries {
		if e.Enabled {
			keepManaged = keepManaged || e.ReadsManagedFields
			keepApplied = keepApplied || e.ReadsLastApplied
		}
	}
	if keepManaged && keepApplied {
		return nil
	}
	return func(in any) (any, error) {
		obj, err := meta.Accessor(in)
		if err != nil {
			return in, nil // not an object (a deletion tombstone): as it is
		}
		// nil, never an empty list: an update carrying an empty list would
		// reset the object's managedFields, a nil one keeps them.
		if !keepManaged && obj.GetManagedFields() != nil {
			obj.SetManagedFields(nil)
		}
		if !keepApplied {
			if ann := obj.GetAnnotations(); ann != nil {
				if _, ok := ann[engine.AnnotationLastApplied]; ok {
					delete(ann, engine.AnnotationLastApplied)
					if len(ann) == 0 {
						ann = nil
					}
					obj.SetAnnotations(ann)
				}
			}
		}
		return in, nil
	}
}

// wholeKinds are the kinds some controller of the plan reads whole: the
// custom resources of entries that reconcile, their children's kinds and
// the kinds they observe. Every other entry only counts its custom
// resources, from their metadata.
func wholeKinds(plan *engine.Plan) map[schema.GroupVersionKind]bool {
	out := map[schema.GroupVersionKind]bool{}
	for _, e := range plan.Entries {
		if !e.Enabled || !e.Reconciles {
			continue
		}
		out[e.GVK] = true
		for _, k := range childKinds(e) {
			out[k.gvk] = true
		}
		for _, o := range e.Observations {
			out[o.GVK] = true
		}
	}
	return out
}

// metadataObject is an empty object of gvk for an informer of metadata
// only (the API server sends PartialObjectMetadata).
func metadataObject(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	return m
}

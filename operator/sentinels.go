package operator

import (
	"reflect"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Sentinels of a change (katalog/sentinels.go), computed when the informer
// delivers it — the only moment both versions are at hand — as upstream
// computes them in its UpdateFunc (pkg/runtime/sentinel/sentinel.go). A
// create compares the object with an empty one, a delete the last version
// with an empty one; a resync delivers an object unchanged, so every
// sentinel is false. Only the declared ones are computed.

// emptyMeta is the side of a create or delete that has no object.
var emptyMeta = &metav1.ObjectMeta{}

// computeSentinels returns names' values for the change from old to obj
// (nil: no object); nil when names is empty.
func computeSentinels(names []string, old, obj metav1.Object) map[string]bool {
	if len(names) == 0 {
		return nil
	}
	if old == nil {
		old = emptyMeta
	}
	if obj == nil {
		obj = emptyMeta
	}
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n] = sentinel(n, old, obj)
	}
	return out
}

func sentinel(name string, a, b metav1.Object) bool {
	switch name {
	case "generationChanged":
		return a.GetGeneration() != b.GetGeneration()
	case "labelsChanged":
		return !sameMap(a.GetLabels(), b.GetLabels())
	case "annotationsChanged":
		return !sameMap(a.GetAnnotations(), b.GetAnnotations())
	case "deletionStarted":
		return a.GetDeletionTimestamp() == nil && b.GetDeletionTimestamp() != nil
	case "finalizersChanged":
		return !reflect.DeepEqual(a.GetFinalizers(), b.GetFinalizers()) && len(a.GetFinalizers())+len(b.GetFinalizers()) > 0
	case "nameChanged":
		return a.GetName() != b.GetName()
	case "namespaceChanged":
		return a.GetNamespace() != b.GetNamespace()
	case "generateNameChanged":
		return a.GetGenerateName() != b.GetGenerateName()
	case "uidChanged":
		return a.GetUID() != b.GetUID()
	case "resourceVersionChanged":
		return a.GetResourceVersion() != b.GetResourceVersion()
	case "creationTimestampChanged":
		x, y := a.GetCreationTimestamp(), b.GetCreationTimestamp()
		return !x.Equal(&y)
	case "deletionGracePeriodSecondsChanged":
		x, y := a.GetDeletionGracePeriodSeconds(), b.GetDeletionGracePeriodSeconds()
		return (x == nil) != (y == nil) || x != nil && *x != *y
	case "ownerReferenceChanged":
		return !reflect.DeepEqual(a.GetOwnerReferences(), b.GetOwnerReferences()) && len(a.GetOwnerReferences())+len(b.GetOwnerReferences()) > 0
	case "managedFieldsChanged":
		return !reflect.DeepEqual(a.GetManagedFields(), b.GetManagedFields()) && len(a.GetManagedFields())+len(b.GetManagedFields()) > 0
	}
	return false
}

// sameMap compares label or annotation maps, nil and empty alike.
func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// sentinelLedger holds, per custom resource, the sentinels of the changes
// admitted since a reconcile last took them: the work queue coalesces the
// changes of one object into one reconcile, which then answers all of
// them, so a sentinel is true when it was true for one of them.
type sentinelLedger struct {
	mu sync.Mutex
	m  map[types.NamespacedName]map[string]bool
}

// add merges vals into key's.
func (l *sentinelLedger) add(key types.NamespacedName, vals map[string]bool) {
	if len(vals) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[types.NamespacedName]map[string]bool{}
	}
	cur := l.m[key]
	if cur == nil {
		cur = make(map[string]bool, len(vals))
		l.m[key] = cur
	}
	for n, v := range vals {
		cur[n] = cur[n] || v
	}
}

// take returns key's values and forgets them (nil: no change recorded —
// a requeue, or a reconcile brought by a child, a watch or a cross read).
func (l *sentinelLedger) take(key types.NamespacedName) map[string]bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := l.m[key]
	delete(l.m, key)
	return v
}

// admission is the predicate of the custom resources' own events: the
// entry's namespaces, preReconcile's enqueue gate over the change's
// sentinels, then queue.behaviour; an admitted change's sentinels are kept
// for its reconcile.
func (e *entryController) admission() predicate.Predicate {
	admit := func(old, obj client.Object) bool {
		if !e.entry.Namespaces.Reconciles(obj.GetNamespace()) {
			return false
		}
		vals := computeSentinels(e.entry.Sentinels, old, obj)
		if !e.enqueues(obj, vals) {
			return false
		}
		if u, ok := obj.(*unstructured.Unstructured); ok && e.dropped(u) {
			return false
		}
		e.sentinels.add(client.ObjectKeyFromObject(obj), vals)
		return true
	}
	return predicate.Funcs{
		CreateFunc:  func(ev event.CreateEvent) bool { return admit(nil, ev.Object) },
		UpdateFunc:  func(ev event.UpdateEvent) bool { return admit(ev.ObjectOld, ev.ObjectNew) },
		DeleteFunc:  func(ev event.DeleteEvent) bool { return e.entry.Namespaces.Reconciles(ev.Object.GetNamespace()) },
		GenericFunc: func(ev event.GenericEvent) bool { return admit(ev.Object, ev.Object) },
	}
}

// allTrue is every declared sentinel true: a gate that holds with them but
// not with a change's values held the reconcile back only for what did not
// change (gates.go).
func allTrue(names []string) map[string]bool {
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n] = true
	}
	return out
}

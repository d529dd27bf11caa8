package operator

import (
	"context"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// Observed objects: the kinds an entry observes besides its custom
// resources and children, through cross reads and watches (one machinery
// for both spellings, katalog.Observation). Their objects come from the
// manager's informers (CacheOptions holds them); a change to one
// reconciles:
//
//   - for a cross read, exactly the custom resources whose last reconcile
//     read it — by name, or by a label selector it matches — found in
//     readIndex, not by a resync of all;
//   - for a watch, the custom resource upstream's mapping names
//     (pkg/runtime/kordinator/watch_informer.go): the one a label of the
//     object names (keyFrom.label), a fixed one (keyFrom.name), its
//     controller owner of the entry's kind, else every custom resource of
//     the entry.

// readIndex maps observed objects to the custom resources that read them.
type readIndex struct {
	mu sync.RWMutex
	// reads holds each reader's reads of its last reconcile.
	reads map[types.NamespacedName][]read
	// byName: object → readers; bySelector: (kind, namespace) → readers
	// with a selector ("" namespace: every namespace).
	byName     map[objectRef]map[types.NamespacedName]bool
	bySelector map[scopeRef]map[types.NamespacedName][]labels.Selector
}

// read is one object (Name) or set of objects (Selector) a reconcile read.
type read struct {
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
	Selector  labels.Selector
}

type objectRef struct {
	gvk             schema.GroupVersionKind
	namespace, name string
}

type scopeRef struct {
	gvk       schema.GroupVersionKind
	namespace string
}

func newReadIndex() *readIndex {
	return &readIndex{
		reads:      map[types.NamespacedName][]read{},
		byName:     map[objectRef]map[types.NamespacedName]bool{},
		bySelector: map[scopeRef]map[types.NamespacedName][]labels.Selector{},
	}
}

// set replaces reader's reads with rs (none: forget the reader).
func (x *readIndex) set(reader types.NamespacedName, rs []read) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, r := range x.reads[reader] {
		if r.Selector == nil {
			ref := objectRef{r.GVK, r.Namespace, r.Name}
			delete(x.byName[ref], reader)
			if len(x.byName[ref]) == 0 {
				delete(x.byName, ref)
			}
			continue
		}
		ref := scopeRef{r.GVK, r.Namespace}
		delete(x.bySelector[ref], reader)
		if len(x.bySelector[ref]) == 0 {
			delete(x.bySelector, ref)
		}
	}
	if len(rs) == 0 {
		delete(x.reads, reader)
		return
	}
	x.reads[reader] = rs
	for _, r := range rs {
		if r.Selector == nil {
			ref := objectRef{r.GVK, r.Namespace, r.Name}
			if x.byName[ref] == nil {
				x.byName[ref] = map[types.NamespacedName]bool{}
			}
			x.byName[ref][reader] = true
			continue
		}
		ref := scopeRef{r.GVK, r.Namespace}
		if x.bySelector[ref] == nil {
			x.bySelector[ref] = map[types.NamespacedName][]labels.Selector{}
		}
		x.bySelector[ref][reader] = append(x.bySelector[ref][reader], r.Selector)
	}
}

// readers returns the custom resources whose last reconcile read obj (of
// kind gvk), by name or through a selector its labels match.
func (x *readIndex) readers(gvk schema.GroupVersionKind, obj client.Object) []types.NamespacedName {
	x.mu.RLock()
	defer x.mu.RUnlock()
	var out []types.NamespacedName
	for r := range x.byName[objectRef{gvk, obj.GetNamespace(), obj.GetName()}] {
		out = append(out, r)
	}
	set := labels.Set(obj.GetLabels())
	for _, ns := range []string{obj.GetNamespace(), ""} {
		for r, sels := range x.bySelector[scopeRef{gvk, ns}] {
			if slices.ContainsFunc(sels, func(s labels.Selector) bool { return s.Matches(set) }) && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
		if obj.GetNamespace() == "" {
			break
		}
	}
	return out
}

// observationHandler reconciles the custom resources an event of an
// observed kind concerns. One handler serves every observation of the
// entry of that kind; a watch's or an event's enqueueGate is evaluated on
// the change (observe_gate.go) before it maps to custom resources.
func (e *entryController) observationHandler(gvk schema.GroupVersionKind, obs []*engine.Observation) handler.EventHandler {
	fire := func(ctx context.Context, ch observedChange, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		seen := map[types.NamespacedName]bool{}
		add := func(ks []types.NamespacedName) {
			for _, k := range ks {
				if !seen[k] {
					seen[k] = true
					q.Add(reconcile.Request{NamespacedName: k})
				}
			}
		}
		view := &changeView{gvk: gvk, obj: ch.obj}
		reads := false
		for _, o := range obs {
			if o.Source.Exposed() {
				reads = true
				continue
			}
			if len(o.Source.On) > 0 && !slices.Contains(o.Source.On, ch.ev) {
				continue
			}
			// A label change can move an object out of a selector, or to
			// another custom resource (keyFrom.label): both sides count.
			now := watchSelects(o.Source, ch.obj)
			before := ch.old != nil && watchSelects(o.Source, ch.old) && (!now || !sameMap(ch.old.GetLabels(), ch.obj.GetLabels()))
			if !now && !before || !e.watchAdmits(o, ch, view) {
				continue
			}
			if now {
				add(e.watchKeys(ctx, o.Source, ch.obj))
			}
			if before {
				add(e.watchKeys(ctx, o.Source, ch.old))
			}
		}
		if reads {
			add(e.readIndex.readers(gvk, ch.obj))
			if ch.old != nil {
				add(e.readIndex.readers(gvk, ch.old))
			}
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, ev event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			// The informer's initial list is no change (upstream drops it
			// too); every custom resource is reconciled at start anyway.
			if !ev.IsInInitialList {
				fire(ctx, observedChange{ev: katalog.EventCreate, obj: ev.Object}, q)
			}
		},
		UpdateFunc: func(ctx context.Context, ev event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			fire(ctx, observedChange{ev: katalog.EventUpdate, obj: ev.ObjectNew, old: ev.ObjectOld}, q)
		},
		DeleteFunc: func(ctx context.Context, ev event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			fire(ctx, observedChange{ev: katalog.EventDelete, obj: ev.Object}, q)
		},
	}
}

// watchSelects reports whether a watch's literal name, namespace and label
// selector select obj.
func watchSelects(o *katalog.Observation, obj client.Object) bool {
	if o.Name != nil && o.Name.Str != obj.GetName() || o.Namespace != nil && o.Namespace.Str != obj.GetNamespace() {
		return false
	}
	if o.LabelSelector != nil {
		sel, err := labels.Parse(o.LabelSelector.Str)
		if err != nil || !sel.Matches(labels.Set(obj.GetLabels())) {
			return false
		}
	}
	return true
}

// watchKeys maps a watched object to the custom resources to reconcile, in
// upstream's order: keyFrom.label (the label names a custom resource in the
// object's namespace), keyFrom.name, the object's controller owner of the
// entry's kind, else every custom resource of the entry.
func (e *entryController) watchKeys(ctx context.Context, o *katalog.Observation, obj client.Object) []types.NamespacedName {
	ns := func(n string) string {
		if !e.entry.Namespaced {
			return ""
		}
		return n
	}
	if kf := o.KeyFrom; kf != nil && kf.Label != "" {
		if v := obj.GetLabels()[kf.Label]; v != "" {
			return []types.NamespacedName{{Namespace: ns(obj.GetNamespace()), Name: v}}
		}
	}
	if kf := o.KeyFrom; kf != nil && kf.Name != "" {
		namespace := kf.Namespace
		if namespace == "" {
			namespace = obj.GetNamespace()
		}
		return []types.NamespacedName{{Namespace: ns(namespace), Name: kf.Name}}
	}
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller && ref.Kind == e.entry.GVK.Kind && ref.APIVersion == e.entry.GVK.GroupVersion().String() {
			return []types.NamespacedName{{Namespace: ns(obj.GetNamespace()), Name: ref.Name}}
		}
	}
	if o.KeyFrom != nil && o.KeyFrom.Label != "" {
		return nil // the label names the custom resource; without it, none
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(e.entry.GVK.GroupVersion().WithKind(e.entry.GVK.Kind + "List"))
	if err := e.client.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		e.log.Error(err, "listing custom resources for a watch", "watch", o.Field)
		return nil
	}
	out := make([]types.NamespacedName, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, client.ObjectKeyFromObject(&list.Items[i]))
	}
	return out
}

// observedKinds groups an entry's observations by the kind they observe.
func observedKinds(e *engine.Entry) (order []schema.GroupVersionKind, by map[schema.GroupVersionKind][]*engine.Observation) {
	by = map[schema.GroupVersionKind][]*engine.Observation{}
	for _, o := range e.Observations {
		if o.Source.Denied {
			continue // read as nothing: no change of it matters
		}
		if _, ok := by[o.GVK]; !ok {
			order = append(order, o.GVK)
		}
		by[o.GVK] = append(by[o.GVK], o)
	}
	return order, by
}

// watchObserved adds a watch of every kind the entry observes to its
// controller. A kind the API server does not serve (yet) is not watched:
// its reads fail, naming it, until it is.
func (e *entryController) watchObserved(mgr manager.Manager, b *builder.Builder) (*builder.Builder, error) {
	order, by := observedKinds(e.entry)
	for _, gvk := range order {
		if _, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			e.log.Info("not watching an observed kind: the API server does not serve it", "kind", gvk.String(), "error", err.Error())
			continue
		}
		obj, err := newObject(mgr.GetScheme(), gvk)
		if err != nil {
			return nil, err
		}
		b = b.Watches(obj, e.observationHandler(gvk, by[gvk]))
	}
	return b, nil
}

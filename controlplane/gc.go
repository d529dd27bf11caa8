package controlplane

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// GarbageCollector deletes the dependents of deleted owners, as the
// garbage collector of kube-controller-manager does on a real cluster (the
// local control plane runs none): an object all of whose owner references
// name objects that no longer exist is deleted (background propagation).
// Owners of kinds it does not watch count as existing. It also empties and
// removes deleted namespaces (finalizeNamespaces), the other half of
// cleaning up that the local control plane would otherwise lack.
type GarbageCollector struct {
	cfg *rest.Config
	// Rediscover is how often new kinds (CRDs installed since) are looked
	// for (default 1s).
	Rediscover time.Duration

	mu        sync.Mutex
	informers map[schema.GroupVersionResource]cache.SharedIndexInformer
	kinds     map[schema.GroupKind]kindInfo
}

type kindInfo struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}

// NewGarbageCollector returns a collector for the cluster of cfg.
func NewGarbageCollector(cfg *rest.Config) *GarbageCollector {
	cfg = rest.CopyConfig(cfg)
	cfg.WarningHandler = rest.NoWarnings{} // listing every kind warns of deprecated ones
	return &GarbageCollector{cfg: cfg, Rediscover: time.Second,
		informers: map[schema.GroupVersionResource]cache.SharedIndexInformer{},
		kinds:     map[schema.GroupKind]kindInfo{}}
}

// Run collects until ctx is done.
func (g *GarbageCollector) Run(ctx context.Context) error {
	disc, err := discovery.NewDiscoveryClientForConfig(g.cfg)
	if err != nil {
		return err
	}
	mc, err := metadata.NewForConfig(g.cfg)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(g.cfg)
	if err != nil {
		return err
	}
	factory := metadatainformer.NewSharedInformerFactory(listThenWatch{mc}, 0)
	sweep := make(chan struct{}, 1)
	poke := func() {
		select {
		case sweep <- struct{}{}:
		default:
		}
	}
	tick := time.NewTicker(g.Rediscover)
	defer tick.Stop()
	for {
		g.discover(ctx, disc, factory, poke)
		select {
		case <-ctx.Done():
			factory.Shutdown()
			return nil
		case <-sweep:
			g.sweep(ctx, mc)
			g.mu.Lock()
			g.finalizeNamespaces(ctx, mc, cs.CoreV1().Namespaces())
			g.mu.Unlock()
		case <-tick.C:
		}
	}
}

// discover starts an informer for every kind that can be listed, watched
// and deleted and has none yet.
func (g *GarbageCollector) discover(ctx context.Context, disc discovery.DiscoveryInterface, factory metadatainformer.SharedInformerFactory, poke func()) {
	lists, _ := disc.ServerPreferredResources() // partial results are fine
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if !has(r.Verbs, "list") || !has(r.Verbs, "watch") || !has(r.Verbs, "delete") || len(r.Name) == 0 || containsSlash(r.Name) {
				continue
			}
			gvr := gv.WithResource(r.Name)
			g.mu.Lock()
			_, started := g.informers[gvr]
			if !started {
				inf := factory.ForResource(gvr).Informer()
				_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
					AddFunc:    func(any) { poke() },
					UpdateFunc: func(any, any) { poke() },
					DeleteFunc: func(any) { poke() },
				})
				g.informers[gvr] = inf
				g.kinds[gv.WithKind(r.Kind).GroupKind()] = kindInfo{gvr: gvr, namespaced: r.Namespaced}
			}
			g.mu.Unlock()
		}
	}
	factory.Start(ctx.Done())
}

// listThenWatch is the collector's metadata client: its informers list
// and then watch instead of streaming the initial list (client-go's
// WatchList, on by default). On the local control plane a streamed list of
// a kind whose CRD was just installed waits seconds for its closing
// bookmark, and until then the kind's owners count as unknown: the
// children of a custom resource deleted in that time stayed 5 to 15 s.
type listThenWatch struct{ metadata.Interface }

// IsWatchListSemanticsUnSupported is what client-go's informers ask.
func (listThenWatch) IsWatchListSemanticsUnSupported() bool { return true }

// sweep deletes every object whose owners are all gone.
func (g *GarbageCollector) sweep(ctx context.Context, mc metadata.Interface) {
	g.mu.Lock()
	defer g.mu.Unlock()
	uids := map[string]bool{}
	synced := map[schema.GroupKind]bool{}
	for gk, ki := range g.kinds {
		if inf := g.informers[ki.gvr]; inf.HasSynced() {
			synced[gk] = true
			for _, o := range inf.GetStore().List() {
				uids[string(o.(*metav1.PartialObjectMetadata).UID)] = true
			}
		}
	}
	for gvr, inf := range g.informers {
		if !inf.HasSynced() {
			continue
		}
		for _, x := range inf.GetStore().List() {
			o := x.(*metav1.PartialObjectMetadata)
			if orphaned(o, uids, synced) && o.DeletionTimestamp == nil && g.ownersGone(ctx, mc, o) {
				bg := metav1.DeletePropagationBackground
				uid := o.UID
				err := mc.Resource(gvr).Namespace(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{PropagationPolicy: &bg, Preconditions: &metav1.Preconditions{UID: &uid}})
				if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
					continue
				}
			}
		}
	}
}

// ownersGone confirms with the API server that none of o's owners exists
// (an informer may not have seen a new owner yet).
func (g *GarbageCollector) ownersGone(ctx context.Context, mc metadata.Interface, o *metav1.PartialObjectMetadata) bool {
	for _, r := range o.OwnerReferences {
		gv, _ := schema.ParseGroupVersion(r.APIVersion)
		ki := g.kinds[gv.WithKind(r.Kind).GroupKind()]
		ns := ""
		if ki.namespaced {
			ns = o.Namespace
		}
		owner, err := mc.Resource(ki.gvr).Namespace(ns).Get(ctx, r.Name, metav1.GetOptions{})
		if err == nil && owner.UID == r.UID || err != nil && !apierrors.IsNotFound(err) {
			return false
		}
	}
	return true
}

// orphaned: o has owners and each is of a watched, synced kind and gone.
func orphaned(o *metav1.PartialObjectMetadata, uids map[string]bool, synced map[schema.GroupKind]bool) bool {
	refs := o.OwnerReferences
	if len(refs) == 0 {
		return false
	}
	for _, r := range refs {
		gv, err := schema.ParseGroupVersion(r.APIVersion)
		if err != nil || !synced[gv.WithKind(r.Kind).GroupKind()] || uids[string(r.UID)] {
			return false
		}
	}
	return true
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func containsSlash(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return true
		}
	}
	return false
}

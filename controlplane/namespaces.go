package controlplane

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
)

var namespacesGVR = corev1.SchemeGroupVersion.WithResource("namespaces")

// finalizeNamespaces does for deleted namespaces what the namespace
// controller of kube-controller-manager does on a real cluster (without
// it a deleted namespace stays Terminating for ever): every object in the
// namespace is deleted, and once none is left the namespace's
// "kubernetes" finalizer is removed, so the API server removes it. Objects
// held by finalizers of their own hold the namespace until released.
func (g *GarbageCollector) finalizeNamespaces(ctx context.Context, mc metadata.Interface, nss corev1client.NamespaceInterface) {
	inf := g.informers[namespacesGVR]
	if inf == nil || !inf.HasSynced() {
		return
	}
	for _, x := range inf.GetStore().List() {
		ns := x.(*metav1.PartialObjectMetadata)
		if ns.DeletionTimestamp == nil {
			continue
		}
		if g.emptyNamespace(ctx, mc, ns.Name) {
			finalize(ctx, nss, ns.Name)
		}
	}
}

// emptyNamespace deletes what is left in namespace ns and reports whether
// nothing was (every namespaced kind watched and synced).
func (g *GarbageCollector) emptyNamespace(ctx context.Context, mc metadata.Interface, ns string) bool {
	empty := true
	for _, ki := range g.kinds {
		inf := g.informers[ki.gvr]
		if !ki.namespaced {
			continue
		}
		if !inf.HasSynced() {
			empty = false
			continue
		}
		objs, _ := inf.GetIndexer().ByIndex(cache.NamespaceIndex, ns)
		for _, x := range objs {
			empty = false
			o := x.(*metav1.PartialObjectMetadata)
			if o.DeletionTimestamp != nil {
				continue
			}
			bg := metav1.DeletePropagationBackground
			uid := o.UID
			_ = mc.Resource(ki.gvr).Namespace(ns).Delete(ctx, o.Name, metav1.DeleteOptions{PropagationPolicy: &bg, Preconditions: &metav1.Preconditions{UID: &uid}})
		}
	}
	return empty
}

// finalize removes the namespace controller's finalizer from namespace ns;
// finalizers others put in spec.finalizers stay.
func finalize(ctx context.Context, nss corev1client.NamespaceInterface, ns string) {
	cur, err := nss.Get(ctx, ns, metav1.GetOptions{})
	if err != nil || cur.DeletionTimestamp == nil {
		return
	}
	kept := cur.Spec.Finalizers[:0:0]
	for _, f := range cur.Spec.Finalizers {
		if f != corev1.FinalizerKubernetes {
			kept = append(kept, f)
		}
	}
	if len(kept) == len(cur.Spec.Finalizers) {
		return
	}
	cur.Spec.Finalizers = kept
	// A failure is retried at the next sweep: the namespace's or its
	// objects' next change brings one.
	_, _ = nss.Finalize(ctx, cur, metav1.UpdateOptions{})
}

package operator

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/operator/render"
)

// enrich: [pods] (upstream pkg/reconciler/children.go enrichGroupWithPods):
// each workload child is read with the summaries of the pods it runs —
// those its selector's matchLabels select in its namespace, controlled by
// the kind that runs them (engine.PodOwnerKind) — from the operator's cache
// of Pods, never by an API call per reconcile. A change to such a pod
// reconciles the custom resource whose workload runs it.

// withPods returns the workload children objs (of kind) with their pod
// summaries under engine.PodsKey: copies, the cache's objects stay as they
// are. Children of other kinds come back as they are.
func (e *entryController) withPods(ctx context.Context, kind string, objs []map[string]any) ([]map[string]any, error) {
	owner := engine.PodOwnerKind(kind)
	if owner == "" || !e.entry.EnrichesPods() {
		return objs, nil
	}
	out := make([]map[string]any, len(objs))
	for i, obj := range objs {
		pods, err := e.podsOf(ctx, obj, owner)
		if err != nil {
			return nil, err
		}
		c := make(map[string]any, len(obj)+1)
		for k, v := range obj {
			c[k] = v
		}
		c[engine.PodsKey] = engine.PodSummaries(pods)
		out[i] = c
	}
	return out, nil
}

// podsOf lists the pods a workload runs: selected by its
// spec.selector.matchLabels (none without them, as upstream's) and
// controlled by a controller of kind owner.
func (e *entryController) podsOf(ctx context.Context, obj map[string]any, owner string) ([]*corev1.Pod, error) {
	u := unstructured.Unstructured{Object: obj}
	match, _, _ := unstructured.NestedStringMap(obj, "spec", "selector", "matchLabels")
	if len(match) == 0 {
		return nil, nil
	}
	var list corev1.PodList
	if err := e.client.List(ctx, &list, client.InNamespace(u.GetNamespace()), client.MatchingLabels(match), client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("reading the pods of %s %s/%s (enrich: [pods]): %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	var out []*corev1.Pod
	for i := range list.Items {
		p := &list.Items[i]
		for _, ref := range p.OwnerReferences {
			if ref.Kind == owner {
				out = append(out, p)
				break
			}
		}
	}
	return out, nil
}

// watchPods adds a watch of Pods when the entry reads its workloads' pods:
// a pod's change reconciles the custom resource its orkestra-owner label
// names, in the pod's namespace (every workload child's pod template
// carries the label).
func (e *entryController) watchPods(b *builder.Builder) *builder.Builder {
	if !e.entry.EnrichesPods() {
		return b
	}
	return b.Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		v, ok := obj.GetLabels()[render.LabelOwner]
		if !ok || !labels.Set(obj.GetLabels()).Has(render.LabelChild) {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: e.crNamed(ctx, obj.GetNamespace(), v)}}}
	}))
}

// crNamed is the name of the custom resource whose orkestra-owner label
// value is v: v itself, unless v is a long name's shortened form
// (render.LabelValue), which the custom resources in namespace are
// searched for.
func (e *entryController) crNamed(ctx context.Context, namespace, v string) string {
	if len(v) < 63 {
		return v
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(e.entry.GVK.GroupVersion().WithKind(e.entry.GVK.Kind + "List"))
	if err := e.client.List(ctx, list, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err == nil {
		for _, cr := range list.Items {
			if render.LabelValue(cr.GetName()) == v {
				return cr.GetName()
			}
		}
	}
	return v
}

// trimPod keeps of a Pod entering the cache only what its summary and the
// watch read (engine.PodSummaries): the pod's identity, labels and owners,
// its node, phase, IP, conditions and container states — not its spec's
// containers, volumes or annotations, which are most of its size.
func trimPod(in any) (any, error) {
	p, ok := in.(*corev1.Pod)
	if !ok {
		return in, nil
	}
	out := &corev1.Pod{TypeMeta: p.TypeMeta}
	out.Name, out.Namespace, out.UID, out.ResourceVersion = p.Name, p.Namespace, p.UID, p.ResourceVersion
	out.Labels, out.OwnerReferences, out.DeletionTimestamp = p.Labels, p.OwnerReferences, p.DeletionTimestamp
	out.Spec.NodeName = p.Spec.NodeName
	out.Status.Phase, out.Status.PodIP, out.Status.Conditions = p.Status.Phase, p.Status.PodIP, p.Status.Conditions
	out.Status.ContainerStatuses = make([]corev1.ContainerStatus, len(p.Status.ContainerStatuses))
	for i, cs := range p.Status.ContainerStatuses {
		out.Status.ContainerStatuses[i] = corev1.ContainerStatus{Name: cs.Name, Image: cs.Image, Ready: cs.Ready, RestartCount: cs.RestartCount, State: cs.State}
	}
	return out, nil
}

// Package workloads gives workload objects the status a kubelet and
// Kubernetes' built-in controllers would give them, for clusters that have
// neither: the in-memory cluster of `orkestra simulate`, the local control
// plane of `orkestra dev --simulate-workloads` and `orkestra e2e`.
//
// Deployments, StatefulSets, ReplicaSets and DaemonSets become available at
// their replica count (a DaemonSet as on a one-node cluster), Jobs complete
// (or fail, when marked to: see Fails), Pods run, PersistentVolumeClaims
// bind. Status is written through the status subresource, as the real
// controllers write it, so whatever reads it back — status fields, `when:`
// conditions on children, dependsOn's healthy, readiness functions — sees
// what it would see on a real cluster.
//
// Two entry points share one implementation: Step and Advance write the
// status now (simulate calls Step between reconcile cycles); Setup adds
// controllers to a manager that do the same continuously, after a short
// delay, against a live API server.
package workloads

import (
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kind is one simulated kind: how to make empty objects and lists of it,
// and how to compute its simulated status.
type kind struct {
	name    string
	newObj  func() client.Object
	newList func() client.ObjectList
	items   func(client.ObjectList) []client.Object
	// advance sets the simulated status on obj at now and reports whether it
	// changed anything.
	advance func(obj client.Object, s simulation) bool
}

// kinds are the simulated kinds, the one list every entry point uses.
var kinds = []kind{
	{
		name:    "deployments",
		newObj:  func() client.Object { return &appsv1.Deployment{} },
		newList: func() client.ObjectList { return &appsv1.DeploymentList{} },
		items: func(l client.ObjectList) []client.Object {
			return pointers(l.(*appsv1.DeploymentList).Items)
		},
		advance: func(o client.Object, s simulation) bool { return deployment(o.(*appsv1.Deployment), s) },
	},
	{
		name:    "statefulsets",
		newObj:  func() client.Object { return &appsv1.StatefulSet{} },
		newList: func() client.ObjectList { return &appsv1.StatefulSetList{} },
		items: func(l client.ObjectList) []client.Object {
			return pointers(l.(*appsv1.StatefulSetList).Items)
		},
		advance: func(o client.Object, s simulation) bool { return statefulSet(o.(*appsv1.StatefulSet)) },
	},
	{
		name:    "replicasets",
		newObj:  func() client.Object { return &appsv1.ReplicaSet{} },
		newList: func() client.ObjectList { return &appsv1.ReplicaSetList{} },
		items: func(l client.ObjectList) []client.Object {
			return pointers(l.(*appsv1.ReplicaSetList).Items)
		},
		advance: func(o client.Object, s simulation) bool { return replicaSet(o.(*appsv1.ReplicaSet)) },
	},
	{
		name:    "daemonsets",
		newObj:  func() client.Object { return &appsv1.DaemonSet{} },
		newList: func() client.ObjectList { return &appsv1.DaemonSetList{} },
		items: func(l client.ObjectList) []client.Object {
			return pointers(l.(*appsv1.DaemonSetList).Items)
		},
		advance: func(o client.Object, s simulation) bool { return daemonSet(o.(*appsv1.DaemonSet)) },
	},
	{
		name:    "jobs",
		newObj:  func() client.Object { return &batchv1.Job{} },
		newList: func() client.ObjectList { return &batchv1.JobList{} },
		items: func(l client.ObjectList) []client.Object {
			return pointers(l.(*batchv1.JobList).Items)
		},
		advance: func(o client.Object, s simulation) bool { return job(o.(*batchv1.Job), s) },
	},
	{
		name:    "pods",
		newObj:  func() client.Object { return &corev1.Pod{} },
		newList: func() client.ObjectList { return &corev1.PodList{} },
		items: func(l client.ObjectList) []client.Object {
			return pointers(l.(*corev1.PodList).Items)
		},
		advance: func(o client.Object, s simulation) bool { return pod(o.(*corev1.Pod), s) },
	},
	{
		name:    "persistentvolumeclaims",
		newObj:  func() client.Object { return &corev1.PersistentVolumeClaim{} },
		newList: func() client.ObjectList { return &corev1.PersistentVolumeClaimList{} },
		items: func(l client.ObjectList) []client.Object {
			return pointers(l.(*corev1.PersistentVolumeClaimList).Items)
		},
		advance: func(o client.Object, s simulation) bool { return claim(o.(*corev1.PersistentVolumeClaim)) },
	},
}

// Objects returns an empty object of every simulated kind: a fake client
// serves their status subresource when built WithStatusSubresource of them.
func Objects() []client.Object {
	out := make([]client.Object, len(kinds))
	for i, k := range kinds {
		out[i] = k.newObj()
	}
	return out
}

// kindOf returns the simulated kind of obj, false when it is not simulated.
func kindOf(obj client.Object) (kind, bool) {
	for _, k := range kinds {
		if reflect.TypeOf(k.newObj()) == reflect.TypeOf(obj) {
			return k, true
		}
	}
	return kind{}, false
}

func pointers[T any, P interface {
	*T
	client.Object
}](items []T) []client.Object {
	out := make([]client.Object, len(items))
	for i := range items {
		out[i] = P(&items[i])
	}
	return out
}

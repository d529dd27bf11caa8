package workloads

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// simulation is what a status computation may depend on besides the object.
type simulation struct {
	now metav1.Time
}

func newSimulation(now time.Time) simulation {
	// The API server stores times at second precision: comparing a freshly
	// computed time with a stored one must not see a difference.
	return simulation{now: metav1.NewTime(now.UTC().Truncate(time.Second))}
}

// replicas is spec.replicas with Kubernetes' default of 1.
func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

// deployment: every replica updated, ready and available, as the deployment
// controller reports a finished rollout.
func deployment(d *appsv1.Deployment, s simulation) bool {
	old := d.Status.DeepCopy()
	n := replicas(d.Spec.Replicas)
	d.Status.ObservedGeneration = d.Generation
	d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.ReadyReplicas, d.Status.AvailableReplicas = n, n, n, n
	d.Status.UnavailableReplicas = 0
	d.Status.TerminatingReplicas = nil
	d.Status.Conditions = setDeploymentCondition(d.Status.Conditions, s, appsv1.DeploymentAvailable, "MinimumReplicasAvailable", "Deployment has minimum availability.")
	d.Status.Conditions = setDeploymentCondition(d.Status.Conditions, s, appsv1.DeploymentProgressing, "NewReplicaSetAvailable", "ReplicaSet has successfully progressed.")
	return !equality.Semantic.DeepEqual(old, &d.Status)
}

func setDeploymentCondition(conds []appsv1.DeploymentCondition, s simulation, t appsv1.DeploymentConditionType, reason, msg string) []appsv1.DeploymentCondition {
	for i := range conds {
		if conds[i].Type != t {
			continue
		}
		if conds[i].Status == corev1.ConditionTrue && conds[i].Reason == reason {
			return conds
		}
		conds[i] = appsv1.DeploymentCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg, LastUpdateTime: s.now, LastTransitionTime: s.now}
		return conds
	}
	return append(conds, appsv1.DeploymentCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg, LastUpdateTime: s.now, LastTransitionTime: s.now})
}

// statefulSet: every replica current, updated, ready and available.
func statefulSet(st *appsv1.StatefulSet) bool {
	old := st.Status.DeepCopy()
	n := replicas(st.Spec.Replicas)
	st.Status.ObservedGeneration = st.Generation
	st.Status.Replicas, st.Status.ReadyReplicas, st.Status.CurrentReplicas, st.Status.UpdatedReplicas, st.Status.AvailableReplicas = n, n, n, n, n
	return !equality.Semantic.DeepEqual(old, &st.Status)
}

// replicaSet: every replica labelled, ready and available.
func replicaSet(rs *appsv1.ReplicaSet) bool {
	old := rs.Status.DeepCopy()
	n := replicas(rs.Spec.Replicas)
	rs.Status.ObservedGeneration = rs.Generation
	rs.Status.Replicas, rs.Status.FullyLabeledReplicas, rs.Status.ReadyReplicas, rs.Status.AvailableReplicas = n, n, n, n
	return !equality.Semantic.DeepEqual(old, &rs.Status)
}

// daemonSet: scheduled, ready and available on one node, as on a one-node
// cluster (the local control plane has no node to count).
func daemonSet(ds *appsv1.DaemonSet) bool {
	old := ds.Status.DeepCopy()
	ds.Status.ObservedGeneration = ds.Generation
	ds.Status.DesiredNumberScheduled, ds.Status.CurrentNumberScheduled, ds.Status.UpdatedNumberScheduled = 1, 1, 1
	ds.Status.NumberReady, ds.Status.NumberAvailable, ds.Status.NumberUnavailable, ds.Status.NumberMisscheduled = 1, 1, 0, 0
	return !equality.Semantic.DeepEqual(old, &ds.Status)
}

// claim: bound, with the capacity and access modes it asked for.
func claim(pvc *corev1.PersistentVolumeClaim) bool {
	old := pvc.Status.DeepCopy()
	pvc.Status.Phase = corev1.ClaimBound
	pvc.Status.AccessModes = pvc.Spec.AccessModes
	if q, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
		pvc.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: q}
	}
	return !equality.Semantic.DeepEqual(old, &pvc.Status)
}

// pod: scheduled, every container started and ready, Running — or, marked
// to fail (see Fails), Failed with its containers terminated with exit code
// 1. A pod that already reached a terminal phase is left alone, as a kubelet
// leaves it.
func pod(p *corev1.Pod, s simulation) bool {
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return false
	}
	old := p.Status.DeepCopy()
	failed, msg := Fails(p, &p.Spec)
	if p.Status.StartTime == nil {
		p.Status.StartTime = &s.now
	}
	ready := corev1.ConditionTrue
	p.Status.Phase = corev1.PodRunning
	if failed {
		ready = corev1.ConditionFalse
		p.Status.Phase, p.Status.Reason, p.Status.Message = corev1.PodFailed, "Error", msg
	}
	p.Status.Conditions = setPodCondition(p.Status.Conditions, s, corev1.PodScheduled, corev1.ConditionTrue)
	p.Status.Conditions = setPodCondition(p.Status.Conditions, s, corev1.PodInitialized, corev1.ConditionTrue)
	p.Status.Conditions = setPodCondition(p.Status.Conditions, s, corev1.ContainersReady, ready)
	p.Status.Conditions = setPodCondition(p.Status.Conditions, s, corev1.PodReady, ready)
	p.Status.ContainerStatuses = containerStatuses(p, s, failed)
	return !equality.Semantic.DeepEqual(old, &p.Status)
}

func setPodCondition(conds []corev1.PodCondition, s simulation, t corev1.PodConditionType, status corev1.ConditionStatus) []corev1.PodCondition {
	for i := range conds {
		if conds[i].Type != t {
			continue
		}
		if conds[i].Status != status {
			conds[i].Status, conds[i].LastTransitionTime = status, s.now
		}
		return conds
	}
	return append(conds, corev1.PodCondition{Type: t, Status: status, LastTransitionTime: s.now})
}

// containerStatuses reports every container of the pod running (keeping
// when each started), or terminated with exit code 1 when the pod fails.
func containerStatuses(p *corev1.Pod, s simulation, failed bool) []corev1.ContainerStatus {
	started := map[string]metav1.Time{}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running != nil {
			started[cs.Name] = cs.State.Running.StartedAt
		}
	}
	out := make([]corev1.ContainerStatus, len(p.Spec.Containers))
	for i, c := range p.Spec.Containers {
		at, ok := started[c.Name]
		if !ok {
			at = s.now
		}
		cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: c.Image}
		if failed {
			cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", StartedAt: at, FinishedAt: s.now}
		} else {
			t := true
			cs.Ready, cs.Started = true, &t
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: at}
		}
		out[i] = cs
	}
	return out
}

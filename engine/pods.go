package engine

import (
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Pod summaries (enrich: [pods]; upstream pkg/reconciler/children.go
// buildPodSummary): the operator reads each workload child with the pods it
// runs, summarized under PodsKey, and the pod functions (engine/notes)
// read them. One summary: name, ip, phase, ready (the Ready condition),
// node, restartCount (all containers), ordinal (the name's numeric suffix,
// -1 without one), exitCode (the first terminated container's, -1 without
// one) and containers: name, image, state (Running, Waiting, Terminated or
// ""), reason (waiting's or terminated's), ready, restartCount.

// PodsKey is the key of a child's pod summaries.
const PodsKey = "_pods"

// PodGVK is the kind enrich: [pods] reads.
var PodGVK = corev1.SchemeGroupVersion.WithKind("Pod")

// EnrichesPods reports an entry that reads its workload children with their
// pods (enrich: [pods]) and reads its children at all.
func (e *Entry) EnrichesPods() bool {
	return e.Source != nil && e.Source.EnrichPods && e.ReadsChildren
}

// PodOwnerKind is the kind of the pods' controller for a workload kind that
// runs pods ("" for any other kind): a Deployment's pods belong to its
// ReplicaSets, the others' to the workload itself. Pods selected by the
// workload's selector but controlled by another kind (a Job sharing its
// labels) are not its pods.
func PodOwnerKind(workload string) string {
	switch workload {
	case "Deployment", "ReplicaSet":
		return "ReplicaSet"
	case "StatefulSet", "DaemonSet", "Job":
		return workload
	}
	return ""
}

// PodSummaries summarizes pods, ordered by name.
func PodSummaries(pods []*corev1.Pod) []any {
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	out := make([]any, len(pods))
	for i, p := range pods {
		out[i] = podSummary(p)
	}
	return out
}

func podSummary(p *corev1.Pod) map[string]any {
	ready := false
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			ready = c.Status == corev1.ConditionTrue
		}
	}
	var restarts int64
	exitCode := int64(-1)
	containers := make([]any, 0, len(p.Status.ContainerStatuses))
	for _, cs := range p.Status.ContainerStatuses {
		restarts += int64(cs.RestartCount)
		state, reason := "", ""
		switch s := cs.State; {
		case s.Running != nil:
			state = "Running"
		case s.Waiting != nil:
			state, reason = "Waiting", s.Waiting.Reason
		case s.Terminated != nil:
			state, reason = "Terminated", s.Terminated.Reason
			if exitCode == -1 {
				exitCode = int64(s.Terminated.ExitCode)
			}
		}
		containers = append(containers, map[string]any{"name": cs.Name, "image": cs.Image, "state": state, "reason": reason, "ready": cs.Ready, "restartCount": int64(cs.RestartCount)})
	}
	return map[string]any{
		"name": p.Name, "ip": p.Status.PodIP, "phase": string(p.Status.Phase), "ready": ready, "node": p.Spec.NodeName,
		"restartCount": restarts, "ordinal": podOrdinal(p.Name), "exitCode": exitCode, "containers": containers,
	}
}

// podOrdinal is the number after the name's last "-" (a StatefulSet pod's
// ordinal), -1 when there is none.
func podOrdinal(name string) int64 {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return -1
	}
	n, err := strconv.ParseInt(name[i+1:], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

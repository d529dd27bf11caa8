package operator

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// enrich: [pods] through a real reconcile (upstream: examples/use-cases/
// enrich/01-pod-health): the Deployment child is read with the pods its
// selector selects and a ReplicaSet controls — not a Job's pod sharing its
// labels, not a pod it does not select — and a change to one of its pods
// reconciles the custom resource (the entry has no resync).
func TestEnrichPodsThroughReconcile(t *testing.T) {
	h := startOperator(t, widgetPlanWith(t, "      enrich: [pods]\n", `
onReconcile:
  deployments:
    - name: "${self.metadata.name}"
      image: nginx
      replicas: 2
  configMaps:
    - name: "${self.metadata.name}-pods"
      data:
        count: "{{ podCount .children.deployment }}"
        ready: "${string(readyPodCount(children.deployment))}"
        names: "{{ podNames .children.deployment }}"
        crashing: "{{ hasCrashingPod .children.deployment }}"
        reasons: "${podContainerReasons(children.deployment)}"
        restarts: "{{ podMaxRestarts .children.deployment }}"
`))
	ns := h.ns
	create(t, widget(ns, "w", map[string]any{}))
	converged(t, ns, "w")
	var dep appsv1.Deployment
	mustGet(t, ns, "w", &dep)
	sel := dep.Spec.Selector.MatchLabels

	pod := func(name, ownerKind string, labels map[string]string, ready bool, restarts int32, state corev1.ContainerState) {
		t.Helper()
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: ownerKind, Name: "owner", UID: types.UID("uid-" + name)}}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
		}
		create(t, p)
		setPodStatus(t, p, ready, restarts, state)
	}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	crashLoop := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	pod("w-a", "ReplicaSet", sel, true, 0, running)
	pod("w-b", "ReplicaSet", sel, false, 1, crashLoop)
	pod("w-job", "Job", sel, true, 0, running)
	pod("w-other", "ReplicaSet", map[string]string{"app": "other"}, true, 0, running)

	cmData := func(want map[string]string) {
		t.Helper()
		eventually(t, "the pod summaries in w-pods", func() error {
			var cm corev1.ConfigMap
			if err := get(ns, "w-pods", &cm); err != nil {
				return err
			}
			if fmt.Sprint(cm.Data) != fmt.Sprint(want) {
				return fmt.Errorf("data %v, want %v", cm.Data, want)
			}
			return nil
		})
	}
	cmData(map[string]string{"count": "2", "ready": "1", "names": "w-a, w-b", "crashing": "true", "reasons": "CrashLoopBackOff", "restarts": "1"})

	// The crashing pod recovers: its change alone reconciles w.
	var b corev1.Pod
	mustGet(t, ns, "w-b", &b)
	setPodStatus(t, &b, true, 1, running)
	cmData(map[string]string{"count": "2", "ready": "2", "names": "w-a, w-b", "crashing": "false", "reasons": "", "restarts": "1"})
}

// setPodStatus writes a pod's status as a kubelet would: its Ready
// condition and its one container's state and restarts.
func setPodStatus(t *testing.T, p *corev1.Pod, ready bool, restarts int32, state corev1.ContainerState) {
	t.Helper()
	cond := corev1.ConditionFalse
	if ready {
		cond = corev1.ConditionTrue
	}
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1",
		Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: cond}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: "nginx", Ready: ready, RestartCount: restarts, State: state}}}
	if err := k8s.Status().Update(context.Background(), p); err != nil {
		t.Fatalf("pod %s status: %v", p.Name, err)
	}
}

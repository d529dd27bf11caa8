package notes

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/orkestra-cel/engine"
)

// testPod is a pod of a workload: ready or not, its containers' restart
// counts and, for the first, a waiting or terminated reason.
func testPod(name string, ready bool, phase corev1.PodPhase, state corev1.ContainerState, restarts ...int32) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{NodeName: "node-1"}}
	p.Status.Phase, p.Status.PodIP = phase, "10.0.0."+name[len(name)-1:]
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: status}}
	for i, r := range restarts {
		cs := corev1.ContainerStatus{Name: "c" + string(rune('0'+i)), Image: "nginx", Ready: ready, RestartCount: r, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
		if i == 0 {
			cs.State = state
		}
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, cs)
	}
	return p
}

func running() corev1.ContainerState {
	return corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
}
func waiting(reason string) corev1.ContainerState {
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}
}
func terminated(reason string, code int32) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: code}}
}

// withPods is a workload child as the operator reads it with enrich: [pods].
func withPods(pods ...*corev1.Pod) map[string]any {
	return map[string]any{"metadata": map[string]any{"name": "web"}, engine.PodsKey: engine.PodSummaries(pods)}
}

// The pod functions over summaries built from real Pods (upstream
// pkg/note/kube_pods.go and its kube_pods_test.go): joins in name order,
// counts, the crash rule (a failure reason, or more than two restarts of a
// pod), and zero values without summaries.
func TestPodFunctions(t *testing.T) {
	healthy := withPods(testPod("web-1", true, corev1.PodRunning, running(), 0, 1), testPod("web-0", true, corev1.PodRunning, running(), 0))
	pending := withPods(testPod("web-0", true, corev1.PodRunning, running(), 1), testPod("web-2", false, corev1.PodPending, waiting("ImagePullBackOff"), 0))
	restarted := withPods(testPod("web-0", false, corev1.PodRunning, running(), 2, 1))
	crashing := withPods(testPod("web-0", false, corev1.PodRunning, waiting("CrashLoopBackOff"), 1), testPod("web-1", false, corev1.PodFailed, terminated("OOMKilled", 137), 0))
	for _, tc := range []struct {
		name string
		got  any
		want any
	}{
		{"podNames in name order", PodNames(healthy), "web-0, web-1"},
		{"podIPs", PodIPs(healthy), "10.0.0.0, 10.0.0.1"},
		{"podPhases", PodPhases(pending), "Running, Pending"},
		{"podNodes", PodNodes(pending), "node-1, node-1"},
		{"podCount", PodCount(pending), 2},
		{"readyPodCount", ReadyPodCount(pending), 1},
		{"podMaxRestarts sums a pod's containers", PodMaxRestarts(restarted), int64(3)},
		{"hasCrashingPod: healthy", HasCrashingPod(healthy), false},
		{"hasCrashingPod: a failure reason", HasCrashingPod(pending), true},
		{"hasCrashingPod: three restarts of one pod", HasCrashingPod(restarted), true},
		{"podContainerReasons, distinct, in order", PodContainerReasons(withPods(testPod("a-0", false, corev1.PodRunning, waiting("CrashLoopBackOff"), 1), testPod("a-1", false, corev1.PodRunning, waiting("CrashLoopBackOff"), 1), testPod("a-2", false, corev1.PodFailed, terminated("OOMKilled", 137), 0))), "CrashLoopBackOff, OOMKilled"},
		{"podCrashLoopDetected", ContainerReasonDetected("CrashLoopBackOff")(crashing), true},
		{"podOOMKilledDetected", ContainerReasonDetected("OOMKilled")(crashing), true},
		{"podErrImagePullDetected", ContainerReasonDetected("ErrImagePull")(crashing), false},
		{"podContainerState by ordinal and name", PodContainerState(crashing, 1, "c0"), "Terminated"},
		{"podContainerState of a missing container", PodContainerState(crashing, 1, "other"), ""},
		{"podContainerState of a missing ordinal", PodContainerState(crashing, 7, "c0"), ""},
		{"no summaries: podCount", PodCount(map[string]any{"metadata": map[string]any{}}), 0},
		{"no summaries: podNames", PodNames(nil), ""},
		{"no summaries: hasCrashingPod", HasCrashingPod(map[string]any{}), false},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %#v, want %#v", tc.name, tc.got, tc.want)
		}
	}
}

// A summary holds what upstream's buildPodSummary holds: the first
// terminated container's exit code (-1 without one), the ordinal of a
// StatefulSet pod's name (-1 without one), the restart count of all
// containers.
func TestPodSummary(t *testing.T) {
	got := engine.PodSummaries([]*corev1.Pod{testPod("db-2", false, corev1.PodFailed, terminated("Error", 3), 1, 4), testPod("job-abcde", true, corev1.PodRunning, running(), 0)})
	db, job := got[0].(map[string]any), got[1].(map[string]any)
	if db["ordinal"] != int64(2) || db["exitCode"] != int64(3) || db["restartCount"] != int64(5) || db["ready"] != false || db["phase"] != "Failed" {
		t.Errorf("db-2 summary %v", db)
	}
	c := db["containers"].([]any)[0].(map[string]any)
	if c["state"] != "Terminated" || c["reason"] != "Error" || c["restartCount"] != int64(1) || c["image"] != "nginx" {
		t.Errorf("db-2 container %v", c)
	}
	if job["ordinal"] != int64(-1) || job["exitCode"] != int64(-1) || job["ready"] != true {
		t.Errorf("job-abcde summary %v", job)
	}
	if engine.PodOwnerKind("Deployment") != "ReplicaSet" || engine.PodOwnerKind("StatefulSet") != "StatefulSet" || engine.PodOwnerKind("Service") != "" {
		t.Error("PodOwnerKind")
	}
}

// A Job's pods by phase, and the first exit code (upstream
// pkg/note/kube_job.go).
func TestJobPodFunctions(t *testing.T) {
	job := withPods(testPod("job-b", false, corev1.PodFailed, terminated("Error", 2), 0), testPod("job-a", false, corev1.PodSucceeded, terminated("Completed", 0), 0),
		testPod("job-c", true, corev1.PodRunning, running(), 0), testPod("job-d", false, corev1.PodPending, waiting("ContainerCreating"), 0))
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"jobActivePodNames", JobActivePodNames(job), "job-c, job-d"},
		{"jobSucceededPodNames", JobSucceededPodNames(job), "job-a"},
		{"jobFailedPodNames", JobFailedPodNames(job), "job-b"},
		{"jobFirstExitCode, in name order", JobFirstExitCode(job), int64(0)},
		{"jobFirstExitCode before any terminated", JobFirstExitCode(withPods(testPod("job-c", true, corev1.PodRunning, running(), 0))), int64(-1)},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %#v, want %#v", tc.name, tc.got, tc.want)
		}
	}
}

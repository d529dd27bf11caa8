package notes

import (
	"strings"

	"github.com/orkspace/orkestra-cel/engine"
)

// The pod functions (upstream pkg/note/kube_pods.go): they read a workload
// child's pod summaries (engine.PodsKey), which the operator adds when the
// entry declares enrich: [pods]. Without them a child has no pods: the
// functions give "", 0 and false, as upstream's.

// podFailureReasons are the container reasons hasCrashingPod counts as a
// crash, besides more than two restarts of a pod.
var podFailureReasons = []string{"CrashLoopBackOff", "OOMKilled", "Error", "ImagePullBackOff", "ErrImagePull", "InvalidImageName",
	"RunContainerError", "CreateContainerError", "PreStartHookError", "PostStartHookError"}

func pods(obj any) []map[string]any {
	m, _ := obj.(map[string]any)
	list, _ := m[engine.PodsKey].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, p := range list {
		if pm, ok := p.(map[string]any); ok {
			out = append(out, pm)
		}
	}
	return out
}

// joinPods joins a string field of every pod that has it with ", ".
func joinPods(obj any, field string) string {
	var parts []string
	for _, p := range pods(obj) {
		if v, _ := p[field].(string); v != "" {
			parts = append(parts, v)
		}
	}
	return strings.Join(parts, ", ")
}

func PodNames(obj any) string  { return joinPods(obj, "name") }
func PodIPs(obj any) string    { return joinPods(obj, "ip") }
func PodPhases(obj any) string { return joinPods(obj, "phase") }
func PodNodes(obj any) string  { return joinPods(obj, "node") }
func PodCount(obj any) int     { return len(pods(obj)) }

func ReadyPodCount(obj any) int {
	n := 0
	for _, p := range pods(obj) {
		if ready, _ := p["ready"].(bool); ready {
			n++
		}
	}
	return n
}

// PodMaxRestarts is the highest restart count of a pod (0 without pods).
func PodMaxRestarts(obj any) int64 {
	var max int64
	for _, p := range pods(obj) {
		max = maxInt64(max, toInt64(p["restartCount"]))
	}
	return max
}

func maxInt64(a, b int64) int64 {
	if b > a {
		return b
	}
	return a
}

// HasCrashingPod: a container has a failure reason (podFailureReasons), or
// a pod restarted more than twice.
func HasCrashingPod(obj any) bool {
	for _, r := range podFailureReasons {
		if hasContainerReason(obj, r) {
			return true
		}
	}
	for _, p := range pods(obj) {
		if toInt64(p["restartCount"]) > 2 {
			return true
		}
	}
	return false
}

// PodContainerReasons lists the containers' distinct non-empty reasons in
// the order first seen.
func PodContainerReasons(obj any) string {
	seen := map[string]bool{}
	var parts []string
	for _, p := range pods(obj) {
		for _, c := range containers(p) {
			if r, _ := c["reason"].(string); r != "" && !seen[r] {
				seen[r] = true
				parts = append(parts, r)
			}
		}
	}
	return strings.Join(parts, ", ")
}

// PodContainerState is the state of container name in the pod of that
// ordinal; "" when either is missing.
func PodContainerState(obj any, ordinal int64, name string) string {
	for _, p := range pods(obj) {
		if toInt64(p["ordinal"]) != ordinal {
			continue
		}
		for _, c := range containers(p) {
			if n, _ := c["name"].(string); n == name {
				s, _ := c["state"].(string)
				return s
			}
		}
		return ""
	}
	return ""
}

func containers(p map[string]any) []map[string]any {
	list, _ := p["containers"].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, c := range list {
		if cm, ok := c.(map[string]any); ok {
			out = append(out, cm)
		}
	}
	return out
}

func hasContainerReason(obj any, reason string) bool {
	for _, p := range pods(obj) {
		for _, c := range containers(p) {
			if r, _ := c["reason"].(string); r == reason {
				return true
			}
		}
	}
	return false
}

// JobFirstExitCode is the exit code of the first pod with a terminated
// container, -1 while none has.
func JobFirstExitCode(obj any) int64 {
	for _, p := range pods(obj) {
		if code := toInt64(p["exitCode"]); code >= 0 {
			return code
		}
	}
	return -1
}

// jobPodNames joins the names of the pods whose phase matches.
func jobPodNames(obj any, match func(phase string) bool) string {
	var names []string
	for _, p := range pods(obj) {
		phase, _ := p["phase"].(string)
		if name, _ := p["name"].(string); name != "" && match(phase) {
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}

// JobActivePodNames: the pods not done (neither Succeeded nor Failed).
func JobActivePodNames(obj any) string {
	return jobPodNames(obj, func(phase string) bool { return phase != "Succeeded" && phase != "Failed" })
}

func JobSucceededPodNames(obj any) string {
	return jobPodNames(obj, func(phase string) bool { return phase == "Succeeded" })
}

func JobFailedPodNames(obj any) string {
	return jobPodNames(obj, func(phase string) bool { return phase == "Failed" })
}

// ContainerReasonDetected returns the function that reports a container
// with reason (podCrashLoopDetected and its kin).
func ContainerReasonDetected(reason string) func(any) bool {
	return func(obj any) bool { return hasContainerReason(obj, reason) }
}

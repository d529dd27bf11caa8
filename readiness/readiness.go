// Package readiness says whether a Kubernetes object is ready, by kind:
// the one rule `orkestra e2e` (resources: ready: true, waits) and the
// runtime's /katalog/{entry}/cr routes (a child's ready) share.
package readiness

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Of reports whether an object is ready in the sense of upstream's
// `ready: true` (documentation/reference/schema/04-e2e/03-expect.md):
// workloads have all their replicas available, a Pod its Ready condition, a
// Job Complete, a claim Bound; another kind with a Ready condition has it
// True, and a kind with no notion of readiness (a Service) is ready once it
// exists. The reason says what was observed when it is not.
func Of(o *unstructured.Unstructured) (bool, string) {
	num := func(path ...string) int64 {
		v, _, _ := unstructured.NestedFieldNoCopy(o.Object, path...)
		switch x := v.(type) {
		case int64:
			return x
		case float64:
			return int64(x)
		}
		return 0
	}
	desired := int64(1)
	if v, ok, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "replicas"); ok && v != nil {
		desired = num("spec", "replicas")
	}
	switch o.GetKind() {
	case "Deployment", "ReplicaSet":
		got := num("status", "availableReplicas")
		return got >= desired, fmt.Sprintf("%d of %d replicas available", got, desired)
	case "StatefulSet":
		got := num("status", "readyReplicas")
		return got >= desired, fmt.Sprintf("%d of %d replicas ready", got, desired)
	case "DaemonSet":
		want, got := num("status", "desiredNumberScheduled"), num("status", "numberAvailable")
		return want > 0 && got >= want, fmt.Sprintf("%d of %d scheduled pods available", got, want)
	case "Pod":
		return condition(o, "Ready"), "condition Ready is not True (phase " + str(o, "status", "phase") + ")"
	case "Job":
		return condition(o, "Complete"), "condition Complete is not True"
	case "PersistentVolumeClaim":
		return str(o, "status", "phase") == "Bound", "phase " + str(o, "status", "phase")
	}
	if conds, ok, _ := unstructured.NestedSlice(o.Object, "status", "conditions"); ok && hasType(conds, "Ready") {
		return condition(o, "Ready"), "condition Ready is not True"
	}
	return true, ""
}

func str(o *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(o.Object, path...)
	return s
}

func hasType(conds []any, t string) bool {
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == t {
			return true
		}
	}
	return false
}

func condition(o *unstructured.Unstructured, t string) bool {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == t {
			return m["status"] == "True"
		}
	}
	return false
}

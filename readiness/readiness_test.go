package readiness

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(kind string, spec, status map[string]any) *unstructured.Unstructured {
	o := map[string]any{"apiVersion": "v1", "kind": kind, "metadata": map[string]any{"name": "x"}}
	if spec != nil {
		o["spec"] = spec
	}
	if status != nil {
		o["status"] = status
	}
	return &unstructured.Unstructured{Object: o}
}

func conds(t, s string) map[string]any {
	return map[string]any{"conditions": []any{map[string]any{"type": t, "status": s}}}
}

// Upstream's `ready: true` (reference/schema/04-e2e/03-expect.md), kind by kind.
func TestOf(t *testing.T) {
	cases := []struct {
		name  string
		o     *unstructured.Unstructured
		ready bool
		why   string
	}{
		{"deployment available", obj("Deployment", map[string]any{"replicas": int64(3)}, map[string]any{"availableReplicas": int64(3)}), true, ""},
		{"deployment short", obj("Deployment", map[string]any{"replicas": int64(3)}, map[string]any{"availableReplicas": int64(1)}), false, "1 of 3 replicas available"},
		{"deployment of one by default", obj("Deployment", map[string]any{}, nil), false, "0 of 1 replicas available"},
		{"deployment scaled to zero", obj("Deployment", map[string]any{"replicas": int64(0)}, nil), true, ""},
		{"statefulset", obj("StatefulSet", map[string]any{"replicas": int64(2)}, map[string]any{"readyReplicas": int64(2)}), true, ""},
		{"daemonset nothing scheduled", obj("DaemonSet", nil, map[string]any{"desiredNumberScheduled": int64(0)}), false, "0 of 0 scheduled pods available"},
		{"daemonset", obj("DaemonSet", nil, map[string]any{"desiredNumberScheduled": int64(2), "numberAvailable": int64(2)}), true, ""},
		{"pod running not ready", obj("Pod", nil, map[string]any{"phase": "Running", "conditions": []any{map[string]any{"type": "Ready", "status": "False"}}}), false, "condition Ready is not True (phase Running)"},
		{"pod ready", obj("Pod", nil, conds("Ready", "True")), true, ""},
		{"job complete", obj("Job", nil, conds("Complete", "True")), true, ""},
		{"job failed", obj("Job", nil, conds("Failed", "True")), false, "condition Complete is not True"},
		{"claim pending", obj("PersistentVolumeClaim", nil, map[string]any{"phase": "Pending"}), false, "phase Pending"},
		{"claim bound", obj("PersistentVolumeClaim", nil, map[string]any{"phase": "Bound"}), true, ""},
		{"custom with Ready False", obj("Website", nil, conds("Ready", "False")), false, "condition Ready is not True"},
		{"custom with Ready True", obj("Website", nil, conds("Ready", "True")), true, ""},
		{"service exists", obj("Service", nil, nil), true, ""},
	}
	for _, c := range cases {
		ok, why := Of(c.o)
		if ok != c.ready || !ok && why != c.why {
			t.Errorf("%s: Of = %v %q, want %v %q", c.name, ok, why, c.ready, c.why)
		}
	}
}

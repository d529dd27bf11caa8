package operator

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A reconcile gate that cannot be evaluated (here: spec.message is not a
// number) holds the reconcile with failPolicy: closed and lets it run with
// failPolicy: open (upstream v0.7.16, pkg/types/types_operatorbox.go
// FailPolicy).
func TestGateFailPolicy(t *testing.T) {
	gate := func(policy string) string {
		return `
preReconcile:
  reconcileGate:
    failPolicy: ` + policy + `
    when:
      - "int(self.spec.message) > 0"
onReconcile:
  configMaps:
    - name: "${self.metadata.name}-settings"
      data: {a: b}
`
	}
	t.Run("closed", func(t *testing.T) {
		h := startOperator(t, widgetPlan(t, gate("closed")))
		create(t, widget(h.ns, "w", map[string]any{"message": "many"}))
		msg := readyIs(t, h.ns, "w", "False", ReasonGated)
		if !strings.Contains(msg, "failPolicy is closed") || !strings.Contains(msg, "int(self.spec.message)") {
			t.Errorf("Ready message %q", msg)
		}
		h.idle("widget")
		if err := absent(h.ns, "w-settings", &corev1.ConfigMap{}); err != nil {
			t.Fatalf("a closed gate let the reconcile run: %v", err)
		}
	})
	t.Run("open", func(t *testing.T) {
		h := startOperator(t, widgetPlan(t, gate("open")))
		create(t, widget(h.ns, "w", map[string]any{"message": "many"}))
		converged(t, h.ns, "w")
		mustGet(t, h.ns, "w-settings", &corev1.ConfigMap{})
		eventWith(t, h.ns, ReasonGateFailedOpen, "failPolicy: open lets the reconcile run")
	})
}

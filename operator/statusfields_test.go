package operator

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const failingStatusBox = `
status:
  fields:
    - path: phase
      value: Running
    - path: replicas
      value: "{{ div 100 .spec.divisor }}"
    - path: ready
      value: "${self.spec.enabled}"
onReconcile:
  configMaps:
    - name: "${self.metadata.name}-c"
      data:
        a: b
`

// TestFailingStatusFieldSkipped (issue 18 item 3): a status field that fails
// is left out and the others are written, as the original engine did
// (pkg/template/resolver_status.go ResolveStatusFields collects the errors
// and returns the rest); the reconcile succeeds, and the Ready condition's
// message and a Warning event name the field and the error.
func TestFailingStatusFieldSkipped(t *testing.T) {
	h := startOperator(t, widgetPlan(t, failingStatusBox))
	create(t, widget(h.ns, "sf", map[string]any{"enabled": true, "divisor": int64(0)}))
	var cr *unstructured.Unstructured
	eventually(t, "status.phase and status.ready written", func() error {
		cr = widget(h.ns, "sf", nil)
		if err := get(h.ns, "sf", cr); err != nil {
			return err
		}
		st, _ := cr.Object["status"].(map[string]any)
		if st["phase"] != "Running" || st["ready"] != true {
			return fmt.Errorf("status %v", st)
		}
		return nil
	})
	st := cr.Object["status"].(map[string]any)
	if _, ok := st["replicas"]; ok {
		t.Errorf("status.replicas = %v, want it left out", st["replicas"])
	}
	c, _ := readyCondition(cr)
	msg := fmt.Sprint(c["message"])
	if c["status"] != "True" || c["reason"] != ReasonSucceeded || !strings.HasPrefix(msg, "1 children applied; 1 status field(s) not written: ") ||
		!strings.Contains(msg, "operatorBox.status.fields[1].value") || !strings.Contains(msg, "div: division by zero") {
		t.Errorf("Ready condition %v", c)
	}
	eventually(t, "a StatusFieldFailed event", func() error {
		var evs eventsv1.EventList
		if err := k8s.List(context.Background(), &evs, client.InNamespace(h.ns)); err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Type == corev1.EventTypeWarning && e.Reason == ReasonStatusFieldFailed &&
				strings.Contains(e.Note, "operatorBox.status.fields[1].value") && strings.Contains(e.Note, "division by zero") {
				return nil
			}
		}
		return fmt.Errorf("no StatusFieldFailed event among %d", len(evs.Items))
	})

	updateWidget(t, h.ns, "sf", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, int64(4), "spec", "divisor")
	})
	eventually(t, "status.replicas written", func() error {
		cr = widget(h.ns, "sf", nil)
		if err := get(h.ns, "sf", cr); err != nil {
			return err
		}
		st, _ := cr.Object["status"].(map[string]any)
		c, _ := readyCondition(cr)
		if st["replicas"] != int64(25) || c["message"] != "1 children applied" {
			return fmt.Errorf("status %v, Ready %v", st, c)
		}
		return nil
	})
}

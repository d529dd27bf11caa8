package operator

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// condition returns the widget's condition of type typ.
func condition(t *testing.T, ns, name, typ string) (map[string]any, *unstructured.Unstructured) {
	t.Helper()
	u := getWidget(t, ns, name)
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m, u
		}
	}
	return nil, u
}

// A condition from CEL flips with the custom resource, beside Ready, as
// Kubernetes' conventions have it: its lastTransitionTime moves only when
// its status changes, its observedGeneration follows the generation. kro:
// website/docs/docs/concepts/rgd/06-status-conditions.md.
func TestConditionFromCELFlips(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
onReconcile:
  configMaps:
    - name: "${self.metadata.name}-cfg"
      data: {replicas: "${string(self.spec.replicas)}"}
status:
  conditions:
    - type: Scaled
      status: "self.spec.replicas > 2"
      reason: "${self.spec.replicas > 2 ? 'Many' : 'Few'}"
      message: "${string(self.spec.replicas)} replicas wanted"
`))
	t0 := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	create(t, widget(h.ns, "shop", map[string]any{"replicas": int64(1)}))
	converged(t, h.ns, "shop")
	want := func(status, reason, msg string, since time.Time) {
		t.Helper()
		eventually(t, "Scaled="+status, func() error {
			c, u := condition(t, h.ns, "shop", "Scaled")
			if c == nil {
				return fmt.Errorf("no Scaled condition")
			}
			og, _ := c["observedGeneration"].(int64)
			if c["status"] != status || c["reason"] != reason || c["message"] != msg || og != u.GetGeneration() || c["lastTransitionTime"] != since.Format(time.RFC3339) {
				return fmt.Errorf("Scaled = %v (generation %d)", c, u.GetGeneration())
			}
			return nil
		})
	}
	want("False", "Few", "1 replicas wanted", t0)
	// No reconcile of the creation may still be running from a cache that
	// has not seen the first status write when the clock moves on.
	h.idle("widget")

	// A change that does not flip it: the transition time stays.
	h.clock.set(t0.Add(time.Hour))
	updateWidget(t, h.ns, "shop", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, int64(2), "spec", "replicas")
	})
	want("False", "Few", "2 replicas wanted", t0)

	// A flip: it moves to the clock's time.
	h.clock.set(t0.Add(2 * time.Hour))
	updateWidget(t, h.ns, "shop", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, int64(5), "spec", "replicas")
	})
	want("True", "Many", "5 replicas wanted", t0.Add(2*time.Hour))
	c, _ := condition(t, h.ns, "shop", ConditionReady)
	if c["status"] != "True" {
		t.Errorf("Ready beside it: %v", c)
	}
}

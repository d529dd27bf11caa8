package operator

import (
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/orkspace/orkestra-cel/engine"
)

const clockBox = `
status:
  fields:
    - path: ready
      value: '{{ timeInWindow "09:00" "17:00" }}'
onReconcile:
  configMaps:
    - name: "${self.metadata.name}-office"
      data:
        open: "yes"
      when:
        - time:
            after: "09:00"
            before: "17:00"
        - dayOfWeek:
            weekday: true
`

// TestTimeDependentRequeue: a condition or status field that reads the
// clock changes with time alone, so the reconcile asks to run again when
// it may change (the window's next edge, the next midnight), and then
// applies the new state (upstream pkg/types/when.go time:/dayOfWeek:
// conditions; pkg/note/time.go timeInWindow).
func TestTimeDependentRequeue(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 7, 14, 8, 30, 0, 0, time.UTC) // a Tuesday
	defer engine.SetClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })()
	setNow := func(t time.Time) { mu.Lock(); now = t; mu.Unlock() }

	h := startOperator(t, widgetPlan(t, clockBox))
	create(t, widget(h.ns, "office", map[string]any{"enabled": true}))
	h.idle("widget")
	if res := h.reconcileNow("widget", "office"); res.RequeueAfter != 30*time.Minute {
		t.Errorf("at 08:30 RequeueAfter = %v, want 30m (the window opens at 09:00)", res.RequeueAfter)
	}
	var cm corev1.ConfigMap
	if err := get(h.ns, "office-office", &cm); err == nil {
		t.Errorf("the configMap exists before the window opens")
	}
	if st := getWidget(t, h.ns, "office").Object["status"].(map[string]any); st["ready"] != false {
		t.Errorf("status.ready = %v before 09:00", st["ready"])
	}

	setNow(time.Date(2026, 7, 14, 9, 15, 0, 0, time.UTC))
	if res := h.reconcileNow("widget", "office"); res.RequeueAfter != 7*time.Hour+45*time.Minute {
		t.Errorf("at 09:15 RequeueAfter = %v, want 7h45m (the window closes at 17:00)", res.RequeueAfter)
	}
	mustGet(t, h.ns, "office-office", &cm)
	eventually(t, "status.ready true", func() error {
		if st := getWidget(t, h.ns, "office").Object["status"].(map[string]any); st["ready"] != true {
			return fmt.Errorf("status %v", st)
		}
		return nil
	})
}

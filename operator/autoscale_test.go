package operator

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/operator/render"
)

// Workload autoscale (upstream: iAlexeze/orkestra pkg/types/
// types_workload_autoscale.go, pkg/runners/workload_autoscale.go,
// examples/use-cases/workload-autoscaler/01-time-based): a Deployment at 2
// replicas outside business hours jumps to 8 when the window opens and back
// to 2 when it closes; the reconcile comes back at the window's edges
// without any change to the custom resource, and at the end of a cooldown
// that held a change back.
const autoscaleBox = `
onReconcile:
  deployments:
    - name: "${self.metadata.name}"
      image: nginx
      replicas: 2
      autoscale:
        min: 2
        max: 8
        cooldown: 10m
        scaleUp:
          target: 8
          conditions:
            when:
              - dayOfWeek: {weekday: true}
              - time: {after: "09:00", before: "18:00"}
        scaleDown:
          target: 2
          conditions:
            or:
              - "!timeInWindow('09:00', '18:00')"
`

func TestWorkloadAutoscaleFollowsTheWindow(t *testing.T) {
	clock := &fakeClock{}
	defer engine.SetClock(clock.now)()
	at := func(hhmm string) time.Time {
		tm, _ := time.Parse("2006-01-02 15:04", "2026-07-14 "+hhmm) // a Tuesday
		return tm.UTC()
	}
	h := startOperator(t, widgetPlan(t, autoscaleBox))
	set := func(tm time.Time) { clock.set(tm); h.clock.set(tm) }
	set(at("08:30"))
	create(t, widget(h.ns, "api", map[string]any{}))
	converged(t, h.ns, "api")
	replicas := func() int32 {
		t.Helper()
		var d appsv1.Deployment
		mustGet(t, h.ns, "api", &d)
		return *d.Spec.Replicas
	}
	h.idle("widget")
	if res := h.reconcileNow("widget", "api"); res.RequeueAfter != 30*time.Minute {
		t.Errorf("at 08:30 RequeueAfter = %v, want 30m (the window opens at 09:00)", res.RequeueAfter)
	}
	if r := replicas(); r != 2 {
		t.Fatalf("before the window: %d replicas, want 2", r)
	}

	// The window opens: up to the target, the time recorded.
	set(at("09:00"))
	h.reconcileNow("widget", "api")
	if r := replicas(); r != 8 {
		t.Fatalf("in the window: %d replicas, want 8", r)
	}
	var d appsv1.Deployment
	mustGet(t, h.ns, "api", &d)
	if got := d.Annotations[render.AnnotationLastScale]; got != "2026-07-14T09:00:00Z" {
		t.Errorf("%s = %q", render.AnnotationLastScale, got)
	}
	eventWith(t, h.ns, "Scaled", "scaled Deployment "+h.ns+"/api from 2 to 8 replicas (autoscale)")

	// Someone scales it by hand within the window: put back to what the
	// autoscaler set (drift correction keeps the computed count).
	d.Spec.Replicas = ptr.To[int32](5)
	if err := k8s.Update(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
	h.idle("widget") // the change reconciles (the Deployment is watched)
	h.reconcileNow("widget", "api")
	if r := replicas(); r != 5 {
		// 5 is within [min, max]: the autoscaler's current count, not
		// the declared 2, and no scale event while the rules say nothing
		// new (scaleUp holds, but 5 → 8 is a change held by cooldown).
		t.Fatalf("after a manual scale to 5 during cooldown: %d replicas, want 5", r)
	}

	// The window has closed (the cooldown, 10m from 09:00, is long past).
	set(at("18:30"))
	h.reconcileNow("widget", "api")
	if r := replicas(); r != 2 {
		t.Fatalf("after the window: %d replicas, want 2", r)
	}

	// A change within the cooldown is held back, and the reconcile comes
	// back when it ends.
	set(at("18:34"))
	d = appsv1.Deployment{}
	mustGet(t, h.ns, "api", &d)
	d.Spec.Replicas = ptr.To[int32](1) // below min
	if err := k8s.Update(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
	eventually(t, "replicas back within [min, max]", func() error {
		if r := replicas(); r != 2 {
			return fmt.Errorf("%d replicas, want 2", r)
		}
		return nil
	})
	h.idle("widget")
	set(at("09:00").Add(24*time.Hour + 0)) // Wednesday 09:00: scale up
	h.reconcileNow("widget", "api")
	if r := replicas(); r != 8 {
		t.Fatalf("Wednesday 09:00: %d replicas, want 8", r)
	}
	set(at("09:00").Add(24*time.Hour + 4*time.Minute))
	clock.set(at("18:30").Add(24 * time.Hour)) // the conditions see the window closed …
	res := h.reconcileNow("widget", "api")     // … but the operator's clock is 4 minutes past the last scale
	if r := replicas(); r != 8 {
		t.Fatalf("within the cooldown: %d replicas, want 8 (held back)", r)
	}
	if res.RequeueAfter != 6*time.Minute {
		t.Errorf("within the cooldown RequeueAfter = %v, want 6m (the cooldown's end)", res.RequeueAfter)
	}
}

// A HorizontalPodAutoscaler the katalog declares owns its workload's
// replicas: drift correction leaves them; declaring autoscale: too is an
// error naming both.
func TestHPAOwnsReplicas(t *testing.T) {
	hpa := `
  custom:
    - apiVersion: autoscaling/v2
      kind: HorizontalPodAutoscaler
      name: "${self.metadata.name}"
      spec:
        scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: "${self.metadata.name}"}
        minReplicas: 1
        maxReplicas: 5
        metrics:
          - type: Resource
            resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}
`
	h := startOperator(t, widgetPlan(t, `
onReconcile:
  deployments:
    - name: "${self.metadata.name}"
      image: nginx
      replicas: 2`+hpa))
	create(t, widget(h.ns, "web", map[string]any{}))
	converged(t, h.ns, "web")
	var d appsv1.Deployment
	mustGet(t, h.ns, "web", &d)
	if *d.Spec.Replicas != 2 {
		t.Fatalf("created with %d replicas, want the declared 2", *d.Spec.Replicas)
	}
	d.Spec.Replicas = ptr.To[int32](4) // what the HPA would do
	if err := k8s.Update(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
	h.idle("widget") // the change reconciles (the Deployment is watched)
	h.reconcileNow("widget", "web")
	mustGet(t, h.ns, "web", &d)
	if *d.Spec.Replicas != 4 {
		t.Fatalf("the HPA's 4 replicas were corrected to %d", *d.Spec.Replicas)
	}

	h2 := startOperator(t, widgetPlan(t, `
onReconcile:
  deployments:
    - name: "${self.metadata.name}"
      image: nginx
      autoscale:
        max: 3
        scaleUp: {increment: 1, conditions: {when: ["true"]}}`+hpa))
	create(t, widget(h2.ns, "web", map[string]any{}))
	msg := readyIs(t, h2.ns, "web", "False", ReasonRenderFailed)
	if !strings.Contains(msg, "declares autoscale:, and HorizontalPodAutoscaler "+h2.ns+"/web (operatorBox.onReconcile.custom[0]) scales it too") {
		t.Errorf("Ready message: %s", msg)
	}
}

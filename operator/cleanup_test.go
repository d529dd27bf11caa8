package operator

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// cleanupBox writes status.phase from spec.channel and deletes a widget an
// hour after it reached its terminal phase, in upstream's newest layout
// (operatorBox.runtime, v0.7.18); runtime.finalizers is the older
// operatorBox.finalizers.
const cleanupBox = `
runtime:
  finalizers: [test.orkestra.io/hold]
  cleanup:
    when:
      - "self.status.?phase.orValue('') == 'Succeeded'"
    deleteAfter: 1h
status:
  fields:
    - path: phase
      value: "${self.spec.channel == 'done' ? 'Succeeded' : 'Running'}"
`

// phaseIs waits for the widget's status.phase.
func phaseIs(t *testing.T, ns, name, phase string) {
	t.Helper()
	eventually(t, name+" phase "+phase, func() error {
		got, _, _ := unstructured.NestedString(getWidget(t, ns, name).Object, "status", "phase")
		if got != phase {
			return fmt.Errorf("phase %q", got)
		}
		return nil
	})
}

// A finished custom resource is deleted once its cleanup condition has
// held for deleteAfter (measured on the operator's clock), not before; its
// finalizers (runtime.finalizers) are removed as for any deletion.
func TestCleanupDeletesAfterDeleteAfter(t *testing.T) {
	h := startOperator(t, widgetPlan(t, cleanupBox))
	create(t, widget(h.ns, "job1", map[string]any{"channel": "work"}))
	phaseIs(t, h.ns, "job1", "Running")
	if fins := getWidget(t, h.ns, "job1").GetFinalizers(); !slices.Contains(fins, "test.orkestra.io/hold") {
		t.Fatalf("runtime.finalizers not applied: %v", fins)
	}
	updateWidget(t, h.ns, "job1", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "done", "spec", "channel")
	})
	phaseIs(t, h.ns, "job1", "Succeeded")
	h.idle("widget")
	// The condition holds from now on the operator's clock: the reconcile
	// asks to come back when deleteAfter has passed.
	if res := h.reconcileNow("widget", "job1"); res.RequeueAfter <= 0 || res.RequeueAfter > time.Hour {
		t.Fatalf("requeue after %s, want within the hour", res.RequeueAfter)
	}
	h.clock.advance(59 * time.Minute)
	h.reconcileNow("widget", "job1")
	never(t, time.Second, "job1 is kept before deleteAfter", func() error {
		getWidget(t, h.ns, "job1")
		return nil
	})
	h.clock.advance(2 * time.Minute)
	h.reconcileNow("widget", "job1")
	eventually(t, "job1 deleted", func() error { return absent(h.ns, "job1", widget(h.ns, "job1", nil)) })
	eventWith(t, h.ns, ReasonCleanedUp, "operatorBox.runtime.cleanup (deleteAfter 1h0m0s) held since")
}

// The clock restarts when the condition stops holding.
func TestCleanupClockRestartsWhenTheConditionStopsHolding(t *testing.T) {
	h := startOperator(t, widgetPlan(t, cleanupBox))
	create(t, widget(h.ns, "job2", map[string]any{"channel": "done"}))
	phaseIs(t, h.ns, "job2", "Succeeded")
	h.idle("widget")
	h.reconcileNow("widget", "job2")
	h.clock.advance(50 * time.Minute)
	updateWidget(t, h.ns, "job2", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "work", "spec", "channel")
	})
	phaseIs(t, h.ns, "job2", "Running")
	h.idle("widget")
	if a, ok := getWidget(t, h.ns, "job2").GetAnnotations()[AnnotationCleanupSince]; ok {
		t.Fatalf("the clock's annotation stays (%q) once the condition stops holding", a)
	}
	updateWidget(t, h.ns, "job2", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "done", "spec", "channel")
	})
	phaseIs(t, h.ns, "job2", "Succeeded")
	h.idle("widget")
	h.clock.advance(30 * time.Minute) // 80 minutes since it first held, 30 since it holds again
	h.reconcileNow("widget", "job2")
	never(t, time.Second, "job2 is kept: the condition holds for 30 minutes only", func() error {
		getWidget(t, h.ns, "job2")
		return nil
	})
	h.clock.advance(31 * time.Minute)
	h.reconcileNow("widget", "job2")
	eventually(t, "job2 deleted", func() error { return absent(h.ns, "job2", widget(h.ns, "job2", nil)) })
}

// A custom resource carrying upstream's deletion-protection label is never
// deleted by cleanup; a Warning event says why.
func TestCleanupRespectsDeletionProtection(t *testing.T) {
	h := startOperator(t, widgetPlan(t, cleanupBox))
	w := widget(h.ns, "kept", map[string]any{"channel": "done"})
	w.SetLabels(map[string]string{DeletionProtectionLabel: "true"})
	create(t, w)
	phaseIs(t, h.ns, "kept", "Succeeded")
	h.idle("widget")
	h.reconcileNow("widget", "kept")
	h.clock.advance(2 * time.Hour)
	h.reconcileNow("widget", "kept")
	eventWith(t, h.ns, ReasonCleanupProtected, DeletionProtectionLabel+"=true")
	never(t, time.Second, "a protected widget is kept", func() error {
		getWidget(t, h.ns, "kept")
		return nil
	})
	// Without the label, the next reconcile deletes it.
	updateWidget(t, h.ns, "kept", func(u *unstructured.Unstructured) { u.SetLabels(nil) })
	eventually(t, "kept deleted once unprotected", func() error { return absent(h.ns, "kept", widget(h.ns, "kept", nil)) })
}

// The cleanup clock lives on the custom resource (AnnotationCleanupSince):
// an operator that restarts (or a new leader) counts from when the
// condition first held, so a restart does not postpone the deletion.
func TestCleanupClockSurvivesARestart(t *testing.T) {
	plan := widgetPlan(t, cleanupBox)
	h := startOperator(t, plan)
	create(t, widget(h.ns, "job3", map[string]any{"channel": "done"}))
	phaseIs(t, h.ns, "job3", "Succeeded")
	h.idle("widget")
	h.reconcileNow("widget", "job3")
	first := h.clock.now()
	if got := getWidget(t, h.ns, "job3").GetAnnotations()[AnnotationCleanupSince]; got != first.UTC().Format(time.RFC3339Nano) {
		t.Fatalf("%s = %q, want when the condition first held (%s)", AnnotationCleanupSince, got, first)
	}
	h.stop()

	// A new operator process, 50 minutes later on its clock: 10 are left.
	h2 := startOperator(t, plan, func(o *harnessOptions) { o.ns, o.clockAt = h.ns, first.Add(50*time.Minute) })
	h2.idle("widget")
	if res := h2.reconcileNow("widget", "job3"); res.RequeueAfter <= 0 || res.RequeueAfter > 10*time.Minute {
		t.Fatalf("after the restart: requeue after %s, want at most the 10 minutes left", res.RequeueAfter)
	}
	never(t, time.Second, "job3 is kept before deleteAfter", func() error {
		getWidget(t, h.ns, "job3")
		return nil
	})
	h2.clock.advance(11 * time.Minute)
	h2.reconcileNow("widget", "job3")
	eventually(t, "job3 deleted an hour after its condition first held", func() error { return absent(h.ns, "job3", widget(h.ns, "job3", nil)) })
	eventWith(t, h.ns, ReasonCleanedUp, "held since "+first.UTC().Format(time.RFC3339))
}

// A damaged clock annotation starts the clock again (later, never earlier).
func TestCleanupDamagedClockStartsAgain(t *testing.T) {
	h := startOperator(t, widgetPlan(t, cleanupBox))
	w := widget(h.ns, "job4", map[string]any{"channel": "done"})
	w.SetAnnotations(map[string]string{AnnotationCleanupSince: "yesterday"})
	create(t, w)
	phaseIs(t, h.ns, "job4", "Succeeded")
	h.idle("widget")
	h.reconcileNow("widget", "job4")
	if got := getWidget(t, h.ns, "job4").GetAnnotations()[AnnotationCleanupSince]; got != h.clock.now().UTC().Format(time.RFC3339Nano) {
		t.Fatalf("%s = %q, want the operator's clock", AnnotationCleanupSince, got)
	}
}

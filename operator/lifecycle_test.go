package operator

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/operator/render"
)

const onceBox = `
onCreate:
  secrets:
    - name: "${self.metadata.name}-frozen"
      once: true
      data:
        key: "${randomHex(16)}"
    - name: "${self.metadata.name}-rotating"
      once: true
      rotateAfter: 1h
      data:
        key: "${randomHex(16)}"
        user: "${self.spec.message}"
`

// TestOnceAndRotateAfter: once secrets are generated once and never
// overwritten (spec changes, reconciles); rotateAfter regenerates when the
// generated-at annotation is older than the duration, and the reconcile
// comes back when the next rotation is due.
func TestOnceAndRotateAfter(t *testing.T) {
	h := startOperator(t, widgetPlan(t, onceBox))
	create(t, widget(h.ns, "sec", map[string]any{"message": "alice"}))
	converged(t, h.ns, "sec")
	read := func(name string) (key, user, generated string) {
		t.Helper()
		var s corev1.Secret
		mustGet(t, h.ns, name, &s)
		return string(s.Data["key"]), string(s.Data["user"]), s.Annotations[render.AnnotationGeneratedAt]
	}
	frozen, _, frozenAt := read("sec-frozen")
	rot, user, rotAt := read("sec-rotating")
	if len(frozen) != 32 || len(rot) != 32 || frozen == rot || user != "alice" || rotAt != "2030-01-01T12:00:00Z" || frozenAt != rotAt {
		t.Fatalf("generated: frozen %q rotating %q user %q at %q/%q", frozen, rot, user, frozenAt, rotAt)
	}

	// Spec changes and reconciles leave them alone.
	updateWidget(t, h.ns, "sec", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "bob", "spec", "message")
	})
	converged(t, h.ns, "sec")
	h.idle("widget")
	h.clock.advance(30 * time.Minute)
	res := h.reconcileNow("widget", "sec")
	if res.RequeueAfter != 30*time.Minute {
		t.Errorf("RequeueAfter = %v, want the 30m until the rotation", res.RequeueAfter)
	}
	if k, u, _ := read("sec-rotating"); k != rot || u != "alice" {
		t.Errorf("the secret changed before rotateAfter: %q %q", k, u)
	}

	// Past rotateAfter: regenerated (with the current spec), frozen is not.
	h.clock.advance(31 * time.Minute)
	res = h.reconcileNow("widget", "sec")
	k, u, at := read("sec-rotating")
	if k == rot || len(k) != 32 || u != "bob" || at != "2030-01-01T13:01:00Z" {
		t.Errorf("after rotateAfter: key %q (was %q) user %q generated-at %q", k, rot, u, at)
	}
	if res.RequeueAfter != time.Hour {
		t.Errorf("RequeueAfter after rotation = %v, want 1h", res.RequeueAfter)
	}
	if f, _, fAt := read("sec-frozen"); f != frozen || fAt != frozenAt {
		t.Errorf("the once secret without rotateAfter changed: %q at %q", f, fAt)
	}

	// A once secret deleted by hand is generated anew.
	if err := k8s.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "sec-frozen"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the frozen secret to come back", func() error {
		var s corev1.Secret
		if err := get(h.ns, "sec-frozen", &s); err != nil {
			return err
		}
		if string(s.Data["key"]) == frozen {
			return fmt.Errorf("same value")
		}
		return nil
	})
}

const onDeleteBox = `
onReconcile:
  configMaps:
    - name: "${self.metadata.name}-live"
      data: {a: b}
onDelete:
  jobs:
    - name: "${self.metadata.name}-cleanup"
      image: busybox
      args: [cleanup, "${self.metadata.name}"]
  configMaps:
    - name: "${self.metadata.name}-tombstone"
      data:
        deleted: "${self.metadata.name}"
`

// TestOnDeleteWithFinalizer: the finalizer goes on first; deleting the
// custom resource runs the onDelete children and keeps it until the
// onDelete Job completed, then the finalizer is removed and it is gone.
func TestOnDeleteWithFinalizer(t *testing.T) {
	h := startOperator(t, widgetPlan(t, onDeleteBox))
	ctx := context.Background()
	create(t, widget(h.ns, "del", map[string]any{}))
	cr := converged(t, h.ns, "del")
	if fins := cr.GetFinalizers(); len(fins) != 1 || fins[0] != Finalizer {
		t.Fatalf("finalizers = %v", fins)
	}
	if err := absent(h.ns, "del-cleanup", &batchv1.Job{}); err != nil {
		t.Fatalf("the onDelete job ran early: %v", err)
	}

	if err := k8s.Delete(ctx, widget(h.ns, "del", nil)); err != nil {
		t.Fatal(err)
	}
	var job batchv1.Job
	eventually(t, "the onDelete job and config map", func() error {
		if err := get(h.ns, "del-tombstone", &corev1.ConfigMap{}); err != nil {
			return err
		}
		return get(h.ns, "del-cleanup", &job)
	})
	if args := job.Spec.Template.Spec.Containers[0].Args; len(args) != 2 || args[1] != "del" {
		t.Errorf("job args %v", args)
	}
	// The job has not completed: the custom resource stays.
	never(t, 700*time.Millisecond, "the custom resource stays while the job runs", func() error {
		u := widget(h.ns, "del", nil)
		if err := get(h.ns, "del", u); err != nil {
			return err
		}
		if u.GetDeletionTimestamp() == nil || len(u.GetFinalizers()) != 1 {
			return fmt.Errorf("deletionTimestamp %v finalizers %v", u.GetDeletionTimestamp(), u.GetFinalizers())
		}
		return nil
	})

	// No job controller runs in envtest: complete the job by hand.
	now := metav1.Now()
	job.Status = batchv1.JobStatus{
		StartTime:      &now,
		CompletionTime: &now,
		Succeeded:      1,
		Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
		},
	}
	if err := k8s.Status().Update(ctx, &job); err != nil {
		t.Fatalf("completing the job: %v", err)
	}
	eventually(t, "the custom resource to be gone", func() error { return absent(h.ns, "del", widget(h.ns, "del", nil)) })
	eventually(t, "the Finalized event", func() error {
		var evs eventsv1.EventList
		if err := k8s.List(ctx, &evs, client.InNamespace(h.ns)); err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Reason == "Finalized" && e.Regarding.Name == "del" {
				return nil
			}
		}
		return fmt.Errorf("no Finalized event among %d", len(evs.Items))
	})
}

const statusBox = `
status:
  fields:
    - path: replicas
      value: "{{ .spec.replicas }}"
    - path: ready
      value: "${self.spec.enabled}"
    - path: ratio
      value: "${double(self.spec.replicas) / 4.0}"
    - path: phase
      value: "${self.spec.enabled ? 'Running' : 'Paused'}"
onReconcile:
  configMaps:
    - name: "${self.metadata.name}-c"
      data:
        quotient: "${string(100 / self.spec.divisor)}"
`

// TestStatusTypingAndFailures: status fields are written with the types
// the status schema declares (an integer from a legacy template is an
// integer); an expression failing at run time makes Ready=False with the
// reason and a message naming the field, a Warning event and an error
// metric, and the next good spec makes it Ready again.
func TestStatusTypingAndFailures(t *testing.T) {
	h := startOperator(t, widgetPlan(t, statusBox))
	create(t, widget(h.ns, "st", map[string]any{"replicas": int64(3), "enabled": true, "divisor": int64(0)}))
	var failed *unstructured.Unstructured
	eventually(t, "Ready=False", func() error {
		failed = widget(h.ns, "st", nil)
		if err := get(h.ns, "st", failed); err != nil {
			return err
		}
		c, ok := readyCondition(failed)
		if !ok || c["status"] != "False" {
			return fmt.Errorf("Ready %v", c)
		}
		return nil
	})
	c, _ := readyCondition(failed)
	msg := fmt.Sprint(c["message"])
	if c["reason"] != ReasonRenderFailed || !strings.Contains(msg, "operatorBox.onReconcile.configMaps[0].data.quotient") || !strings.Contains(msg, "division by zero") {
		t.Errorf("Ready condition %v", c)
	}
	eventually(t, "a Warning event", func() error {
		var evs eventsv1.EventList
		if err := k8s.List(context.Background(), &evs, client.InNamespace(h.ns)); err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Type == corev1.EventTypeWarning && e.Reason == ReasonRenderFailed && strings.Contains(e.Note, "division by zero") {
				return nil
			}
		}
		return fmt.Errorf("no warning event")
	})
	if v := metricValue(t, h, MetricReconcileTotal, map[string]string{"crd": "widget", "result": ResultError}); v < 1 {
		t.Errorf("%s{result=error} = %v", MetricReconcileTotal, v)
	}

	updateWidget(t, h.ns, "st", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, int64(4), "spec", "divisor")
	})
	cr := converged(t, h.ns, "st")
	st := cr.Object["status"].(map[string]any)
	if v, ok := st["replicas"].(int64); !ok || v != 3 {
		t.Errorf("status.replicas = %#v, want the integer 3", st["replicas"])
	}
	if v, ok := st["ready"].(bool); !ok || !v {
		t.Errorf("status.ready = %#v, want true", st["ready"])
	}
	if v, ok := st["ratio"].(float64); !ok || v != 0.75 {
		t.Errorf("status.ratio = %#v, want 0.75", st["ratio"])
	}
	if st["phase"] != "Running" {
		t.Errorf("status.phase = %#v", st["phase"])
	}
	var cm corev1.ConfigMap
	mustGet(t, h.ns, "st-c", &cm)
	if cm.Data["quotient"] != "25" {
		t.Errorf("quotient %v", cm.Data)
	}
}

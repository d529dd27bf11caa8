package operator

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// Direct runs the controllers' reconcilers over the caller's client: here
// the test's plain client to the API server, which serves no owner index
// — the state machine's status reads its Jobs back, listed by label.
func TestDirect(t *testing.T) {
	plan := loadPlan(t, "../examples/state-machine/katalog.yaml")
	op := New(plan, Options{Registry: prometheus.NewRegistry()})
	d, err := op.Direct(DirectOptions{Client: k8s, Mapper: k8s.RESTMapper()})
	if err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t)
	p := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "demo.orkestra.io/v1", "kind": "Pipeline",
		"metadata": map[string]any{"name": "p", "namespace": ns},
		"spec":     map[string]any{"image": "busybox:1.36", "steps": map[string]any{"build": "true", "test": "true", "notify": "true"}},
	}}
	create(t, p)
	key := types.NamespacedName{Namespace: ns, Name: "p"}
	ctx := context.Background()
	if _, err := d.Reconcile(ctx, "pipeline", key); err != nil {
		t.Fatalf("first reconcile: %v", err)
	}
	var build batchv1.Job
	mustGet(t, ns, "p-build", &build)
	// The build Job succeeds; the next reconcile reads it back through the
	// label and moves the phase.
	build.Status.Succeeded = 1
	build.Status.StartTime = build.CreationTimestamp.DeepCopy()
	build.Status.CompletionTime = build.CreationTimestamp.DeepCopy()
	build.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: "True"},
		{Type: batchv1.JobComplete, Status: "True"},
	}
	if err := k8s.Status().Update(ctx, &build); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Reconcile(ctx, "pipeline", key); err != nil {
		t.Fatalf("second reconcile: %v", err)
	}
	mustGet(t, ns, "p", p)
	if phase, _, _ := unstructured.NestedString(p.Object, "status", "phase"); phase != "Running/test" {
		t.Errorf("phase %q after the build Job succeeded, want Running/test", phase)
	}
	if _, err := d.Reconcile(ctx, "nope", key); err == nil || !strings.Contains(err.Error(), "does not reconcile here") {
		t.Errorf("an unknown entry: %v", err)
	}
	if _, err := op.Direct(DirectOptions{Client: k8s, Mapper: k8s.RESTMapper()}); err == nil {
		t.Error("a second Direct on one Operator must be refused")
	}
}

// Without informers, Direct tells a change from the version its last
// reconcile saw: with enqueueGate.sentinels [generationChanged] (upstream
// pkg/runtime/sentinel), a cycle in which the spec did not change
// reconciles nothing, the first one and one after a spec change do.
func TestDirectSentinels(t *testing.T) {
	plan := widgetPlan(t, `
preReconcile:
  sentinels: [generationChanged]
  enqueueGate:
    sentinels: [generationChanged]
onReconcile:
  configMaps:
    - name: "${self.metadata.name}-out"
      data: {image: "${self.spec.?image.orValue('none')}"}
`)
	op := New(plan, Options{Registry: prometheus.NewRegistry()})
	d, err := op.Direct(DirectOptions{Client: k8s, Mapper: k8s.RESTMapper()})
	if err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t)
	create(t, widget(ns, "w", map[string]any{"image": "a"}))
	key := types.NamespacedName{Namespace: ns, Name: "w"}
	ctx := context.Background()
	cycle := func() {
		t.Helper()
		if _, err := d.Reconcile(ctx, "widget", key); err != nil {
			t.Fatal(err)
		}
	}
	out := func() string {
		var cm corev1.ConfigMap
		if err := get(ns, "w-out", &cm); err != nil {
			return "absent"
		}
		return cm.Data["image"]
	}
	cycle()
	if got := out(); got != "a" {
		t.Fatalf("first cycle: %s", got)
	}
	if err := k8s.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "w-out", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	cycle()
	if got := out(); got != "absent" {
		t.Fatalf("a cycle without a spec change reconciled: %s", got)
	}
	updateWidget(t, ns, "w", func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, "b", "spec", "image") })
	cycle()
	if got := out(); got != "b" {
		t.Fatalf("a cycle after a spec change: %s", got)
	}
}

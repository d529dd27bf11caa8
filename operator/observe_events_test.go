package operator

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// observe.events (orkspace/orkestra pkg/types/types_observe.go EventEntry,
// documentation/reference/schema/02-katalog/28-events.md): a Kubernetes
// Event whose fields match a declaration reconciles the custom resource
// its keyFrom names — exactly that one; an Event that differs in one field
// reconciles nothing.
func TestObservedEventReconcilesTheKeyedResource(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
observe:
  events:
    dbReady:
      reason: DatabaseReady
      type: Normal
      reportingController: db.example.com/operator
      regarding: {apiVersion: db.example.com/v1, kind: Database}
      on: [create]
      keyFrom: {label: example.com/widget}
onReconcile:
  configMaps:
    - name: "${self.metadata.name}-out"
      data: {observed: "${self.metadata.name}"}
`))
	ns := h.ns
	for _, n := range []string{"a", "b"} {
		create(t, widget(ns, n, map[string]any{}))
		converged(t, ns, n)
	}
	h.idle("widget")
	a0, b0 := h.client.getsOf("a"), h.client.getsOf("b")
	event := func(name, reason, kind string) *eventsv1.Event {
		return &eventsv1.Event{
			ObjectMeta:          metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"example.com/widget": "a"}},
			EventTime:           metav1.NewMicroTime(time.Now()),
			Reason:              reason,
			Type:                corev1.EventTypeNormal,
			Action:              "Provision",
			ReportingController: "db.example.com/operator",
			ReportingInstance:   "db-0",
			Regarding:           corev1.ObjectReference{APIVersion: "db.example.com/v1", Kind: kind, Name: "main", Namespace: ns},
		}
	}
	// Differing in the reason, or in the kind it is about: nothing.
	create(t, event("other-reason", "DatabaseFailed", "Database"))
	create(t, event("other-kind", "DatabaseReady", "Table"))
	never(t, 2*time.Second, "Events that do not match reconcile nothing", func() error {
		if a, b := h.client.getsOf("a"), h.client.getsOf("b"); a != a0 || b != b0 {
			return fmt.Errorf("a reconciled %d times, b %d", a-a0, b-b0)
		}
		return nil
	})
	create(t, event("ready", "DatabaseReady", "Database"))
	eventually(t, "the matching Event to reconcile a", func() error {
		if h.client.getsOf("a") == a0 {
			return fmt.Errorf("a not reconciled")
		}
		return nil
	})
	h.idle("widget")
	if b := h.client.getsOf("b"); b != b0 {
		t.Errorf("b was reconciled %d times by an Event keyed to a", b-b0)
	}
}

// observe.watch with on: [delete] (27-watch.md): creating and changing the
// watched object reconciles nothing, deleting it reconciles the keyed
// custom resource.
func TestObservedWatchOnDeleteOnly(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
observe:
  watch:
    - apiVersion: v1
      kind: ConfigMap
      name: flag
      on: [delete]
      keyFrom: {name: singleton}
onReconcile:
  configMaps:
    - name: "${self.metadata.name}-out"
      data: {observed: "${self.metadata.name}"}
`))
	ns := h.ns
	create(t, widget(ns, "singleton", map[string]any{}))
	converged(t, ns, "singleton")
	h.idle("widget")
	s0 := h.client.getsOf("singleton")
	flag := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "flag", Namespace: ns}, Data: map[string]string{"v": "1"}}
	create(t, flag)
	flag.Data["v"] = "2"
	if err := k8s.Update(t.Context(), flag); err != nil {
		t.Fatal(err)
	}
	neverReconciled(t, h.client, "singleton", s0, "creating and updating the watched ConfigMap reconciles nothing")
	if err := k8s.Delete(t.Context(), flag); err != nil {
		t.Fatal(err)
	}
	eventually(t, "deleting the watched ConfigMap to reconcile singleton", func() error {
		if h.client.getsOf("singleton") == s0 {
			return fmt.Errorf("not reconciled")
		}
		return nil
	})
}

// examples/observe, the newest layout end to end: a Backup is reconciled by
// the Event of its database and by the deletion of the shared policy, not
// by the policy's data edits nor by its own relabelling.
func TestObserveExample(t *testing.T) {
	h := startOperator(t, loadPlan(t, filepath.Join("..", "examples", "observe", "katalog.yaml")))
	ns := h.ns
	b := readExample(t, ns, "observe", "backup.yaml")
	create(t, b)
	outIs(t, ns, "nightly-schedule", "database", "orders")
	policy := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "backup-policy", Namespace: ns}, Data: map[string]string{"keep": "7"}}
	create(t, policy)
	h.idle("backup")
	n0 := h.client.getsOf("nightly")
	unchanged := func(what string) {
		t.Helper()
		neverReconciled(t, h.client, "nightly", n0, what+" reconciles nothing")
	}
	reconciled := func(what string) {
		t.Helper()
		eventually(t, what+" to reconcile nightly", func() error {
			if h.client.getsOf("nightly") == n0 {
				return fmt.Errorf("not reconciled")
			}
			return nil
		})
		h.idle("backup")
		n0 = h.client.getsOf("nightly")
	}
	policy.Data["keep"] = "14"
	if err := k8s.Update(t.Context(), policy); err != nil {
		t.Fatal(err)
	}
	live := readExample(t, ns, "observe", "backup.yaml")
	mustGet(t, ns, "nightly", live)
	live.SetLabels(map[string]string{"tier": "gold"})
	if err := k8s.Update(t.Context(), live); err != nil {
		t.Fatal(err)
	}
	unchanged("a data edit of the policy and a relabelled Backup")
	create(t, &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "orders-ready", Namespace: ns, Labels: map[string]string{"examples.orkestra.io/backup": "nightly"}},
		EventTime:  metav1.NewMicroTime(time.Now()), Reason: "DatabaseReady", Type: corev1.EventTypeNormal, Action: "Start",
		ReportingController: "db.example.com/operator", ReportingInstance: "db-0",
		Regarding: corev1.ObjectReference{APIVersion: "db.example.com/v1", Kind: "Database", Name: "orders", Namespace: ns},
	})
	reconciled("the database's DatabaseReady Event")
	if err := k8s.Delete(t.Context(), policy); err != nil {
		t.Fatal(err)
	}
	reconciled("deleting the policy")
}

package operator

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// child names one object a test expects, by kind.
type child struct{ kind, name string }

var childGVKs = map[string]schema.GroupVersionKind{
	"ConfigMap":  {Version: "v1", Kind: "ConfigMap"},
	"Deployment": {Group: "apps", Version: "v1", Kind: "Deployment"},
	"Job":        {Group: "batch", Version: "v1", Kind: "Job"},
}

func (c child) object() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(childGVKs[c.kind])
	return u
}

// present reports an error unless every child exists (and is not being
// deleted).
func present(ns string, cs ...child) error {
	for _, c := range cs {
		u := c.object()
		if err := get(ns, c.name, u); err != nil {
			return fmt.Errorf("%s %s: %w", c.kind, c.name, err)
		}
		if u.GetDeletionTimestamp() != nil {
			return fmt.Errorf("%s %s is being deleted", c.kind, c.name)
		}
	}
	return nil
}

// deletes returns the delete calls among writes.
func deletes(writes []string) []string {
	var out []string
	for _, w := range writes {
		if strings.HasPrefix(w, "delete") {
			out = append(out, w)
		}
	}
	return out
}

// eventNotes returns the notes of the events of reason in ns.
func eventNotes(t *testing.T, ns, reason string) []string {
	t.Helper()
	var evs eventsv1.EventList
	if err := k8s.List(t.Context(), &evs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs.Items {
		if e.Reason == reason {
			out = append(out, e.Note)
		}
	}
	return out
}

// setEnabled writes spec.enabled and waits for the reconcile of it.
func setEnabled(t *testing.T, h *harness, name string, on bool) {
	t.Helper()
	updateWidget(t, h.ns, name, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, on, "spec", "enabled")
	})
	converged(t, h.ns, name)
	h.idle("widget")
}

// By default a child whose condition stops holding stays when it is not
// drift-corrected — an onCreate child, a reconcile: false one — and a Job
// stays whatever its hook: the original runtime's Job runner has no delete
// branch (iAlexeze/orkestra pkg/runners/jobs.go), and only drift-corrected
// declarations reach DeleteIfOwned (pkg/runners/docs/01-runner-contract.md,
// section B4). No delete call is made and no Deleted event emitted.
func TestConditionStopsHoldingLeavesByDefault(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
onCreate:
  configMaps:
    - name: "${self.metadata.name}-created"
      data: {a: b}
      when: "self.spec.enabled"
onReconcile:
  configMaps:
    - name: "${self.metadata.name}-once"
      data: {a: b}
      when: "self.spec.enabled"
      reconcile: false
  jobs:
    - name: "${self.metadata.name}-build"
      image: busybox
      when: "self.spec.enabled"
`))
	kids := []child{{"ConfigMap", "sm-created"}, {"ConfigMap", "sm-once"}, {"Job", "sm-build"}}
	create(t, widget(h.ns, "sm", map[string]any{"enabled": true}))
	converged(t, h.ns, "sm")
	eventually(t, "the children", func() error { return present(h.ns, kids...) })
	h.idle("widget")
	h.client.takeWrites()

	setEnabled(t, h, "sm", false)
	never(t, 2*time.Second, "the children to stay", func() error { return present(h.ns, kids...) })
	if d := deletes(h.client.takeWrites()); len(d) > 0 {
		t.Errorf("deleted: %v", d)
	}
	if notes := eventNotes(t, h.ns, "Deleted"); len(notes) > 0 {
		t.Errorf("Deleted events: %v", notes)
	}
}

// prune: true deletes a child whose condition stops holding, on the
// declaration, on its hook, or on operatorBox; the nearest prune: wins, so
// prune: false keeps a drift-corrected child the default would delete. Only
// the runtime's own objects are deleted (the ownership rules of
// TestWhenFalseDeletion hold for pruning), and a pruned Job runs again when
// its condition holds again.
func TestPruneAtEachLevel(t *testing.T) {
	for _, tc := range []struct {
		level, box  string
		gone, stays []child
	}{
		{"declaration", `
onCreate:
  configMaps:
    - name: "${self.metadata.name}-pruned"
      data: {a: b}
      when: "self.spec.enabled"
      prune: true
    - name: "${self.metadata.name}-kept"
      data: {a: b}
      when: "self.spec.enabled"
onReconcile:
  deployments:
    - name: "${self.metadata.name}-kept"
      image: nginx
      when: "self.spec.enabled"
      prune: false
`, []child{{"ConfigMap", "p-pruned"}}, []child{{"ConfigMap", "p-kept"}, {"Deployment", "p-kept"}}},
		{"hook", `
onReconcile:
  prune: true
  jobs:
    - name: "${self.metadata.name}-pruned"
      image: busybox
      when: "self.spec.enabled"
onCreate:
  configMaps:
    - name: "${self.metadata.name}-kept"
      data: {a: b}
      when: "self.spec.enabled"
`, []child{{"Job", "p-pruned"}}, []child{{"ConfigMap", "p-kept"}}},
		{"operatorBox", `
prune: true
onCreate:
  configMaps:
    - name: "${self.metadata.name}-pruned"
      data: {a: b}
      when: "self.spec.enabled"
onReconcile:
  prune: false
  jobs:
    - name: "${self.metadata.name}-kept"
      image: busybox
      when: "self.spec.enabled"
`, []child{{"ConfigMap", "p-pruned"}}, []child{{"Job", "p-kept"}}},
	} {
		t.Run(tc.level, func(t *testing.T) {
			h := startOperator(t, widgetPlan(t, tc.box))
			create(t, widget(h.ns, "p", map[string]any{"enabled": true}))
			converged(t, h.ns, "p")
			all := append(append([]child{}, tc.gone...), tc.stays...)
			eventually(t, "the children", func() error { return present(h.ns, all...) })
			before := map[string]string{}
			for _, c := range tc.gone {
				u := c.object()
				mustGet(t, h.ns, c.name, u)
				before[c.kind+c.name] = string(u.GetUID())
			}

			setEnabled(t, h, "p", false)
			for _, c := range tc.gone {
				eventually(t, c.kind+" "+c.name+" to be pruned", func() error { return absent(h.ns, c.name, c.object()) })
			}
			if err := present(h.ns, tc.stays...); err != nil {
				t.Errorf("a child without prune went: %v", err)
			}
			notes := strings.Join(eventNotes(t, h.ns, "Deleted"), "; ")
			for _, c := range tc.gone {
				if !strings.Contains(notes, fmt.Sprintf("deleted %s %s/%s: its condition self.spec.enabled does not hold", c.kind, h.ns, c.name)) {
					t.Errorf("no Deleted event for %s %s among %q", c.kind, c.name, notes)
				}
			}

			setEnabled(t, h, "p", true)
			eventually(t, "the pruned children to come back", func() error {
				for _, c := range tc.gone {
					u := c.object()
					if err := get(h.ns, c.name, u); err != nil {
						return err
					}
					if string(u.GetUID()) == before[c.kind+c.name] {
						return fmt.Errorf("%s %s is the old object", c.kind, c.name)
					}
				}
				return nil
			})
		})
	}
}

// reconcile: false under onReconcile is created once and never updated:
// a spec change updates the drift-corrected ConfigMap beside it and leaves
// this one as it was; deleted, it is created again with the values of now —
// the original runtime's creates are "create if absent" (iAlexeze/orkestra
// pkg/resources/jobs/job.go Create), as this runtime's onCreate children.
func TestReconcileFalseIsNeverUpdated(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
onReconcile:
  configMaps:
    - name: "${self.metadata.name}-frozen"
      data: {message: "${self.spec.message}"}
      reconcile: false
    - name: "${self.metadata.name}-live"
      data: {message: "${self.spec.message}"}
`))
	create(t, widget(h.ns, "rf", map[string]any{"message": "one"}))
	converged(t, h.ns, "rf")
	h.idle("widget")
	h.client.takeWrites()
	message := func(name string) string {
		var cm corev1.ConfigMap
		if err := get(h.ns, name, &cm); err != nil {
			return err.Error()
		}
		return cm.Data["message"]
	}

	updateWidget(t, h.ns, "rf", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "two", "spec", "message")
	})
	converged(t, h.ns, "rf")
	eventually(t, "the drift-corrected ConfigMap to follow the spec", func() error {
		if m := message("rf-live"); m != "two" {
			return fmt.Errorf("rf-live has %q", m)
		}
		return nil
	})
	h.idle("widget")
	if m := message("rf-frozen"); m != "one" {
		t.Errorf("the reconcile: false ConfigMap was updated: %q", m)
	}
	for _, w := range h.client.takeWrites() {
		if strings.Contains(w, "rf-frozen") {
			t.Errorf("a write to the reconcile: false ConfigMap: %s", w)
		}
	}

	if err := k8s.Delete(t.Context(), &corev1.ConfigMap{ObjectMeta: objectMeta(h.ns, "rf-frozen")}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deleted ConfigMap to be created again", func() error {
		if m := message("rf-frozen"); m != "two" {
			return fmt.Errorf("rf-frozen: %s", m)
		}
		return nil
	})
}

package operator

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// eventWith waits for an event of reason whose note contains text.
func eventWith(t *testing.T, ns, reason, text string) {
	t.Helper()
	eventually(t, "a "+reason+" event", func() error {
		var evs eventsv1.EventList
		if err := k8s.List(t.Context(), &evs, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Reason == reason && strings.Contains(e.Note, text) {
				return nil
			}
		}
		return fmt.Errorf("no %s event with %q among %d", reason, text, len(evs.Items))
	})
}

// readyIs waits for the widget's Ready condition to have status and reason,
// and returns its message.
func readyIs(t *testing.T, ns, name, status, reason string) string {
	t.Helper()
	var msg string
	eventually(t, name+" Ready="+status+" "+reason, func() error {
		c, ok := readyCondition(getWidget(t, ns, name))
		if !ok || c["status"] != status || c["reason"] != reason {
			return fmt.Errorf("Ready %v", c)
		}
		msg, _ = c["message"].(string)
		return nil
	})
	return msg
}

// preReconcile's gate (here upstream's older form: when: directly under
// preReconcile, a structured condition) skips the reconcile while it does
// not hold, and the Ready condition and an event say so. Upstream:
// pkg/katalog/pre_reconcile.go, examples/intermediate/05-when-conditions/
// conditional-reconciliation.
func TestPreReconcileGateSkips(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
preReconcile:
  when:
    - field: "{{ .spec.enabled }}"
      equals: "true"
onReconcile:
  configMaps:
    - name: settings
      data: {a: b}
`))
	create(t, widget(h.ns, "shop", map[string]any{"enabled": false}))
	msg := readyIs(t, h.ns, "shop", "False", ReasonGated)
	if !strings.HasPrefix(msg, "not reconciled: the preReconcile gate ") || !strings.Contains(msg, ".spec.enabled") || !strings.HasSuffix(msg, " does not hold") {
		t.Errorf("message %q", msg)
	}
	eventWith(t, h.ns, ReasonGated, "not reconciled")
	h.idle("widget")
	if err := absent(h.ns, "settings", &corev1.ConfigMap{}); err != nil {
		t.Fatalf("a gated resource got its children: %v", err)
	}
	updateWidget(t, h.ns, "shop", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, true, "spec", "enabled")
	})
	converged(t, h.ns, "shop")
	mustGet(t, h.ns, "settings", &corev1.ConfigMap{})
}

// dependsOn holds a dependent entry's reconciles until the entry it depends
// on is healthy (its last reconcile did not fail); its Ready condition says
// on what it waits. Upstream: pkg/types/types_dependson.go,
// pkg/katalog/docs/02-dependencies.md, examples/advanced/13-dependencies.
func TestDependsOnHoldsTheDependentUntilHealthy(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"widget.yaml", "gadget.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", "crds", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "katalog.yaml")
	if err := os.WriteFile(file, []byte(`apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: deps}
spec:
  crds:
    database:
      crdFile: ./gadget.yaml
      operatorBox:
        onReconcile:
          configMaps:
            - name: "${self.metadata.name}-db"
              data: {share: "${string(100 / int(self.spec.divisor))}"}
    app:
      crdFile: ./widget.yaml
      dependsOn:
        database: healthy
      operatorBox:
        onReconcile:
          configMaps:
            - name: "${self.metadata.name}-app"
              data: {a: b}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := loadPlan(t, file)
	if deps := plan.Entry("app").DependsOn; len(deps) != 1 || deps[0].Name != "database" {
		t.Fatalf("dependsOn = %v", deps)
	}
	h := startOperator(t, plan)
	db := gadget(h.ns, "primary")
	db.Object["spec"] = map[string]any{"divisor": int64(0)}
	create(t, db)
	// The database's reconciles fail (division by zero): not healthy.
	eventually(t, "the database entry to fail", func() error {
		if h.controller("database").consecutiveFailures.Load() == 0 {
			return fmt.Errorf("no failure yet")
		}
		return nil
	})
	create(t, widget(h.ns, "shop", map[string]any{}))
	msg := readyIs(t, h.ns, "shop", "False", ReasonWaiting)
	if !strings.HasPrefix(msg, "waiting for entry database to be healthy (its last ") {
		t.Errorf("message %q", msg)
	}
	eventWith(t, h.ns, ReasonWaiting, "waiting for entry database to be healthy")
	if err := absent(h.ns, "shop-app", &corev1.ConfigMap{}); err != nil {
		t.Fatal(err)
	}
	// The database heals: the dependent goes ahead.
	eventually(t, "fixing the database", func() error {
		u := gadget(h.ns, "primary")
		if err := get(h.ns, "primary", u); err != nil {
			return err
		}
		u.Object["spec"] = map[string]any{"divisor": int64(4)}
		return k8s.Update(t.Context(), u)
	})
	converged(t, h.ns, "shop")
	mustGet(t, h.ns, "shop-app", &corev1.ConfigMap{})
	var cm corev1.ConfigMap
	mustGet(t, h.ns, "primary-db", &cm)
	if cm.Data["share"] != "25" {
		t.Errorf("database child %v", cm.Data)
	}
}

// A gate that stops holding leaves what the custom resource already has as
// it is, as upstream's kordinator (pkg/runtime/kordinator/worker.go: the
// item is forgotten, the reconciler never called; its
// conditional-reconciliation README: "The gate does not clean up"): the
// children are neither deleted nor updated, and the entry reports itself
// gated (/katalog/{entry}/health) until a reconcile runs again.
func TestPreReconcileGateLeavesChildren(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
preReconcile:
  reconcileGate:
    when:
      - "self.spec.enabled"
onCreate:
  configMaps:
    - name: "${self.metadata.name}-cfg"
      data: {channel: "${self.spec.channel}"}
      reconcile: true
`))
	create(t, widget(h.ns, "shop", map[string]any{"enabled": true, "channel": "stable"}))
	converged(t, h.ns, "shop")
	h.idle("widget")
	channel := func() string {
		var cm corev1.ConfigMap
		mustGet(t, h.ns, "shop-cfg", &cm)
		return cm.Data["channel"]
	}
	if got := channel(); got != "stable" {
		t.Fatalf("channel %q", got)
	}
	if st := h.controller("widget").status(); st.Gated || st.TotalReconciles == 0 {
		t.Fatalf("before the gate: %+v", st)
	}

	// Disabled, and changed: not reconciled, the child stays as it was.
	updateWidget(t, h.ns, "shop", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, false, "spec", "enabled")
		_ = unstructured.SetNestedField(u.Object, "beta", "spec", "channel")
	})
	readyIs(t, h.ns, "shop", "False", ReasonGated)
	h.idle("widget")
	if got := channel(); got != "stable" {
		t.Errorf("a gated reconcile updated the child: channel %q", got)
	}
	st := h.controller("widget").status()
	if !st.Gated || !strings.Contains(st.GatedReason, "self.spec.enabled") {
		t.Errorf("the entry does not report the gate: %+v", st)
	}

	// Enabled again: reconciled, the child follows, the gate is cleared.
	updateWidget(t, h.ns, "shop", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, true, "spec", "enabled")
	})
	converged(t, h.ns, "shop")
	eventually(t, "the child to follow", func() error {
		if got := channel(); got != "beta" {
			return fmt.Errorf("channel %q", got)
		}
		return nil
	})
	if st := h.controller("widget").status(); st.Gated || st.GatedReason != "" {
		t.Errorf("the gate is still reported after a reconcile: %+v", st)
	}
}

// The enqueue gate keeps a custom resource out of the work queue: nothing
// is reconciled, its status and children stay as they are (upstream:
// pkg/runtime/informer/enqueue.go drops the event).
func TestEnqueueGateLeavesEverything(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
preReconcile:
  enqueueGate:
    when:
      - "self.spec.enabled"
onReconcile:
  configMaps:
    - name: "${self.metadata.name}-cfg"
      data: {channel: "${self.spec.channel}"}
`))
	create(t, widget(h.ns, "shop", map[string]any{"enabled": true, "channel": "stable"}))
	converged(t, h.ns, "shop")
	h.idle("widget")
	before := h.controller("widget").status().TotalReconciles
	updateWidget(t, h.ns, "shop", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, false, "spec", "enabled")
		_ = unstructured.SetNestedField(u.Object, "beta", "spec", "channel")
	})
	h.idle("widget")
	var cm corev1.ConfigMap
	mustGet(t, h.ns, "shop-cfg", &cm)
	if cm.Data["channel"] != "stable" {
		t.Errorf("the child was updated: %v", cm.Data)
	}
	c, _ := readyCondition(getWidget(t, h.ns, "shop"))
	if c["status"] != "True" || c["reason"] != ReasonSucceeded {
		t.Errorf("the status was touched: Ready %v", c)
	}
	if st := h.controller("widget").status(); st.TotalReconciles != before || st.Gated {
		t.Errorf("an enqueue-gated resource was reconciled: %+v (before: %d reconciles)", st, before)
	}
	// A child's deletion enqueues its owner through the child watch: the
	// gate still keeps it from being reconciled (the child stays gone).
	if err := k8s.Delete(t.Context(), &cm); err != nil {
		t.Fatal(err)
	}
	h.idle("widget")
	if err := absent(h.ns, "shop-cfg", &corev1.ConfigMap{}); err != nil {
		t.Errorf("an enqueue-gated resource got its child back: %v", err)
	}
	if st := h.controller("widget").status(); st.TotalReconciles != before {
		t.Errorf("an enqueue-gated resource was reconciled after its child's deletion: %d reconciles, %d before", st.TotalReconciles, before)
	}
}

package operator

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// holdFinalizer is the test's own finalizer on children: it keeps a child
// being deleted in place until the test lets it go, so the order the
// operator deletes in can be observed.
const holdFinalizer = "test.orkestra.io/hold"

// orderedPlan: db (wave 0) ← app (wave 1) ← front (wave 2).
const orderedPlan = `
onReconcile:
  configMaps:
    - id: db
      name: "${self.metadata.name}-db"
      data: {a: b}
    - id: app
      name: "${self.metadata.name}-app"
      data: {db: "${self.metadata.name}-db"}
      dependsOn: [db]
    - name: "${self.metadata.name}-front"
      data: {app: "${self.metadata.name}-app"}
      dependsOn: [app]
`

// deleting returns which of the named ConfigMaps are being deleted, and
// which are gone.
func deleting(t *testing.T, ns string, names ...string) (marked, gone []string) {
	t.Helper()
	for _, n := range names {
		var cm corev1.ConfigMap
		switch err := get(ns, n, &cm); {
		case apierrors.IsNotFound(err):
			gone = append(gone, n)
		case err != nil:
			t.Fatal(err)
		case cm.DeletionTimestamp != nil:
			marked = append(marked, n)
		}
	}
	return marked, gone
}

// release removes the test's finalizer from a ConfigMap.
func release(t *testing.T, ns, name string) {
	t.Helper()
	eventually(t, "releasing "+name, func() error {
		var cm corev1.ConfigMap
		if err := get(ns, name, &cm); err != nil {
			return err
		}
		cm.Finalizers = slices.DeleteFunc(cm.Finalizers, func(f string) bool { return f == holdFinalizer })
		return k8s.Update(t.Context(), &cm)
	})
}

// holdChildren puts the test's finalizer on the named ConfigMaps.
func holdChildren(t *testing.T, ns string, names ...string) {
	t.Helper()
	for _, n := range names {
		eventually(t, "holding "+n, func() error {
			var cm corev1.ConfigMap
			if err := get(ns, n, &cm); err != nil {
				return err
			}
			cm.Finalizers = append(cm.Finalizers, holdFinalizer)
			return k8s.Update(t.Context(), &cm)
		})
	}
}

// Deleting a custom resource whose children depend on one another deletes
// them in the reverse of the order they were made in — dependents first —
// each wave waited for until it is gone, with an event per wave; then the
// finalizer goes. kro: website/docs/docs/advanced/06-instance-deletion.md.
func TestDeletionInReverseOrder(t *testing.T) {
	h := startOperator(t, widgetPlan(t, orderedPlan))
	h.clock.set(time.Now()) // the bound of a wave counts from its deletionTimestamp
	create(t, widget(h.ns, "shop", map[string]any{"image": "x"}))
	readyAs(t, h.ns, "shop", "True", ReasonSucceeded, "3 children applied")
	if fins := getWidget(t, h.ns, "shop").GetFinalizers(); !slices.Contains(fins, Finalizer) {
		t.Fatalf("finalizers %v: ordered deletion needs the runtime's", fins)
	}
	names := []string{"shop-db", "shop-app", "shop-front"}
	holdChildren(t, h.ns, names...)
	if err := k8s.Delete(t.Context(), widget(h.ns, "shop", nil)); err != nil {
		t.Fatal(err)
	}

	// One wave at a time, dependents first: what is marked for deletion
	// is exactly the wave, and the next starts once it is gone.
	var order []string
	for i, want := range []string{"shop-front", "shop-app", "shop-db"} {
		eventually(t, want+" to be deleted", func() error {
			marked, _ := deleting(t, h.ns, names...)
			if !slices.Equal(marked, []string{want}) {
				return fmt.Errorf("being deleted: %v", marked)
			}
			return nil
		})
		eventWith(t, h.ns, ReasonDeletingChildren, fmt.Sprintf("deleting wave %d of 3 (dependents first): ConfigMap %s/%s", i+1, h.ns, want))
		never(t, 500*time.Millisecond, "the next wave to wait", func() error {
			if marked, _ := deleting(t, h.ns, names...); !slices.Equal(marked, []string{want}) {
				return fmt.Errorf("being deleted: %v", marked)
			}
			return nil
		})
		order = append(order, want)
		release(t, h.ns, want)
	}
	eventually(t, "the custom resource to be gone", func() error { return absent(h.ns, "shop", widget(h.ns, "shop", nil)) })
	eventWith(t, h.ns, "Finalized", "children deleted in reverse order")
	if !slices.Equal(order, []string{"shop-front", "shop-app", "shop-db"}) {
		t.Errorf("order %v", order)
	}
}

// A wave that is not gone within the bound (its objects' own finalizers
// hold them) is reported and the deletion goes on.
func TestDeletionWaveBound(t *testing.T) {
	h := startOperator(t, widgetPlan(t, orderedPlan))
	h.clock.set(time.Now())
	create(t, widget(h.ns, "shop", map[string]any{"image": "x"}))
	readyAs(t, h.ns, "shop", "True", ReasonSucceeded, "3 children applied")
	holdChildren(t, h.ns, "shop-front")
	if err := k8s.Delete(t.Context(), widget(h.ns, "shop", nil)); err != nil {
		t.Fatal(err)
	}
	eventWith(t, h.ns, ReasonDeletingChildren, "deleting wave 1 of 3")
	never(t, time.Second, "the next wave to wait within the bound", func() error {
		if marked, gone := deleting(t, h.ns, "shop-app", "shop-db"); len(marked)+len(gone) > 0 {
			return fmt.Errorf("being deleted %v, gone %v", marked, gone)
		}
		return nil
	})
	h.clock.advance(defaultDeletionWaveBound + time.Minute)
	eventWith(t, h.ns, ReasonDeletionTimedOut, "wave 1 of 3 (dependents first) is still being deleted after 5m0s (ConfigMap "+h.ns+"/shop-front)")
	eventually(t, "the other waves to be gone", func() error {
		if _, gone := deleting(t, h.ns, "shop-app", "shop-db"); len(gone) != 2 {
			return fmt.Errorf("gone: %v", gone)
		}
		return nil
	})
	eventually(t, "the custom resource to be gone", func() error { return absent(h.ns, "shop", widget(h.ns, "shop", nil)) })
	release(t, h.ns, "shop-front")
}

// Without dependsOn between children nothing changes: no finalizer is put
// on the custom resource for them (the garbage collector deletes them).
func TestNoOrderNoFinalizer(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
onReconcile:
  configMaps:
    - id: db
      name: "${self.metadata.name}-db"
      data: {a: b}
`))
	create(t, widget(h.ns, "shop", map[string]any{"image": "x"}))
	readyAs(t, h.ns, "shop", "True", ReasonSucceeded, "1 children applied")
	if fins := getWidget(t, h.ns, "shop").GetFinalizers(); len(fins) != 0 {
		t.Errorf("finalizers %v", fins)
	}
}

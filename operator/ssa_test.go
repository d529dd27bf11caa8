package operator

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Children are written with server-side apply as upstream's runtime writes
// them (orkspace/orkestra pkg/resources/*: ApplyPatchType, FieldManager,
// Force defaulting to true in shared.ResolveForceConflict).

const ssaBox = `
onCreate:
  services:
    - name: "${self.metadata.name}-svc"
      port: 80
onReconcile:
  deployments:
    - name: "${self.metadata.name}"
      image: "${self.spec.image}"
      replicas: "${self.spec.replicas}"
      env:
        - name: MODE
          value: "${self.spec.message}"
  configMaps:
    - name: "${self.metadata.name}-config"
      data:
        message: "${self.spec.message}"
  custom:
    - apiVersion: test.orkestra.io/v1
      kind: Gadget
      name: "${self.metadata.name}-gadget"
      spec:
        size: "${self.spec.replicas}"
`

// managerOf returns the managedFields entry of manager with operation op.
func managerOf(obj metav1.Object, manager string, op metav1.ManagedFieldsOperationType) (metav1.ManagedFieldsEntry, bool) {
	for _, m := range obj.GetManagedFields() {
		if m.Manager == manager && m.Operation == op {
			return m, true
		}
	}
	return metav1.ManagedFieldsEntry{}, false
}

// owns reports whether the entry's field set holds every path element of
// path (e.g. `f:spec`, `f:replicas`).
func owns(m metav1.ManagedFieldsEntry, path ...string) bool {
	if m.FieldsV1 == nil {
		return false
	}
	raw := string(m.FieldsV1.Raw)
	for _, p := range path {
		if !strings.Contains(raw, `"`+p+`"`) {
			return false
		}
	}
	return true
}

// TestChildrenAreAppliedByOrkestra: every child, onCreate and drift-corrected,
// built-in and custom, is created with an apply of field manager orkestra —
// no create call, no update.
func TestChildrenAreAppliedByOrkestra(t *testing.T) {
	h := startOperator(t, widgetPlan(t, ssaBox))
	create(t, widget(h.ns, "app", map[string]any{"image": "nginx:1", "replicas": int64(2), "message": "one"}))
	converged(t, h.ns, "app")
	h.idle("widget")
	for _, w := range h.client.takeWrites() {
		if strings.HasPrefix(w, "create ") || strings.HasPrefix(w, "update ") {
			t.Errorf("a child was written with %q: children are applied", w)
		}
	}
	cases := []struct {
		name  string
		obj   client.Object
		owned []string
	}{
		{"app", &appsv1.Deployment{}, []string{"f:spec", "f:replicas", "f:template", "f:image", "f:env"}},
		{"app-config", &corev1.ConfigMap{}, []string{"f:data", "f:message"}},
		{"app-svc", &corev1.Service{}, []string{"f:spec", "f:ports"}},
		{"app-gadget", gadget(h.ns, "app-gadget"), []string{"f:spec", "f:size"}},
	}
	for _, tc := range cases {
		mustGet(t, h.ns, tc.name, tc.obj)
		m, ok := managerOf(tc.obj, FieldManager, metav1.ManagedFieldsOperationApply)
		if !ok {
			t.Errorf("%s: no managedFields entry of %s (Apply): %+v", tc.name, FieldManager, tc.obj.GetManagedFields())
			continue
		}
		if want := append([]string{"f:metadata", "f:labels", "f:" + "orkestra-owner", "f:ownerReferences"}, tc.owned...); !owns(m, want...) {
			t.Errorf("%s: %s owns %s, want %v among them", tc.name, FieldManager, m.FieldsV1.Raw, want)
		}
		if _, ok := managerOf(tc.obj, FieldManager, metav1.ManagedFieldsOperationUpdate); ok {
			t.Errorf("%s: %s also wrote it with an update: %+v", tc.name, FieldManager, tc.obj.GetManagedFields())
		}
	}
}

// TestOtherManagersFieldsSurviveDriftCorrection: a field another manager
// sets (server-side apply of its own, or an update) is kept when the drift
// of a declared field is corrected, and stays that manager's; the correction
// is one apply.
func TestOtherManagersFieldsSurviveDriftCorrection(t *testing.T) {
	h := startOperator(t, widgetPlan(t, ssaBox))
	create(t, widget(h.ns, "app", map[string]any{"image": "nginx:1", "replicas": int64(2), "message": "one"}))
	converged(t, h.ns, "app")
	h.idle("widget")
	h.client.takeWrites()

	// Another controller applies fields of its own.
	theirs := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "app", "namespace": h.ns, "annotations": map[string]any{"team.example.io/owner": "web"}},
		"spec":     map[string]any{"revisionHistoryLimit": int64(3)},
	}}
	if err := k8s.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(theirs), client.FieldOwner("someone-else")); err != nil {
		t.Fatal(err)
	}
	h.idle("widget")
	if w := h.client.takeWrites(); len(w) != 0 {
		t.Errorf("another manager's fields made Orkestra write: %v", w)
	}
	// Someone edits a declared field.
	eventually(t, "editing the image", func() error {
		var d appsv1.Deployment
		if err := get(h.ns, "app", &d); err != nil {
			return err
		}
		d.Spec.Template.Spec.Containers[0].Image = "evil:latest"
		return k8s.Update(context.Background(), &d)
	})
	eventually(t, "the image to be put back", func() error {
		var d appsv1.Deployment
		if err := get(h.ns, "app", &d); err != nil {
			return err
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; img != "nginx:1" {
			return fmt.Errorf("image %s", img)
		}
		return nil
	})
	h.idle("widget")
	var d appsv1.Deployment
	mustGet(t, h.ns, "app", &d)
	if d.Spec.RevisionHistoryLimit == nil || *d.Spec.RevisionHistoryLimit != 3 || d.Annotations["team.example.io/owner"] != "web" {
		t.Errorf("another manager's fields were lost: revisionHistoryLimit %v annotations %v", d.Spec.RevisionHistoryLimit, d.Annotations)
	}
	if m, ok := managerOf(&d, "someone-else", metav1.ManagedFieldsOperationApply); !ok || !owns(m, "f:revisionHistoryLimit", "f:team.example.io/owner") {
		t.Errorf("someone-else no longer owns its fields: %+v", d.GetManagedFields())
	}
	if m, ok := managerOf(&d, FieldManager, metav1.ManagedFieldsOperationApply); !ok || !owns(m, "f:image") || owns(m, "f:revisionHistoryLimit") {
		t.Errorf("%s should own the image and not the other manager's field: %+v", FieldManager, d.GetManagedFields())
	}
	var applies int
	for _, w := range h.client.takeWrites() {
		switch {
		case w == "apply Deployment app":
			applies++
		default:
			t.Errorf("the correction wrote %q; want one apply of the Deployment", w)
		}
	}
	if applies != 1 {
		t.Errorf("%d applies of the Deployment, want 1", applies)
	}
}

// TestItemsOthersAddToComparedListsAreRemoved: an env var someone else adds
// to the container makes the env list differ from the declared one; an
// apply keeps another manager's item, so the corrected object is written
// with an update, once — no write loop.
func TestItemsOthersAddToComparedListsAreRemoved(t *testing.T) {
	h := startOperator(t, widgetPlan(t, ssaBox))
	create(t, widget(h.ns, "app", map[string]any{"image": "nginx:1", "replicas": int64(2), "message": "one"}))
	converged(t, h.ns, "app")
	h.idle("widget")
	h.client.takeWrites()
	eventually(t, "adding an env var", func() error {
		var d appsv1.Deployment
		if err := get(h.ns, "app", &d); err != nil {
			return err
		}
		c := &d.Spec.Template.Spec.Containers[0]
		c.Env = append(c.Env, corev1.EnvVar{Name: "EXTRA", Value: "x"})
		return k8s.Update(context.Background(), &d)
	})
	eventually(t, "the env var to be removed", func() error {
		var d appsv1.Deployment
		if err := get(h.ns, "app", &d); err != nil {
			return err
		}
		if env := d.Spec.Template.Spec.Containers[0].Env; len(env) != 1 || env[0].Name != "MODE" {
			return fmt.Errorf("env %v", env)
		}
		return nil
	})
	h.idle("widget")
	writes := h.client.takeWrites()
	if len(writes) != 2 || writes[0] != "apply Deployment app" || !strings.HasPrefix(writes[1], "update ") || !strings.HasSuffix(writes[1], " app") {
		t.Errorf("writes %v, want the apply and one update of the Deployment", writes)
	}
	never(t, time.Second, "no write once corrected", func() error {
		if w := h.client.takeWrites(); len(w) > 0 {
			return fmt.Errorf("writes: %v", w)
		}
		return nil
	})
}

package operator

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// cfgImage reads the image key of a ConfigMap ("" and an error when it
// cannot be read).
func cfgImage(ns, name string) (string, error) {
	var cm corev1.ConfigMap
	if err := get(ns, name, &cm); err != nil {
		return "", err
	}
	return cm.Data["image"], nil
}

// suspend sets or removes the suspend annotation of a widget.
func suspend(t *testing.T, ns, name string, on bool) {
	t.Helper()
	updateWidget(t, ns, name, func(u *unstructured.Unstructured) {
		a := u.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		if on {
			a[AnnotationSuspend] = "true"
		} else {
			delete(a, AnnotationSuspend)
		}
		u.SetAnnotations(a)
	})
}

// The suspend annotation (kro's `kro.run/reconcile: suspended`) stops every
// write for the custom resource but its status: no child is made, none is
// corrected or made again when deleted; the Ready condition says so.
// Removing the annotation resumes at once.
func TestSuspendStopsWrites(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
onReconcile:
  configMaps:
    - name: "${self.metadata.name}-cfg"
      data: {image: "${self.spec.image}"}
`))
	w := widget(h.ns, "shop", map[string]any{"image": "a"})
	w.SetAnnotations(map[string]string{AnnotationSuspend: "true"})
	create(t, w)
	msg := readyAs(t, h.ns, "shop", "False", ReasonSuspended, "reconciling is suspended by the annotation "+AnnotationSuspend)
	if !strings.Contains(msg, "remove the annotation to resume") {
		t.Errorf("message %q does not say how to resume", msg)
	}
	never(t, time.Second, "no child while suspended", func() error { return absent(h.ns, "shop-cfg", &corev1.ConfigMap{}) })

	suspend(t, h.ns, "shop", false)
	readyAs(t, h.ns, "shop", "True", ReasonSucceeded, "1 children applied")
	if img, err := cfgImage(h.ns, "shop-cfg"); err != nil || img != "a" {
		t.Fatalf("image %q (%v)", img, err)
	}

	// Suspended again: a spec change and a child deleted by hand are left
	// as they are, and the only write is the custom resource's status.
	suspend(t, h.ns, "shop", true)
	readyAs(t, h.ns, "shop", "False", ReasonSuspended, "suspended")
	h.idle("widget")
	h.client.takeWrites()
	updateWidget(t, h.ns, "shop", func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, "b", "spec", "image") })
	never(t, time.Second, "the child to keep its image", func() error {
		if img, err := cfgImage(h.ns, "shop-cfg"); err != nil || img != "a" {
			return fmt.Errorf("image %q (%v)", img, err)
		}
		return nil
	})
	var cm corev1.ConfigMap
	mustGet(t, h.ns, "shop-cfg", &cm)
	if err := k8s.Delete(t.Context(), &cm); err != nil {
		t.Fatal(err)
	}
	never(t, time.Second, "the deleted child to stay deleted", func() error { return absent(h.ns, "shop-cfg", &corev1.ConfigMap{}) })
	h.idle("widget")
	for _, w := range h.client.takeWrites() {
		if !strings.HasPrefix(w, "status-") {
			t.Errorf("write while suspended: %s", w)
		}
	}

	suspend(t, h.ns, "shop", false)
	eventually(t, "the child made again with the new image", func() error {
		if img, err := cfgImage(h.ns, "shop-cfg"); err != nil || img != "b" {
			return fmt.Errorf("image %q (%v)", img, err)
		}
		return nil
	})
	readyAs(t, h.ns, "shop", "True", ReasonSucceeded, "1 children applied")
}

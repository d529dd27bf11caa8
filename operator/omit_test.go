package operator

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// omit() leaves a field out of the child: absent, never re-added by drift
// correction; a field left out (the replicas an autoscaler owns) is not
// fought over when someone else changes it. kro: docs
// concepts/rgd/04-cel-libraries.md ("Omit").
func TestOmitLeavesFieldOut(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
onReconcile:
  deployments:
    - name: "${self.metadata.name}"
      image: "${self.spec.image}"
      replicas: "${self.spec.autoscale ? omit() : self.spec.replicas}"
  configMaps:
    - name: "${self.metadata.name}-cfg"
      data:
        image: "${self.spec.image}"
        replicas: "${self.spec.autoscale ? omit() : string(self.spec.replicas)}"
`))
	create(t, widget(h.ns, "shop", map[string]any{"image": "nginx:1", "replicas": int64(3), "autoscale": true}))
	converged(t, h.ns, "shop")
	cfgData := func() (map[string]string, error) {
		var cm corev1.ConfigMap
		if err := get(h.ns, "shop-cfg", &cm); err != nil {
			return nil, err
		}
		return cm.Data, nil
	}
	if d, err := cfgData(); err != nil || len(d) != 1 || d["image"] != "nginx:1" {
		t.Fatalf("data %v (%v): replicas should be left out", d, err)
	}

	// An autoscaler scales the Deployment: its replicas are not put back.
	eventually(t, "scaling the Deployment as an autoscaler would", func() error {
		var d appsv1.Deployment
		if err := get(h.ns, "shop", &d); err != nil {
			return err
		}
		four := int32(4)
		d.Spec.Replicas = &four
		return k8s.Update(t.Context(), &d, client.FieldOwner("autoscaler"))
	})
	// Another reconcile (a change elsewhere in the spec) writes the image…
	updateWidget(t, h.ns, "shop", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "nginx:2", "spec", "image")
	})
	eventually(t, "the image to be corrected", func() error {
		var d appsv1.Deployment
		if err := get(h.ns, "shop", &d); err != nil {
			return err
		}
		if d.Spec.Template.Spec.Containers[0].Image != "nginx:2" {
			return fmt.Errorf("image %s", d.Spec.Template.Spec.Containers[0].Image)
		}
		if *d.Spec.Replicas != 4 {
			return fmt.Errorf("replicas %d: the omitted field was fought over", *d.Spec.Replicas)
		}
		return nil
	})
	// … and never re-adds the omitted key.
	converged(t, h.ns, "shop")
	h.idle("widget")
	if d, err := cfgData(); err != nil || len(d) != 1 || d["image"] != "nginx:2" {
		t.Errorf("data %v (%v): the omitted key came back", d, err)
	}

	// Not omitted any more: written; omitted again: removed from the
	// exactly-compared data, and the Deployment's replicas stay the
	// autoscaler's.
	updateWidget(t, h.ns, "shop", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, false, "spec", "autoscale")
	})
	eventually(t, "replicas written", func() error {
		d, err := cfgData()
		if err != nil || d["replicas"] != "3" {
			return fmt.Errorf("data %v (%v)", d, err)
		}
		return nil
	})
}

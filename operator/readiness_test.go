package operator

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// readyAs waits for the widget's Ready condition to have status and
// reason, and a message containing msg; it returns the message.
func readyAs(t *testing.T, ns, name, status, reason, msg string) string {
	t.Helper()
	var got string
	eventually(t, fmt.Sprintf("%s Ready=%s (%s)", name, status, reason), func() error {
		u := widget(ns, name, nil)
		if err := get(ns, name, u); err != nil {
			return err
		}
		c, ok := readyCondition(u)
		if !ok {
			return fmt.Errorf("no Ready condition")
		}
		got, _ = c["message"].(string)
		if c["status"] != status || c["reason"] != reason || !strings.Contains(got, msg) {
			return fmt.Errorf("Ready=%v (%v: %v)", c["status"], c["reason"], got)
		}
		return nil
	})
	return got
}

// setDeploymentStatus writes a Deployment's status as its controller would.
func setDeploymentStatus(t *testing.T, ns, name string, ready int32) {
	t.Helper()
	eventually(t, "writing the status of "+name, func() error {
		var d appsv1.Deployment
		if err := get(ns, name, &d); err != nil {
			return err
		}
		d.Status.Replicas, d.Status.ReadyReplicas, d.Status.AvailableReplicas = ready, ready, ready
		return k8s.Status().Update(t.Context(), &d)
	})
}

// Ready waits on a Deployment's readyWhen (typed by the Deployment's
// schema), and a child that depends on it is made only once it is ready;
// a child without readyWhen is ready once it exists. When the Deployment
// stops being ready, Ready goes False naming it, and its dependent is left
// as it is. kro: website/docs/docs/concepts/rgd/02-resource-definitions/
// 03-readiness.md.
func TestReadyWaitsOnReadyWhen(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
onReconcile:
  deployments:
    - id: db
      name: "${self.metadata.name}-db"
      image: postgres
      readyWhen: "self.status.?readyReplicas.orValue(0) >= 1"
  configMaps:
    - id: app
      name: "${self.metadata.name}-app"
      data: {db: "${self.metadata.name}-db"}
      dependsOn: [db]
    - name: "${self.metadata.name}-plain"
      data: {a: b}
`))
	create(t, widget(h.ns, "shop", map[string]any{"image": "x"}))
	msg := readyAs(t, h.ns, "shop", "False", ReasonWaiting, "ConfigMap "+h.ns+"/shop-app waits for db to be ready (Deployment "+h.ns+"/shop-db)")
	if !strings.Contains(msg, "Deployment "+h.ns+"/shop-db: readyWhen `self.status.?readyReplicas.orValue(0) >= 1` does not hold") {
		t.Errorf("Ready message %q does not name the Deployment that is not ready", msg)
	}
	var plain corev1.ConfigMap
	mustGet(t, h.ns, "shop-plain", &plain)
	never(t, time.Second, "the dependent ConfigMap to wait", func() error { return absent(h.ns, "shop-app", &corev1.ConfigMap{}) })

	setDeploymentStatus(t, h.ns, "shop-db", 1)
	readyAs(t, h.ns, "shop", "True", ReasonSucceeded, "3 children applied")
	var app corev1.ConfigMap
	mustGet(t, h.ns, "shop-app", &app)

	setDeploymentStatus(t, h.ns, "shop-db", 0)
	readyAs(t, h.ns, "shop", "False", ReasonWaiting, "Deployment "+h.ns+"/shop-db: readyWhen")
	var still corev1.ConfigMap
	mustGet(t, h.ns, "shop-app", &still)
	if still.UID != app.UID {
		t.Error("the dependent was recreated while it waited")
	}
}

// forEach children are ready per item: the Ready condition names each
// item's child that is not.
func TestReadyWhenPerItem(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
onReconcile:
  deployments:
    - name: "${self.metadata.name}-${each.name}"
      image: nginx
      replicas: "${each.replicas}"
      forEach: {field: spec.regions}
      readyWhen: "self.status.?readyReplicas.orValue(0) == each.replicas"
`))
	create(t, widget(h.ns, "shop", map[string]any{"regions": regions("eu", "us")}))
	msg := readyAs(t, h.ns, "shop", "False", ReasonNotReady, "2 of the children not ready")
	for _, d := range []string{"shop-eu", "shop-us"} {
		if !strings.Contains(msg, "Deployment "+h.ns+"/"+d+": readyWhen") {
			t.Errorf("message %q does not name %s", msg, d)
		}
	}
	setDeploymentStatus(t, h.ns, "shop-eu", 1)
	msg = readyAs(t, h.ns, "shop", "False", ReasonNotReady, "1 of the children not ready")
	if strings.Contains(msg, "/shop-eu:") {
		t.Errorf("message %q names the ready child", msg)
	}
	setDeploymentStatus(t, h.ns, "shop-us", 1)
	readyAs(t, h.ns, "shop", "False", ReasonNotReady, "Deployment "+h.ns+"/shop-us: readyWhen") // wants 2
	setDeploymentStatus(t, h.ns, "shop-us", 2)
	readyAs(t, h.ns, "shop", "True", ReasonSucceeded, "2 children applied")
	updateWidget(t, h.ns, "shop", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedSlice(u.Object, regions("eu", "us", "ap"), "spec", "regions")
	})
	readyAs(t, h.ns, "shop", "False", ReasonNotReady, "Deployment "+h.ns+"/shop-ap: ")
}

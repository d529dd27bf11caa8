package operator

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

const driftBox = `
onCreate:
  configMaps:
    - name: "${self.metadata.name}-seed"
      data:
        value: "${self.spec.message}"
  jobs:
    - name: "${self.metadata.name}-job"
      image: "${self.spec.image}"
onReconcile:
  deployments:
    - name: "${self.metadata.name}"
      image: "${self.spec.image}"
      replicas: "${self.spec.replicas}"
      port: 8080
      env:
        - name: MODE
          value: "${self.spec.message}"
      resources:
        requests:
          cpu: 100m
      readinessProbe:
        httpGet:
          path: /ready
          port: 8080
      labels:
        app: "${self.metadata.name}"
  services:
    - name: "${self.metadata.name}-svc"
      port: 80
  configMaps:
    - name: "${self.metadata.name}-config"
      data:
        message: "${self.spec.message}"
  pods:
    - name: "${self.metadata.name}-pod"
      image: "${self.spec.image}"
  custom:
    - apiVersion: test.orkestra.io/v1
      kind: Gadget
      name: "${self.metadata.name}-gadget"
      spec:
        size: "${self.spec.replicas}"
        nested:
          color: blue
`

func driftWidget(ns string) *unstructured.Unstructured {
	return widget(ns, "app", map[string]any{"image": "nginx:1", "replicas": int64(2), "message": "one"})
}

// TestDriftCorrection: managed fields changed behind Orkestra's back are
// put back, unmanaged changes are kept; a changed spec reaches every
// reconciled child; Pods are recreated, Jobs and plain onCreate children are
// never updated.
func TestDriftCorrection(t *testing.T) {
	h := startOperator(t, widgetPlan(t, driftBox))
	create(t, driftWidget(h.ns))
	converged(t, h.ns, "app")
	var pod corev1.Pod
	mustGet(t, h.ns, "app-pod", &pod)
	podUID := pod.UID
	var job batchv1.Job
	mustGet(t, h.ns, "app-job", &job)

	// Someone edits the deployment: managed fields (image, replicas, env,
	// resources, probe, a label) and unmanaged ones (an annotation, a label
	// of their own, minReadySeconds).
	eventually(t, "editing the deployment", func() error {
		var d appsv1.Deployment
		if err := get(h.ns, "app", &d); err != nil {
			return err
		}
		c := &d.Spec.Template.Spec.Containers[0]
		c.Image = "evil:latest"
		c.Env = []corev1.EnvVar{{Name: "MODE", Value: "hacked"}}
		c.Resources.Requests = corev1.ResourceList{}
		c.ReadinessProbe.HTTPGet.Path = "/other"
		d.Spec.Replicas = ptr.To[int32](7)
		d.Spec.MinReadySeconds = 9
		d.Labels["app"] = "changed"
		d.Labels["mine"] = "kept"
		d.Annotations = map[string]string{"note": "kept"}
		return k8s.Update(context.Background(), &d)
	})
	eventually(t, "the deployment's drift to be corrected", func() error {
		var d appsv1.Deployment
		if err := get(h.ns, "app", &d); err != nil {
			return err
		}
		c := d.Spec.Template.Spec.Containers[0]
		switch {
		case c.Image != "nginx:1", *d.Spec.Replicas != 2, len(c.Env) != 1 || c.Env[0].Value != "one",
			c.Resources.Requests.Cpu().String() != "100m", c.ReadinessProbe.HTTPGet.Path != "/ready", d.Labels["app"] != "app":
			return fmt.Errorf("not corrected yet: image %s replicas %d env %v resources %v probe %s labels %v", c.Image, *d.Spec.Replicas, c.Env, c.Resources, c.ReadinessProbe.HTTPGet.Path, d.Labels)
		case d.Spec.MinReadySeconds != 9 || d.Labels["mine"] != "kept" || d.Annotations["note"] != "kept":
			return fmt.Errorf("an unmanaged change was overwritten: minReadySeconds %d labels %v annotations %v", d.Spec.MinReadySeconds, d.Labels, d.Annotations)
		}
		return nil
	})

	// Service, config map and custom child.
	eventually(t, "editing the service, config map and gadget", func() error {
		var svc corev1.Service
		if err := get(h.ns, "app-svc", &svc); err != nil {
			return err
		}
		svc.Spec.Selector = map[string]string{"app": "other"}
		svc.Spec.Ports[0].TargetPort = intstr.FromInt32(9999)
		if err := k8s.Update(context.Background(), &svc); err != nil {
			return err
		}
		var cm corev1.ConfigMap
		if err := get(h.ns, "app-config", &cm); err != nil {
			return err
		}
		cm.Data = map[string]string{"message": "changed", "extra": "x"}
		if err := k8s.Update(context.Background(), &cm); err != nil {
			return err
		}
		g := gadget(h.ns, "app-gadget")
		if err := get(h.ns, "app-gadget", g); err != nil {
			return err
		}
		_ = unstructured.SetNestedField(g.Object, "red", "spec", "nested", "color")
		_ = unstructured.SetNestedField(g.Object, "kept", "spec", "nested", "theirs")
		return k8s.Update(context.Background(), g)
	})
	eventually(t, "the service, config map and gadget to be corrected", func() error {
		var svc corev1.Service
		if err := get(h.ns, "app-svc", &svc); err != nil {
			return err
		}
		if svc.Spec.Selector["app"] != "" || svc.Spec.Ports[0].TargetPort.IntValue() != 8080 {
			return fmt.Errorf("service selector %v ports %v", svc.Spec.Selector, svc.Spec.Ports)
		}
		var cm corev1.ConfigMap
		if err := get(h.ns, "app-config", &cm); err != nil {
			return err
		}
		if len(cm.Data) != 1 || cm.Data["message"] != "one" {
			return fmt.Errorf("config map data %v", cm.Data)
		}
		g := gadget(h.ns, "app-gadget")
		if err := get(h.ns, "app-gadget", g); err != nil {
			return err
		}
		color, _, _ := unstructured.NestedString(g.Object, "spec", "nested", "color")
		theirs, _, _ := unstructured.NestedString(g.Object, "spec", "nested", "theirs")
		if color != "blue" || theirs != "kept" {
			return fmt.Errorf("gadget spec %v", g.Object["spec"])
		}
		return nil
	})

	// A spec change flows to every reconciled child; the Pod is recreated;
	// the Job and the onCreate config map are left alone.
	updateWidget(t, h.ns, "app", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "nginx:2", "spec", "image")
		_ = unstructured.SetNestedField(u.Object, "two", "spec", "message")
	})
	converged(t, h.ns, "app")
	eventually(t, "the new image everywhere", func() error {
		var d appsv1.Deployment
		if err := get(h.ns, "app", &d); err != nil {
			return err
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; img != "nginx:2" {
			return fmt.Errorf("deployment image %s", img)
		}
		var p corev1.Pod
		if err := get(h.ns, "app-pod", &p); err != nil {
			return err
		}
		if p.UID == podUID || p.Spec.Containers[0].Image != "nginx:2" {
			return fmt.Errorf("pod %s image %s (old uid %s)", p.UID, p.Spec.Containers[0].Image, podUID)
		}
		return nil
	})
	var j batchv1.Job
	mustGet(t, h.ns, "app-job", &j)
	if j.UID != job.UID || j.Spec.Template.Spec.Containers[0].Image != "nginx:1" {
		t.Errorf("the Job was touched: uid %s→%s image %s", job.UID, j.UID, j.Spec.Template.Spec.Containers[0].Image)
	}
	var seed corev1.ConfigMap
	mustGet(t, h.ns, "app-seed", &seed)
	if seed.Data["value"] != "one" {
		t.Errorf("the onCreate config map was updated: %v", seed.Data)
	}
}

// TestNoOpReconcileMakesNoWrites: once converged, reconciling again makes
// no write call at all (counted on the reconcilers' client), and reads come
// from the cache (no API request).
func TestNoOpReconcileMakesNoWrites(t *testing.T) {
	h := startOperator(t, widgetPlan(t, allKindsBox))
	create(t, widget(h.ns, "calm", map[string]any{"image": "nginx", "replicas": int64(1), "port": int64(80), "message": "m"}))
	converged(t, h.ns, "calm")
	h.idle("widget")
	h.client.takeWrites()
	never(t, time.Second, "no write while idle", func() error {
		if w := h.client.takeWrites(); len(w) > 0 {
			return fmt.Errorf("writes while idle: %v", w)
		}
		return nil
	})
	before := apiCalls.total()
	for i := 0; i < 5; i++ {
		h.reconcileNow("widget", "calm")
	}
	if w := h.client.takeWrites(); len(w) != 0 {
		t.Errorf("no-op reconciles wrote %d times: %v", len(w), w)
	}
	if n := apiCalls.total() - before; n != 0 {
		t.Errorf("no-op reconciles made %d API requests", n)
	}
}

const whenBox = `
onCreate:
  configMaps:
    - name: "${self.metadata.name}-created"
      data: {a: b}
      when: "self.spec.enabled"
onReconcile:
  deployments:
    - name: "${self.metadata.name}"
      image: nginx:stable
      when: "self.spec.channel == 'stable'"
    - name: "${self.metadata.name}"
      image: nginx:canary
      when:
        - field: spec.channel
          equals: canary
  configMaps:
    - name: "${self.metadata.name}-extra"
      data: {a: b}
      when: "self.spec.enabled"
    - name: "not-ours"
      data: {a: b}
      when: "self.spec.channel == 'never'"
`

// TestWhenFalseDeletion: a reconciled child whose condition fails is deleted
// when no passing declaration of the same kind covers its name and it is
// ours; never a same-named object someone else made; never onCreate ones.
func TestWhenFalseDeletion(t *testing.T) {
	h := startOperator(t, widgetPlan(t, whenBox))
	// Someone else's config map with the name a declaration uses.
	create(t, &corev1.ConfigMap{ObjectMeta: objectMeta(h.ns, "not-ours"), Data: map[string]string{"theirs": "yes"}})
	create(t, widget(h.ns, "ph", map[string]any{"channel": "stable", "enabled": true}))
	converged(t, h.ns, "ph")
	var d appsv1.Deployment
	mustGet(t, h.ns, "ph", &d)
	uid := d.UID
	if img := d.Spec.Template.Spec.Containers[0].Image; img != "nginx:stable" {
		t.Fatalf("image %s", img)
	}
	for _, name := range []string{"ph-extra", "ph-created"} {
		mustGet(t, h.ns, name, &corev1.ConfigMap{})
	}

	// stable → canary: the name stays covered; the same object is updated.
	updateWidget(t, h.ns, "ph", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "canary", "spec", "channel")
	})
	converged(t, h.ns, "ph")
	eventually(t, "the canary image", func() error {
		var d appsv1.Deployment
		if err := get(h.ns, "ph", &d); err != nil {
			return err
		}
		if d.UID != uid {
			return fmt.Errorf("the deployment was recreated")
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; img != "nginx:canary" {
			return fmt.Errorf("image %s", img)
		}
		return nil
	})

	// Neither: uncovered, deleted. enabled false: the reconciled config map
	// goes, the onCreate one and the foreign one stay.
	updateWidget(t, h.ns, "ph", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "none", "spec", "channel")
		_ = unstructured.SetNestedField(u.Object, false, "spec", "enabled")
	})
	converged(t, h.ns, "ph")
	eventually(t, "the uncovered deployment to be deleted", func() error { return absent(h.ns, "ph", &appsv1.Deployment{}) })
	eventually(t, "the reconciled config map to be deleted", func() error { return absent(h.ns, "ph-extra", &corev1.ConfigMap{}) })
	var theirs corev1.ConfigMap
	mustGet(t, h.ns, "not-ours", &theirs)
	if theirs.Data["theirs"] != "yes" {
		t.Errorf("someone else's config map changed: %v", theirs.Data)
	}
	mustGet(t, h.ns, "ph-created", &corev1.ConfigMap{})

	// Back to stable: created again.
	updateWidget(t, h.ns, "ph", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "stable", "spec", "channel")
	})
	eventually(t, "the deployment to come back", func() error { return get(h.ns, "ph", &appsv1.Deployment{}) })
}

// TestWhenTrueOnForeignObjectFails: a reconciled declaration whose object
// exists but is not ours fails the reconcile (Ready=False) instead of taking
// it over.
func TestWhenTrueOnForeignObjectFails(t *testing.T) {
	h := startOperator(t, widgetPlan(t, whenBox))
	create(t, &corev1.ConfigMap{ObjectMeta: objectMeta(h.ns, "not-ours"), Data: map[string]string{"theirs": "yes"}})
	create(t, widget(h.ns, "ph", map[string]any{"channel": "never", "enabled": true}))
	eventually(t, "Ready=False naming the foreign object", func() error {
		u := widget(h.ns, "ph", nil)
		if err := get(h.ns, "ph", u); err != nil {
			return err
		}
		c, ok := readyCondition(u)
		if !ok || c["status"] != "False" || c["reason"] != ReasonApplyFailed || !strings.Contains(fmt.Sprint(c["message"]), "not-ours") || !strings.Contains(fmt.Sprint(c["message"]), "not managed by ph") {
			return fmt.Errorf("Ready %v", c)
		}
		return nil
	})
	var theirs corev1.ConfigMap
	mustGet(t, h.ns, "not-ours", &theirs)
	if len(theirs.Data) != 1 || theirs.Labels["orkestra-owner"] != "" {
		t.Errorf("the foreign config map was changed: %v %v", theirs.Data, theirs.Labels)
	}
	if v := metricValue(t, h, MetricReconcileTotal, map[string]string{"crd": "widget", "result": ResultError}); v < 1 {
		t.Errorf("%s{result=error} = %v", MetricReconcileTotal, v)
	}
}

const externalBox = `
onCreate:
  configMaps:
    - name: "${self.metadata.name}-once"
      data: {v: "${self.spec.message}"}
    - name: "${self.metadata.name}-reconciled"
      data: {v: "${self.spec.message}"}
      reconcile: true
onReconcile:
  deployments:
    - name: "${self.metadata.name}"
      image: nginx
  services:
    - name: "${self.metadata.name}"
      port: 80
`

// TestChildDeletedExternallyComesBack: deleting a child (Deployment,
// Service, a reconcile: true config map) brings it back at once — the
// controller owns their kinds; an onCreate child's content is never
// corrected.
func TestChildDeletedExternallyComesBack(t *testing.T) {
	h := startOperator(t, widgetPlan(t, externalBox))
	create(t, widget(h.ns, "ext", map[string]any{"message": "m"}))
	converged(t, h.ns, "ext")
	ctx := context.Background()
	uids := map[string]string{}
	var d appsv1.Deployment
	mustGet(t, h.ns, "ext", &d)
	uids["deployment"] = string(d.UID)
	var s corev1.Service
	mustGet(t, h.ns, "ext", &s)
	uids["service"] = string(s.UID)
	var cm corev1.ConfigMap
	mustGet(t, h.ns, "ext-reconciled", &cm)
	uids["configmap"] = string(cm.UID)

	if err := k8s.Delete(ctx, &d); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(ctx, &s); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(ctx, &cm); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deleted children to come back", func() error {
		var d2 appsv1.Deployment
		var s2 corev1.Service
		var cm2 corev1.ConfigMap
		if err := get(h.ns, "ext", &d2); err != nil {
			return err
		}
		if err := get(h.ns, "ext", &s2); err != nil {
			return err
		}
		if err := get(h.ns, "ext-reconciled", &cm2); err != nil {
			return err
		}
		if string(d2.UID) == uids["deployment"] || string(s2.UID) == uids["service"] || string(cm2.UID) == uids["configmap"] {
			return fmt.Errorf("not recreated yet")
		}
		return nil
	})

	// An onCreate child edited by someone keeps the edit.
	eventually(t, "editing the onCreate config map", func() error {
		var c corev1.ConfigMap
		if err := get(h.ns, "ext-once", &c); err != nil {
			return err
		}
		c.Data["v"] = "edited"
		return k8s.Update(ctx, &c)
	})
	updateWidget(t, h.ns, "ext", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "m2", "spec", "message")
	})
	converged(t, h.ns, "ext")
	eventually(t, "the reconcile: true config map to follow the spec", func() error {
		var c corev1.ConfigMap
		if err := get(h.ns, "ext-reconciled", &c); err != nil {
			return err
		}
		if c.Data["v"] != "m2" {
			return fmt.Errorf("data %v", c.Data)
		}
		return nil
	})
	var once corev1.ConfigMap
	mustGet(t, h.ns, "ext-once", &once)
	if once.Data["v"] != "edited" {
		t.Errorf("the onCreate config map was corrected: %v", once.Data)
	}
}

func objectMeta(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name}
}

// TestOnCreateLeavesForeignObjectAlone: an onCreate child whose name
// someone else's object holds is skipped — not taken over, not failed — and
// later reconciles make no write trying to create it.
func TestOnCreateLeavesForeignObjectAlone(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
onCreate:
  configMaps:
    - name: taken
      data: {ours: "yes"}
`))
	create(t, &corev1.ConfigMap{ObjectMeta: objectMeta(h.ns, "taken"), Data: map[string]string{"theirs": "yes"}})
	create(t, widget(h.ns, "fc", map[string]any{}))
	converged(t, h.ns, "fc")
	h.idle("widget")
	h.client.takeWrites()
	for i := 0; i < 3; i++ {
		h.reconcileNow("widget", "fc")
	}
	if w := h.client.takeWrites(); len(w) != 0 {
		t.Errorf("reconciles wrote %v", w)
	}
	var cm corev1.ConfigMap
	mustGet(t, h.ns, "taken", &cm)
	if len(cm.Data) != 1 || cm.Data["theirs"] != "yes" || len(cm.OwnerReferences) != 0 {
		t.Errorf("the foreign config map changed: %+v", cm)
	}
}

package operator

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/operator/render"
)

const allKindsBox = `
status:
  fields:
    - path: phase
      value: Running
    - path: replicas
      value: "${self.spec.replicas}"
    - path: endpoint
      value: "${self.metadata.name}.${self.metadata.namespace}.svc"
onCreate:
  secrets:
    - name: "${self.metadata.name}-api-key"
      once: true
      data:
        key: "${randomHex(16)}"
  jobs:
    - name: "${self.metadata.name}-migrate"
      image: "${self.spec.image}"
      args: [migrate]
onReconcile:
  deployments:
    - name: "${self.metadata.name}-web"
      image: "${self.spec.image}"
      replicas: "${self.spec.replicas}"
      port: "${self.spec.port}"
      labels:
        app: web
    - name: "${self.metadata.name}-worker"
      image: "${self.spec.image}"
  statefulSets:
    - name: "${self.metadata.name}-db"
      image: postgres:16
      serviceName: "${self.metadata.name}-db"
  services:
    - name: "${self.metadata.name}-web-svc"
      port: 80
  configMaps:
    - name: "${self.metadata.name}-config"
      data:
        message: "${self.spec.message}"
  serviceAccounts:
    - name: "${self.metadata.name}"
  ingresses:
    - serviceName: "${self.metadata.name}-web-svc"
      host: shop.example.com
  persistentVolumeClaims:
    - storage: 1Gi
  cronJobs:
    - schedule: "*/5 * * * *"
      image: busybox
  pods:
    - name: "${self.metadata.name}-debug"
      image: busybox
      command: [sleep, "3600"]
  custom:
    - apiVersion: test.orkestra.io/v1
      kind: Gadget
      name: "${self.metadata.name}-gadget"
      spec:
        size: "${self.spec.replicas}"
`

// TestCreateEveryKind: a new custom resource gets every declared child, each
// owned by it (owner reference and labels), workload selectors unique per
// child, the service selecting its workload, and a typed status with the
// Ready condition.
func TestCreateEveryKind(t *testing.T) {
	h := startOperator(t, widgetPlan(t, allKindsBox))
	cr := widget(h.ns, "shop", map[string]any{"image": "nginx:1.27", "replicas": int64(2), "port": int64(8080), "message": "hi"})
	create(t, cr)
	cr = converged(t, h.ns, "shop")

	children := map[string]client.Object{
		"shop-api-key": &corev1.Secret{},
		"shop-migrate": &batchv1.Job{},
		"shop-web":     &appsv1.Deployment{},
		"shop-worker":  &appsv1.Deployment{},
		"shop-db":      &appsv1.StatefulSet{},
		"shop-web-svc": &corev1.Service{},
		"shop-config":  &corev1.ConfigMap{},
		"shop":         &corev1.ServiceAccount{},
		"shop-ingress": &networkingv1.Ingress{},
		"shop-pvc":     &corev1.PersistentVolumeClaim{},
		"shop-cronjob": &batchv1.CronJob{},
		"shop-debug":   &corev1.Pod{},
		"shop-gadget":  gadget(h.ns, "shop-gadget"),
	}
	for name, obj := range children {
		mustGet(t, h.ns, name, obj)
		refs := obj.GetOwnerReferences()
		if len(refs) != 1 || refs[0].UID != cr.GetUID() || refs[0].Kind != "Widget" || refs[0].Controller == nil || !*refs[0].Controller {
			t.Errorf("%s: owner references %+v", name, refs)
		}
		l := obj.GetLabels()
		if l[render.LabelOwner] != "shop" || l[render.LabelManaged] != "true" {
			t.Errorf("%s: labels %v", name, l)
		}
	}

	web, worker := children["shop-web"].(*appsv1.Deployment), children["shop-worker"].(*appsv1.Deployment)
	if *web.Spec.Replicas != 2 || web.Spec.Template.Spec.Containers[0].Image != "nginx:1.27" || web.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort != 8080 {
		t.Errorf("web deployment spec %+v", web.Spec)
	}
	ws, _ := metav1.LabelSelectorAsSelector(web.Spec.Selector)
	ks, _ := metav1.LabelSelectorAsSelector(worker.Spec.Selector)
	if ws.Matches(labels.Set(worker.Spec.Template.Labels)) || ks.Matches(labels.Set(web.Spec.Template.Labels)) {
		t.Errorf("the two deployments select each other's pods: %v / %v", ws, ks)
	}
	svc := children["shop-web-svc"].(*corev1.Service)
	if !ws.Matches(labels.Set(svc.Spec.Selector)) || ks.Matches(labels.Set(svc.Spec.Selector)) || svc.Spec.Ports[0].TargetPort.IntValue() != 8080 {
		t.Errorf("service %v selects the wrong pods or port %v", svc.Spec.Selector, svc.Spec.Ports)
	}
	secret := children["shop-api-key"].(*corev1.Secret)
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).Match(secret.Data["key"]) || secret.Annotations[render.AnnotationGeneratedAt] != "2030-01-01T12:00:00Z" {
		t.Errorf("once secret: data %q annotations %v", secret.Data["key"], secret.Annotations)
	}
	if cm := children["shop-config"].(*corev1.ConfigMap); cm.Data["message"] != "hi" {
		t.Errorf("configmap data %v", cm.Data)
	}
	if size, _, _ := unstructured.NestedInt64(children["shop-gadget"].(*unstructured.Unstructured).Object, "spec", "size"); size != 2 {
		t.Errorf("gadget spec.size = %v", size)
	}
	if cr.GetAnnotations()[AnnotationJobs] != h.ns+"/shop-migrate" {
		t.Errorf("jobs annotation = %q", cr.GetAnnotations()[AnnotationJobs])
	}

	// Status: typed fields, observedGeneration, Ready.
	st := cr.Object["status"].(map[string]any)
	if st["phase"] != "Running" || st["endpoint"] != "shop."+h.ns+".svc" {
		t.Errorf("status %v", st)
	}
	if r, ok := st["replicas"].(int64); !ok || r != 2 {
		t.Errorf("status.replicas = %#v, want the integer 2", st["replicas"])
	}
	c, _ := readyCondition(cr)
	if c["reason"] != ReasonSucceeded || c["observedGeneration"] != cr.GetGeneration() {
		t.Errorf("Ready condition %v", c)
	}

	// Events, the /katalog facts and the metrics.
	eventually(t, "Created events", func() error {
		var evs eventsv1.EventList
		if err := k8s.List(context.Background(), &evs, client.InNamespace(h.ns)); err != nil {
			return err
		}
		var notes strings.Builder
		for _, e := range evs.Items {
			if e.Reason == "Created" && e.Regarding.Name == "shop" && e.ReportingController == EventReporter && e.Type == corev1.EventTypeNormal {
				notes.WriteString(e.Note + "\n")
			}
		}
		for name, obj := range children {
			kind := obj.GetObjectKind().GroupVersionKind().Kind
			if kind == "" {
				kind = fmt.Sprintf("%T", obj)[strings.LastIndex(fmt.Sprintf("%T", obj), ".")+1:]
			}
			if want := "created " + kind + " " + h.ns + "/" + name; !strings.Contains(notes.String(), want) {
				return fmt.Errorf("no event says %q; Created events:\n%s", want, notes.String())
			}
		}
		return nil
	})
	st2, ok := h.op.Entry("widget")
	if !ok || st2.Workers != 2 || st2.ResourceCount != 1 || !st2.Started || !st2.Healthy {
		t.Errorf("Entry(widget) = %+v, %v", st2, ok)
	}
	if _, ok := h.op.Entry("nope"); ok {
		t.Error("Entry(nope) is known")
	}
	if v := metricValue(t, h, MetricReconcileTotal, map[string]string{"crd": "widget", "result": ResultSuccess}); v < 1 {
		t.Errorf("%s{result=success} = %v", MetricReconcileTotal, v)
	}
	for _, name := range []string{MetricReconcileDuration, MetricQueueDepth, MetricWorkersActive, MetricResources} {
		if !metricExists(t, h, name, "widget") {
			t.Errorf("metric %s{crd=widget} is missing", name)
		}
	}
	if v := metricValue(t, h, MetricResources, map[string]string{"crd": "widget"}); v != 1 {
		t.Errorf("%s = %v", MetricResources, v)
	}
}

func gadget(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("test.orkestra.io/v1")
	u.SetKind("Gadget")
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// metricFamilies gathers the harness's registry.
func metricFamilies(t testing.TB, h *harness) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

func matches(m *dto.Metric, labels map[string]string) bool {
	for k, v := range labels {
		found := false
		for _, lp := range m.GetLabel() {
			if lp.GetName() == k && lp.GetValue() == v {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func metricValue(t testing.TB, h *harness, name string, labels map[string]string) float64 {
	t.Helper()
	mf := metricFamilies(t, h)[name]
	if mf == nil {
		t.Fatalf("metric %s not registered", name)
	}
	var sum float64
	for _, m := range mf.GetMetric() {
		if !matches(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum
}

func metricExists(t testing.TB, h *harness, name, crd string) bool {
	mf := metricFamilies(t, h)[name]
	if mf == nil {
		return false
	}
	for _, m := range mf.GetMetric() {
		if matches(m, map[string]string{"crd": crd}) {
			return true
		}
	}
	return false
}

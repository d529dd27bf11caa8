package operator

import (
	"fmt"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// Upstream resource and entry constructs reconciled against a real API
// server (fixtures of our own, written from upstream's docs; each test names
// the upstream source it learned the rule from).

func cacheObj(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("test.orkestra.io/v1")
	u.SetKind("Cache")
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// Two custom children written the upstream way (identity under metadata:,
// labels as a key/value list, hasStatus, metadata.namespaced): each keeps
// its declared name, no control key reaches the object, the declared status
// is written through the status subresource unless hasStatus is false.
// Upstream: pkg/types/custom_resource.go, examples/advanced/16-custom-resources.
func TestCustomChildrenUpstreamForm(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
onCreate:
  custom:
    - apiVersion: test.orkestra.io/v1
      kind: Cache
      metadata:
        name: "{{ .metadata.name }}-hot"
        namespace: "{{ .metadata.namespace }}"
        namespaced: true
        labels:
          - key: tier
            value: hot
      spec:
        size: "{{ .spec.replicas }}"
      status:
        phase: Provisioning
      hasStatus: true
    - apiVersion: test.orkestra.io/v1
      kind: Cache
      metadata:
        name: "{{ .metadata.name }}-cold"
        labels: {tier: cold}
      spec:
        size: 1
      status:
        phase: Provisioning
      hasStatus: false
`))
	create(t, widget(h.ns, "shop", map[string]any{"replicas": int64(3)}))
	converged(t, h.ns, "shop")
	hot, cold := cacheObj(h.ns, "shop-hot"), cacheObj(h.ns, "shop-cold")
	mustGet(t, h.ns, "shop-hot", hot)
	mustGet(t, h.ns, "shop-cold", cold)
	if hot.GetLabels()["tier"] != "hot" || cold.GetLabels()["tier"] != "cold" {
		t.Errorf("labels: %v / %v", hot.GetLabels(), cold.GetLabels())
	}
	for _, u := range []*unstructured.Unstructured{hot, cold} {
		for _, key := range []string{"hasStatus", "namespaced"} {
			if _, ok := u.Object[key]; ok {
				t.Errorf("%s carries the control key %s", u.GetName(), key)
			}
			if _, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", key); ok {
				t.Errorf("%s carries metadata.%s", u.GetName(), key)
			}
		}
	}
	if size, _, _ := unstructured.NestedInt64(hot.Object, "spec", "size"); size != 3 {
		t.Errorf("hot spec = %v", hot.Object["spec"])
	}
	if phase, _, _ := unstructured.NestedString(hot.Object, "status", "phase"); phase != "Provisioning" {
		t.Errorf("hot status = %v", hot.Object["status"])
	}
	if _, ok := cold.Object["status"]; ok {
		t.Errorf("hasStatus: false, yet status %v", cold.Object["status"])
	}
}

// One status path under several when: (the last that holds wins) and
// clearOnFalse: a string field is cleared to "", an integer field removed.
// Upstream: pkg/resources/template/resolver_status.go.
func TestStatusLastMatchWinsAndClearOnFalseAgainstTheAPIServer(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
status:
  fields:
    - path: phase
      value: Pending
    - path: phase
      value: Running
      when: "self.spec.replicas > 0"
    - path: replicas
      value: "${self.spec.replicas}"
      when: "self.spec.replicas > 1"
      clearOnFalse: true
    - path: endpoint
      value: "{{ .metadata.name }}.svc"
      when:
        - field: spec.replicas
          gt: "1"
      clearOnFalse: true
`))
	create(t, widget(h.ns, "shop", map[string]any{"replicas": int64(2)}))
	u := converged(t, h.ns, "shop")
	st, _ := u.Object["status"].(map[string]any)
	if st["phase"] != "Running" || st["replicas"] != int64(2) || st["endpoint"] != "shop.svc" {
		t.Fatalf("status = %v", st)
	}
	updateWidget(t, h.ns, "shop", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, int64(0), "spec", "replicas")
	})
	u = converged(t, h.ns, "shop")
	st, _ = u.Object["status"].(map[string]any)
	if _, has := st["replicas"]; has || st["phase"] != "Pending" || st["endpoint"] != "" {
		t.Errorf("status = %v; want phase Pending, endpoint \"\", no replicas", st)
	}
}

// env written as a map keyed by name (upstream examples/use-cases/
// multi-region-map); CronJob history limits, startingDeadlineSeconds and a
// lower-case concurrencyPolicy (upstream documentation/reference/schema/
// 06-resources/cronjobs.md), drift-corrected.
func TestEnvMapAndCronJobFields(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
onReconcile:
  deployments:
    - name: web
      image: nginx
      env:
        REGION: eu-west-1
        PORT:
          value: "{{ .spec.port }}"
        API_KEY:
          secretKeyRef: {name: api, key: key}
        POD:
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
  cronJobs:
    - name: sync
      image: busybox
      schedule: "*/5 * * * *"
      concurrencyPolicy: forbid
      startingDeadlineSeconds: 120
      successfulJobsHistoryLimit: "{{ .spec.replicas }}"
      failedJobsHistoryLimit: 2
`))
	create(t, widget(h.ns, "shop", map[string]any{"replicas": int64(5), "port": int64(8080)}))
	converged(t, h.ns, "shop")
	var d appsv1.Deployment
	mustGet(t, h.ns, "web", &d)
	want := []corev1.EnvVar{
		{Name: "API_KEY", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "api"}, Key: "key"}}},
		{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
		{Name: "PORT", Value: "8080"},
		{Name: "REGION", Value: "eu-west-1"},
	}
	if got := d.Spec.Template.Spec.Containers[0].Env; !reflect.DeepEqual(got, want) {
		t.Errorf("env = %+v\nwant %+v", got, want)
	}
	var cj batchv1.CronJob
	mustGet(t, h.ns, "sync", &cj)
	s := cj.Spec
	if s.ConcurrencyPolicy != batchv1.ForbidConcurrent || *s.StartingDeadlineSeconds != 120 || *s.SuccessfulJobsHistoryLimit != 5 || *s.FailedJobsHistoryLimit != 2 {
		t.Fatalf("cronjob spec: policy %s deadline %v history %v/%v", s.ConcurrencyPolicy, s.StartingDeadlineSeconds, s.SuccessfulJobsHistoryLimit, s.FailedJobsHistoryLimit)
	}
	h.idle("widget")
	cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](9)
	if err := k8s.Update(t.Context(), &cj); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the history limit corrected", func() error {
		var got batchv1.CronJob
		if err := get(h.ns, "sync", &got); err != nil {
			return err
		}
		if *got.Spec.SuccessfulJobsHistoryLimit != 5 {
			return fmt.Errorf("successfulJobsHistoryLimit = %d", *got.Spec.SuccessfulJobsHistoryLimit)
		}
		return nil
	})
}

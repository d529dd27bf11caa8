package operator

import (
	"fmt"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// allowedNamespaces: custom resources elsewhere are not reconciled (not
// even enqueued), children bound for a namespace outside the list are
// skipped and the Ready condition says so; the caches read the allowed
// namespace only. restrictedNamespaces: the same, as a deny list that wins.
// Upstream: pkg/runtime/reconciler/run_namespace_guard.go,
// pkg/runtime/informer/docs/02-namespace-filter.md.
func TestNamespaceRestrictions(t *testing.T) {
	apps, other, locked := newNamespace(t), newNamespace(t), newNamespace(t)
	plan := widgetPlanWith(t, fmt.Sprintf("      allowedNamespaces: [%s, %s]\n      restrictedNamespaces: [%s]\n", apps, locked, locked), `
onReconcile:
  configMaps:
    - name: local
      data: {a: b}
    - name: remote
      namespace: "${self.spec.message}"
      data: {a: b}
`)
	opts := CacheOptions(plan, "")
	if len(opts.ByObject) != 2 {
		t.Errorf("caches %v; want the custom resources' and the ConfigMaps'", opts.ByObject)
	}
	for obj, by := range opts.ByObject {
		if _, ok := by.Namespaces[apps]; !ok || len(by.Namespaces) != 1 {
			t.Errorf("cache of %T reads %v; want only %s", obj, by.Namespaces, apps)
		}
	}
	h := startOperator(t, plan, func(o *harnessOptions) { o.ns, o.clusterWide = apps, true })

	create(t, widget(apps, "shop", map[string]any{"message": locked}))
	u := converged(t, apps, "shop")
	cond, _ := readyCondition(u)
	want := fmt.Sprintf("1 children applied; 1 skipped, their namespace is not allowed (allowedNamespaces, restrictedNamespaces): ConfigMap %s/remote", locked)
	if cond["message"] != want {
		t.Errorf("Ready message %q\nwant %q", cond["message"], want)
	}
	mustGet(t, apps, "local", &corev1.ConfigMap{})
	if err := absent(locked, "remote", &corev1.ConfigMap{}); err != nil {
		t.Error(err)
	}
	for _, ns := range []string{other, locked} {
		create(t, widget(ns, "shop", map[string]any{"message": ns}))
	}
	h.idle("widget")
	for _, ns := range []string{other, locked} {
		if _, has := getWidget(t, ns, "shop").Object["status"]; has {
			t.Errorf("the custom resource in %s was reconciled", ns)
		}
		if err := absent(ns, "local", &corev1.ConfigMap{}); err != nil {
			t.Error(err)
		}
	}
}

// Copies of a Secret and a ConfigMap from another namespace, to every
// namespace a list field names: the drift-corrected Secret copies follow
// their source, the ConfigMap copied once keeps what it copied. Upstream:
// pkg/resources/secrets/secret.go, pkg/runtime/runners/secrets.go,
// examples/beginner/03-secret-copy.
func TestCopiesFromAnotherNamespace(t *testing.T) {
	platform, a, b := newNamespace(t), newNamespace(t), newNamespace(t)
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: platform, Name: "registry"}, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"token": []byte("v1")}})
	create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: platform, Name: "settings"}, Data: map[string]string{"mode": "v1"}})
	h := startOperator(t, widgetPlan(t, fmt.Sprintf(`
onCreate:
  secrets:
    - name: registry
      fromSecret: registry
      fromNamespace: %[1]s
      toNamespaces:
        - "{{ .spec.targets }}"
        - "{{ .metadata.namespace }}"
      data:
        extra: declared
      reconcile: true
  configMaps:
    - name: settings
      fromConfigMap: settings
      fromNamespace: %[1]s
`, platform)), func(o *harnessOptions) { o.clusterWide = true })
	create(t, widget(h.ns, "shop", map[string]any{"targets": []any{a, b}}))
	converged(t, h.ns, "shop")
	for _, ns := range []string{a, b, h.ns} {
		var s corev1.Secret
		mustGet(t, ns, "registry", &s)
		if string(s.Data["token"]) != "v1" || string(s.Data["extra"]) != "declared" || s.Type != corev1.SecretTypeOpaque {
			t.Errorf("copy in %s: %v %s", ns, s.Data, s.Type)
		}
	}
	var cm corev1.ConfigMap
	mustGet(t, h.ns, "settings", &cm)
	if cm.Data["mode"] != "v1" {
		t.Errorf("configmap copy %v", cm.Data)
	}

	// The sources change; the next reconcile (here: a spec change) syncs
	// the drift-corrected copies only.
	var src corev1.Secret
	mustGet(t, platform, "registry", &src)
	src.Data["token"] = []byte("v2")
	if err := k8s.Update(t.Context(), &src); err != nil {
		t.Fatal(err)
	}
	mustGet(t, platform, "settings", &cm)
	cm.Data["mode"] = "v2"
	if err := k8s.Update(t.Context(), &cm); err != nil {
		t.Fatal(err)
	}
	updateWidget(t, h.ns, "shop", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "touched", "spec", "message")
	})
	converged(t, h.ns, "shop")
	eventually(t, "the secret copies to follow their source", func() error {
		for _, ns := range []string{a, b, h.ns} {
			var s corev1.Secret
			if err := get(ns, "registry", &s); err != nil {
				return err
			}
			if string(s.Data["token"]) != "v2" {
				return fmt.Errorf("copy in %s has token %q", ns, s.Data["token"])
			}
		}
		return nil
	})
	mustGet(t, h.ns, "settings", &cm)
	if cm.Data["mode"] != "v1" {
		t.Errorf("the ConfigMap copied once changed: %v", cm.Data)
	}
}

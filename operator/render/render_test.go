package render

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

func TestDeploymentAllPodFields(t *testing.T) {
	e := entry(decl{kind: "deployments", fields: map[string]any{
		"name":             ref("metadata.name"),
		"image":            ref("spec.image"),
		"replicas":         ref("spec.replicas"),
		"port":             ref("spec.port"),
		"protocol":         "udp",
		"imagePullPolicy":  "IfNotPresent",
		"imagePullSecrets": []any{"regcred"},
		"command":          []any{"/bin/server"},
		"args":             []any{"--port", tmpl("%v", "spec.port")},
		"env": []any{
			map[string]any{"name": "MODE", "value": "prod"},
			map[string]any{"name": "POD", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.name"}}},
		},
		"envFrom":        []any{map[string]any{"configMapRef": map[string]any{"name": "shop-config"}}},
		"resources":      map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "64Mi"}, "limits": map[string]any{"memory": "128Mi"}},
		"livenessProbe":  map[string]any{"httpGet": map[string]any{"path": "/healthz", "port": 8080}, "initialDelaySeconds": 5},
		"readinessProbe": map[string]any{"tcpSocket": map[string]any{"port": "http"}},
		"startupProbe":   map[string]any{"exec": map[string]any{"command": []any{"true"}}},
		"securityContext": map[string]any{
			"runAsNonRoot": true, "readOnlyRootFilesystem": true,
		},
		"podSecurityContext": map[string]any{"fsGroup": 2000},
		"volumes":            []any{map[string]any{"name": "cache", "emptyDir": map[string]any{}}},
		"volumeMounts":       []any{map[string]any{"name": "cache", "mountPath": "/cache"}},
		"serviceAccountName": "shop-sa",
		"nodeSelector":       map[string]any{"disk": "ssd"},
		"tolerations":        []any{map[string]any{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}},
		"labels":             map[string]any{"app": ref("metadata.name"), "tier": "web"},
		"annotations":        map[string]any{"team": "storefront"},
		"podLabels":          map[string]any{"version": "v2"},
		"podAnnotations":     map[string]any{"prometheus.io/scrape": "true"},
	}})
	res := renderOne(t, e, widget(map[string]any{"image": "nginx:1.27", "replicas": int64(3), "port": int64(8080)}))
	c := child(t, res, katalog.OnReconcile, "shop")
	if !c.When || !c.Reconciled || c.GVK != (schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}) {
		t.Fatalf("child = %+v", c)
	}
	assertObject(t, c.Object, `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop
  namespace: prod
  labels:
    app: shop
    tier: web
    orkestra-owner: shop
    orkestra.orkspace.io/managed: "true"
  annotations:
    team: storefront`+ownerRefYAML+`
spec:
  replicas: 3
  selector:
    matchLabels:
      orkestra-owner: shop
      orkestra.orkspace.io/child: shop
  template:
    metadata:
      labels:
        app: shop
        tier: web
        version: v2
        orkestra-owner: shop
        orkestra.orkspace.io/child: shop
      annotations:
        prometheus.io/scrape: "true"
    spec:
      serviceAccountName: shop-sa
      nodeSelector: {disk: ssd}
      imagePullSecrets: [{name: regcred}]
      tolerations: [{key: dedicated, operator: Exists, effect: NoSchedule}]
      securityContext: {fsGroup: 2000}
      volumes: [{name: cache, emptyDir: {}}]
      containers:
        - name: shop
          image: nginx:1.27
          imagePullPolicy: IfNotPresent
          command: [/bin/server]
          args: [--port, "8080"]
          ports: [{containerPort: 8080, protocol: UDP}]
          env:
            - {name: MODE, value: prod}
            - name: POD
              valueFrom: {fieldRef: {fieldPath: metadata.name}}
          envFrom: [{configMapRef: {name: shop-config}}]
          resources:
            requests: {cpu: 100m, memory: 64Mi}
            limits: {memory: 128Mi}
          livenessProbe:
            httpGet: {path: /healthz, port: 8080}
            initialDelaySeconds: 5
          readinessProbe:
            tcpSocket: {port: http}
          startupProbe:
            exec: {command: ["true"]}
          securityContext: {runAsNonRoot: true, readOnlyRootFilesystem: true}
          volumeMounts: [{name: cache, mountPath: /cache}]
`)
	if len(c.Fields) != 26 {
		t.Errorf("managed fields = %d, want the 26 declared", len(c.Fields))
	}
}

func TestDeploymentMinimalAndAbsentFields(t *testing.T) {
	// replicas refers to an absent field: left unset (the API server
	// defaults it), and not managed.
	e := entry(decl{kind: "deployments", fields: map[string]any{
		"image":    ref("spec.image"),
		"replicas": ref("spec.replicas"),
	}})
	cr := widget(map[string]any{"image": "nginx"})
	res := renderOne(t, e, cr)
	c := child(t, res, katalog.OnReconcile, "shop-deployment")
	if _, managed := c.Fields["replicas"]; managed {
		t.Errorf("absent replicas is managed: %v", c.Fields)
	}
	assertObject(t, c.Object, `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop-deployment
  namespace: prod
  labels: {orkestra-owner: shop, orkestra.orkspace.io/managed: "true"}`+ownerRefYAML+`
spec:
  selector:
    matchLabels: {orkestra-owner: shop, orkestra.orkspace.io/child: shop-deployment}
  template:
    metadata:
      labels: {orkestra-owner: shop, orkestra.orkspace.io/child: shop-deployment}
    spec:
      containers:
        - name: shop-deployment
          image: nginx
`)
}

func TestContainerName(t *testing.T) {
	for _, tc := range []struct{ containerName, child, want string }{
		{"", "web", "web"},
		{"app", "web", "app"},
		{"", "web.example.com", DefaultContainerName}, // not a DNS label
		{"", strings.Repeat("a", 64), DefaultContainerName},
	} {
		if got := ContainerName(tc.containerName, tc.child); got != tc.want {
			t.Errorf("ContainerName(%q, %q) = %q, want %q", tc.containerName, tc.child, got, tc.want)
		}
	}
}

func TestWorkloadSelectorsAreUniqueAndServicesPickTheirWorkload(t *testing.T) {
	e := entry(
		decl{kind: "deployments", fields: map[string]any{"name": "shop-web", "image": "web", "port": 8080}},
		decl{kind: "deployments", fields: map[string]any{"name": "shop-worker", "image": "worker"}},
		decl{kind: "statefulSets", fields: map[string]any{"name": "shop-db", "image": "postgres", "serviceName": "db-headless", "port": 5432}},
		// longest prefix: shop-web-svc → shop-web
		decl{kind: "services", fields: map[string]any{"name": "shop-web-svc", "port": 80}},
		// a StatefulSet's serviceName
		decl{kind: "services", fields: map[string]any{"name": "db-headless", "headless": true}},
		// no workload matches and several exist: every pod of the CR
		decl{kind: "services", fields: map[string]any{"name": "all", "port": 9090, "targetPort": 9091, "type": "NodePort", "nodePort": 30090, "portName": "metrics", "protocol": "TCP"}},
		// an explicit selector wins
		decl{kind: "services", fields: map[string]any{"name": "shop-web-custom", "selector": map[string]any{"app": "x"}}},
	)
	res := renderOne(t, e, widget(nil))
	web := child(t, res, katalog.OnReconcile, "shop-web").Object
	worker := child(t, res, katalog.OnReconcile, "shop-worker").Object
	ws, _, _ := unstructured.NestedStringMap(web.Object, "spec", "selector", "matchLabels")
	ks, _, _ := unstructured.NestedStringMap(worker.Object, "spec", "selector", "matchLabels")
	if ws[LabelChild] == ks[LabelChild] {
		t.Fatalf("two deployments of one CR share a selector: %v and %v", ws, ks)
	}
	assertObject(t, child(t, res, katalog.OnReconcile, "shop-web-svc").Object, `
apiVersion: v1
kind: Service
metadata:
  name: shop-web-svc
  namespace: prod
  labels: {orkestra-owner: shop, orkestra.orkspace.io/managed: "true"}`+ownerRefYAML+`
spec:
  type: ClusterIP
  selector: {orkestra-owner: shop, orkestra.orkspace.io/child: shop-web}
  ports: [{port: 80, targetPort: 8080, protocol: TCP}]
`)
	assertObject(t, child(t, res, katalog.OnReconcile, "db-headless").Object, `
apiVersion: v1
kind: Service
metadata:
  name: db-headless
  namespace: prod
  labels: {orkestra-owner: shop, orkestra.orkspace.io/managed: "true"}`+ownerRefYAML+`
spec:
  type: ClusterIP
  clusterIP: None
  selector: {orkestra-owner: shop, orkestra.orkspace.io/child: shop-db}
  ports: [{port: 5432, targetPort: 5432, protocol: TCP}]
`)
	assertObject(t, child(t, res, katalog.OnReconcile, "all").Object, `
apiVersion: v1
kind: Service
metadata:
  name: all
  namespace: prod
  labels: {orkestra-owner: shop, orkestra.orkspace.io/managed: "true"}`+ownerRefYAML+`
spec:
  type: NodePort
  selector: {orkestra-owner: shop}
  ports: [{name: metrics, port: 9090, targetPort: 9091, nodePort: 30090, protocol: TCP}]
`)
	sel, _, _ := unstructured.NestedStringMap(child(t, res, katalog.OnReconcile, "shop-web-custom").Object.Object, "spec", "selector")
	if len(sel) != 1 || sel["app"] != "x" {
		t.Errorf("explicit selector = %v", sel)
	}
}

func TestServiceWithTheOnlyWorkloadAndWhenFalseWorkloads(t *testing.T) {
	e := entry(
		decl{kind: "deployments", fields: map[string]any{"name": "api", "image": "api", "port": 3000}},
		// fails its condition: not a candidate
		decl{kind: "deployments", fields: map[string]any{"name": "canary", "image": "api"}, when: cond("spec.canary", true)},
		decl{kind: "services", fields: map[string]any{"name": "frontend"}},
	)
	res := renderOne(t, e, widget(nil))
	assertObject(t, child(t, res, katalog.OnReconcile, "frontend").Object, `
apiVersion: v1
kind: Service
metadata:
  name: frontend
  namespace: prod
  labels: {orkestra-owner: shop, orkestra.orkspace.io/managed: "true"}`+ownerRefYAML+`
spec:
  type: ClusterIP
  selector: {orkestra-owner: shop, orkestra.orkspace.io/child: api}
  ports: [{port: 3000, targetPort: 3000, protocol: TCP}]
`)
}

func TestStatefulSet(t *testing.T) {
	e := entry(decl{kind: "statefulSets", fields: map[string]any{
		"name": "db", "image": "postgres:16", "replicas": 1, "serviceName": "db",
		"volumeClaimTemplates": []any{map[string]any{
			"metadata": map[string]any{"name": "data"},
			"spec": map[string]any{
				"accessModes": []any{"ReadWriteOnce"},
				"resources":   map[string]any{"requests": map[string]any{"storage": "1Gi"}},
			},
		}},
	}})
	res := renderOne(t, e, widget(nil))
	assertObject(t, child(t, res, katalog.OnReconcile, "db").Object, `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: prod
  labels: {orkestra-owner: shop, orkestra.orkspace.io/managed: "true"}`+ownerRefYAML+`
spec:
  replicas: 1
  serviceName: db
  selector:
    matchLabels: {orkestra-owner: shop, orkestra.orkspace.io/child: db}
  template:
    metadata:
      labels: {orkestra-owner: shop, orkestra.orkspace.io/child: db}
    spec:
      containers: [{name: db, image: "postgres:16"}]
  volumeClaimTemplates:
    - metadata: {name: data}
      spec:
        accessModes: [ReadWriteOnce]
        resources: {requests: {storage: 1Gi}}
`)
}

func TestJobAndCronJob(t *testing.T) {
	e := entry(
		decl{hook: katalog.OnCreate, kind: "jobs", fields: map[string]any{
			"name": "migrate", "image": "migrate:1", "args": []any{"up"}, "ttlSecondsAfterFinished": 600,
		}},
		decl{kind: "cronJobs", fields: map[string]any{
			"name": "backup", "image": "backup:1", "schedule": "0 3 * * *", "suspend": false,
			"concurrencyPolicy": "Forbid", "backoffLimit": 1, "restartPolicy": "OnFailure",
			"labels": map[string]any{"app": "backup"},
		}},
	)
	res := renderOne(t, e, widget(nil))
	job := child(t, res, katalog.OnCreate, "migrate")
	if job.Reconciled {
		t.Error("a plain onCreate job is drift-corrected")
	}
	assertObject(t, job.Object, `
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  namespace: prod
  labels: {orkestra-owner: shop, orkestra.orkspace.io/managed: "true"}`+ownerRefYAML+`
spec:
  backoffLimit: 3
  ttlSecondsAfterFinished: 600
  template:
    metadata:
      labels: {orkestra-owner: shop, orkestra.orkspace.io/child: migrate}
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: "migrate:1", args: [up]}]
`)
	assertObject(t, child(t, res, katalog.OnReconcile, "backup").Object, `
apiVersion: batch/v1
kind: CronJob
metadata:
  name: backup
  namespace: prod
  labels: {app: backup, orkestra-owner: shop, orkestra.orkspace.io/managed: "true"}`+ownerRefYAML+`
spec:
  schedule: "0 3 * * *"
  suspend: false
  concurrencyPolicy: Forbid
  jobTemplate:
    metadata:
      labels: {app: backup, orkestra-owner: shop, orkestra.orkspace.io/child: backup}
    spec:
      backoffLimit: 1
      template:
        metadata:
          labels: {app: backup, orkestra-owner: shop, orkestra.orkspace.io/child: backup}
        spec:
          restartPolicy: OnFailure
          containers: [{name: backup, image: "backup:1"}]
`)
}

func TestPod(t *testing.T) {
	e := entry(decl{kind: "pods", fields: map[string]any{
		"name": "debug", "image": "busybox", "command": []any{"sleep", "3600"}, "restartPolicy": "Never",
		"labels": map[string]any{"app": "debug"}, "podLabels": map[string]any{"extra": "yes"},
		"podAnnotations": map[string]any{"note": "n"},
	}})
	res := renderOne(t, e, widget(nil))
	assertObject(t, child(t, res, katalog.OnReconcile, "debug").Object, `
apiVersion: v1
kind: Pod
metadata:
  name: debug
  namespace: prod
  labels:
    app: debug
    extra: "yes"
    orkestra-owner: shop
    orkestra.orkspace.io/child: debug
    orkestra.orkspace.io/managed: "true"
  annotations: {note: "n"}`+ownerRefYAML+`
spec:
  restartPolicy: Never
  containers: [{name: debug, image: busybox, command: [sleep, "3600"]}]
`)
}

func TestConfigMapSecretServiceAccount(t *testing.T) {
	e := entry(
		decl{kind: "configMaps", fields: map[string]any{
			"data": map[string]any{"greeting": tmpl("hello %s", "metadata.name"), "count": ref("spec.replicas")},
		}},
		decl{hook: katalog.OnCreate, kind: "secrets", once: true, rotate: 24 * time.Hour, fields: map[string]any{
			"name": "api-key", "data": map[string]any{"key": "s3cr3t", "user": ref("metadata.name")},
		}},
		decl{kind: "secrets", fields: map[string]any{"name": "tls", "type": "kubernetes.io/tls",
			"data": map[string]any{"tls.crt": "C", "tls.key": "K"}}},
		decl{kind: "serviceAccounts", fields: map[string]any{"automountServiceAccountToken": false, "imagePullSecrets": []any{"regcred"}}},
	)
	res := renderOne(t, e, widget(map[string]any{"replicas": int64(2)}))
	assertObject(t, child(t, res, katalog.OnReconcile, "shop-config").Object, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: shop-config
  namespace: prod
  labels: {orkestra-owner: shop, orkestra.orkspace.io/managed: "true"}`+ownerRefYAML+`
data: {greeting: hello shop, count: "2"}
`)
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	assertObject(t, child(t, res, katalog.OnCreate, "api-key").Object, `
apiVersion: v1
kind: Secret
metadata:
  name: api-key
  namespace: prod
  labels: {orkestra-owner: shop, orkestra.orkspace.io/managed: "true"}
  annotations: {orkestra.orkspace.io/rotate-after: 24h0m0s}`+ownerRefYAML+`
type: Opaque
data: {key: `+b64("s3cr3t")+`, user: `+b64("shop")+`}
`)
	tls := child(t, res, katalog.OnReconcile, "tls").Object
	if tp, _, _ := unstructured.NestedString(tls.Object, "type"); tp != "kubernetes.io/tls" {
		t.Errorf("secret type = %q", tp)
	}
	assertObject(t, child(t, res, katalog.OnReconcile, "shop-sa").Object, `
apiVersion: v1
kind: ServiceAccount
metadata:
  name: shop-sa
  namespace: prod
  labels: {orkestra-owner: shop, orkestra.orkspace.io/managed: "true"}`+ownerRefYAML+`
automountServiceAccountToken: false
imagePullSecrets: [{name: regcred}]
`)
}

func TestIngressAndPVC(t *testing.T) {
	e := entry(
		decl{kind: "ingresses", fields: map[string]any{"serviceName": tmpl("%s-svc", "metadata.name"), "host": "shop.example.com",
			"tlsSecretName": "shop-tls", "ingressClassName": "nginx"}},
		decl{kind: "ingresses", fields: map[string]any{"name": "plain", "serviceName": "x", "path": "/api", "pathType": "Exact", "servicePort": 8080}},
		decl{kind: "persistentVolumeClaims", fields: map[string]any{"storage": "10Gi", "storageClassName": "fast", "accessModes": []any{"ReadWriteMany"}, "volumeMode": "Filesystem"}},
		decl{kind: "persistentVolumeClaims", fields: map[string]any{"name": "bytes", "storage": 1073741824}},
	)
	res := renderOne(t, e, widget(nil))
	assertObject(t, child(t, res, katalog.OnReconcile, "shop-ingress").Object, `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: shop-ingress
  namespace: prod
  labels: {orkestra-owner: shop, orkestra.orkspace.io/managed: "true"}`+ownerRefYAML+`
spec:
  ingressClassName: nginx
  tls: [{hosts: [shop.example.com], secretName: shop-tls}]
  rules:
    - host: shop.example.com
      http:
        paths:
          - path: /
            pathType: Prefix
            backend: {service: {name: shop-svc, port: {number: 80}}}
`)
	plain := child(t, res, katalog.OnReconcile, "plain").Object
	paths, _, _ := unstructured.NestedSlice(plain.Object, "spec", "rules")
	if got := normalize(t, paths); !strings.Contains(strings.ReplaceAll(jsonString(t, got), " ", ""), `"path":"/api","pathType":"Exact"`) ||
		!strings.Contains(jsonString(t, got), `"number":8080`) {
		t.Errorf("rules = %s", jsonString(t, got))
	}
	assertObject(t, child(t, res, katalog.OnReconcile, "shop-pvc").Object, `
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: shop-pvc
  namespace: prod
  labels: {orkestra-owner: shop, orkestra.orkspace.io/managed: "true"}`+ownerRefYAML+`
spec:
  accessModes: [ReadWriteMany]
  storageClassName: fast
  volumeMode: Filesystem
  resources: {requests: {storage: 10Gi}}
`)
	assertObject(t, child(t, res, katalog.OnReconcile, "bytes").Object, `
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: bytes
  namespace: prod
  labels: {orkestra-owner: shop, orkestra.orkspace.io/managed: "true"}`+ownerRefYAML+`
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`)
}

func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCustom(t *testing.T) {
	e := entry(
		decl{kind: "custom", fields: map[string]any{
			"name": tmpl("%s-cert", "metadata.name"), "apiVersion": "cert-manager.io/v1", "kind": "Certificate",
			"labels":   map[string]any{"app": "shop"},
			"metadata": map[string]any{"annotations": map[string]any{"from": "metadata"}, "labels": map[string]any{"inner": "yes"}},
			"spec":     map[string]any{"secretName": "shop-tls", "dnsNames": []any{"shop.example.com"}, "duration": ref("spec.duration")},
		}},
		decl{kind: "custom", fields: map[string]any{
			"name": "shop-reader", "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
			"rules": []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"pods"}, "verbs": []any{"get"}}},
		}},
	)
	cr := widget(map[string]any{"duration": "2160h"})
	res, err := RenderWith(e, cr, Options{IsNamespaced: func(gvk schema.GroupVersionKind) (bool, error) {
		return gvk.Kind != "ClusterRole", nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	cert := child(t, res, katalog.OnReconcile, "shop-cert")
	if cert.Typed != nil {
		t.Error("custom children have no typed object")
	}
	assertObject(t, cert.Object, `
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: shop-cert
  namespace: prod
  labels: {app: shop, inner: "yes", orkestra-owner: shop, orkestra.orkspace.io/managed: "true"}
  annotations: {from: metadata}`+ownerRefYAML+`
spec:
  secretName: shop-tls
  dnsNames: [shop.example.com]
  duration: 2160h
`)
	// Cluster-scoped: no namespace, no owner reference.
	assertObject(t, child(t, res, katalog.OnReconcile, "shop-reader").Object, `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: shop-reader
  labels: {orkestra-owner: shop, orkestra.orkspace.io/managed: "true"}
rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
`)
}

func TestWhenFalseEvaluatesOnlyIdentity(t *testing.T) {
	e := entry(
		decl{kind: "configMaps", when: cond("spec.enabled", true), fields: map[string]any{
			"name": tmpl("%s-extra", "metadata.name"),
			"data": map[string]any{"x": failing("must not be evaluated")},
		}},
		decl{hook: katalog.OnCreate, kind: "configMaps", reconcile: true, fields: map[string]any{"name": "plain"}},
	)
	res := renderOne(t, e, widget(map[string]any{"enabled": false}))
	c := child(t, res, katalog.OnReconcile, "shop-extra")
	if c.When || c.Object != nil || c.Fields != nil || c.Namespace != "prod" || c.GVK.Kind != "ConfigMap" {
		t.Errorf("when-false child = %+v", c)
	}
	if p := child(t, res, katalog.OnCreate, "plain"); !p.Reconciled || !p.When {
		t.Errorf("onCreate reconcile: true child = %+v", p)
	}
	// When it holds, the failing expression fails the render, naming it.
	_, err := Render(e, widget(map[string]any{"enabled": true}))
	if err == nil || !strings.Contains(err.Error(), "must not be evaluated") || !strings.Contains(err.Error(), "Widget prod/shop") ||
		!strings.Contains(err.Error(), "operatorBox.onReconcile.configMaps[0]") {
		t.Errorf("err = %v", err)
	}
}

func TestRenderOnlyAskedHooks(t *testing.T) {
	e := entry(
		decl{kind: "configMaps", fields: map[string]any{"name": "a"}},
		decl{hook: katalog.OnDelete, kind: "jobs", fields: map[string]any{"name": "cleanup", "image": "x"}},
	)
	res, err := RenderWith(e, widget(nil), Options{Hooks: DeleteHooks, SkipStatus: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hooks[katalog.OnReconcile]) != 0 || len(res.Hooks[katalog.OnDelete]) != 1 || res.Status != nil {
		t.Errorf("res = %+v", res)
	}
}

func TestNamespaceAndOwnerReference(t *testing.T) {
	e := entry(
		decl{kind: "configMaps", fields: map[string]any{"name": "same"}},
		decl{kind: "configMaps", fields: map[string]any{"name": "other", "namespace": "shared"}},
	)
	res := renderOne(t, e, widget(nil))
	if c := child(t, res, katalog.OnReconcile, "same"); c.Namespace != "prod" || len(c.Object.GetOwnerReferences()) != 1 {
		t.Errorf("same: ns %q refs %v", c.Namespace, c.Object.GetOwnerReferences())
	}
	// Kubernetes forbids owner references across namespaces.
	if c := child(t, res, katalog.OnReconcile, "other"); c.Namespace != "shared" || len(c.Object.GetOwnerReferences()) != 0 {
		t.Errorf("other: ns %q refs %v", c.Namespace, c.Object.GetOwnerReferences())
	}
	// An offline CR has no UID: no owner reference.
	cr := widget(nil)
	unstructured.RemoveNestedField(cr.Object, "metadata", "uid")
	if c := child(t, renderOne(t, e, cr), katalog.OnReconcile, "same"); len(c.Object.GetOwnerReferences()) != 0 {
		t.Errorf("offline refs %v", c.Object.GetOwnerReferences())
	}
	// A cluster-scoped CR: namespaced children must say where they go.
	cluster := widget(nil)
	cluster.SetNamespace("")
	if _, err := Render(e, cluster); err == nil || !strings.Contains(err.Error(), "needs namespace:") {
		t.Errorf("cluster-scoped err = %v", err)
	}
	// ... or toNamespaces does (upstream's namespace provisioner).
	fanned := entry(decl{kind: "configMaps", fields: map[string]any{"name": "spread", "toNamespaces": []any{"a", "b"}}})
	res, err := Render(fanned, cluster)
	if err != nil {
		t.Fatal(err)
	}
	if cs := res.Hooks[katalog.OnReconcile]; len(cs) != 2 || cs[0].Namespace != "a" || cs[1].Namespace != "b" {
		t.Errorf("toNamespaces of a cluster-scoped CR: %v", cs)
	}
}

func TestStatusFieldsAreTyped(t *testing.T) {
	e := entry()
	e.Status = []*engine.StatusField{
		sf("phase", lit("Running"), nil),
		sf("replicas", ref("spec.replicas"), nil),
		sf("ratio", ref("spec.ratio"), nil),
		sf("deep.ready", lit(true), nil),
		sf("deep.endpoint", tmpl("%s.svc", "metadata.name"), nil),
		sf("skipped", lit("no"), cond("spec.enabled", true)),
		sf("absent", ref("spec.nothing"), nil),
	}
	res := renderOne(t, e, widget(map[string]any{"replicas": int64(3), "ratio": 0.5}))
	want := map[string]any{
		"phase":    "Running",
		"replicas": int64(3),
		"ratio":    0.5,
		"deep":     map[string]any{"ready": true, "endpoint": "shop.svc"},
	}
	if !reflect.DeepEqual(res.Status, want) {
		t.Errorf("status = %#v, want %#v", res.Status, want)
	}
	if _, ok := res.Status["replicas"].(int64); !ok {
		t.Errorf("status.replicas is %T, want int64", res.Status["replicas"])
	}
}

func TestBuilderErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fields map[string]any
		want   string
	}{
		{"misspelled probe field", map[string]any{"image": "x", "livenessProbe": map[string]any{"initialDelaySecond": 5}},
			`operatorBox.onReconcile.deployments[0].livenessProbe: json: unknown field "initialDelaySecond"`},
		{"port out of range", map[string]any{"image": "x", "port": 70000}, "operatorBox.onReconcile.deployments[0].port: 70000 is out of range [1, 65535]"},
		{"env neither a list nor a map", map[string]any{"image": "x", "env": "A=b"}, "operatorBox.onReconcile.deployments[0].env: expects a list, got a string"},
		{"env map entry not a value", map[string]any{"image": "x", "env": map[string]any{"A": []any{"b"}}}, "operatorBox.onReconcile.deployments[0].env.A: expects a value or an object with value, valueFrom or one of secretKeyRef, configMapKeyRef, fieldRef, resourceFieldRef, got a list of 1 items"},
		{"env map entry misspelled", map[string]any{"image": "x", "env": map[string]any{"A": map[string]any{"secretKeyRf": map[string]any{"name": "s"}}}}, `operatorBox.onReconcile.deployments[0].env.A: json: unknown field "secretKeyRf"`},
		{"empty name", map[string]any{"image": "x", "name": ""}, "operatorBox.onReconcile.deployments[0].name: the name is empty"},
		{"replicas not a number", map[string]any{"image": "x", "replicas": "many"}, `replicas: expects an integer, got the string "many"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Render(entry(decl{kind: "deployments", fields: tc.fields}), widget(nil))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

func TestLabelValueAndOwnership(t *testing.T) {
	long := strings.Repeat("x", 80)
	v := LabelValue(long)
	if len(v) != 63 || !strings.HasPrefix(v, strings.Repeat("x", 54)+"-") || LabelValue(long+"y") == v {
		t.Errorf("LabelValue(80 x) = %q", v)
	}
	if LabelValue("short") != "short" {
		t.Error("short names change")
	}
	cr := widget(nil)
	res := renderOne(t, entry(decl{kind: "configMaps", fields: map[string]any{"name": "c"}}), cr)
	obj := child(t, res, katalog.OnReconcile, "c").Object
	if !IsOwnedBy(obj, cr) {
		t.Error("a rendered child is not owned by its CR")
	}
	other := cr.DeepCopy()
	other.SetUID("another-uid")
	if IsOwnedBy(obj, other) {
		t.Error("a child is owned by a CR of the same name with another UID")
	}
	foreign := obj.DeepCopy()
	foreign.SetLabels(map[string]string{"app": "x"})
	foreign.SetOwnerReferences(nil)
	if IsOwnedBy(foreign, cr) {
		t.Error("an object without the orkestra-owner label is owned")
	}
}

package manifests_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/orkspace/orkestra-cel/engine/conversion"
	"github.com/orkspace/orkestra-cel/envassets/envtesting"
	"github.com/orkspace/orkestra-cel/lifecycle/storage"
	"github.com/orkspace/orkestra-cel/manifests"
	"github.com/orkspace/orkestra-cel/operator"
	"github.com/orkspace/orkestra-cel/webhook"
	"github.com/orkspace/orkestra-cel/webhook/certs"
)

// certManagerCRDs stand in for cert-manager's: the API server accepts
// Issuers and Certificates, as in a cluster running cert-manager.
func certManagerCRDs() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, k := range []string{"Issuer", "Certificate"} {
		plural := strings.ToLower(k) + "s"
		out = append(out, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1",
			"kind":       "CustomResourceDefinition",
			"metadata":   map[string]any{"name": plural + ".cert-manager.io"},
			"spec": map[string]any{
				"group": "cert-manager.io",
				"scope": "Namespaced",
				"names": map[string]any{"kind": k, "plural": plural},
				"versions": []any{map[string]any{
					"name": "v1", "served": true, "storage": true,
					"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
				}},
			},
		}})
	}
	return out
}

// TestServerSideApply applies the whole output of both certificate modes
// to a real API server: every object is accepted, a second apply changes
// nothing, and the Deployment's pod passes the restricted Pod Security
// Standard its namespace enforces.
func TestServerSideApply(t *testing.T) {
	ctx := t.Context()
	cfg := envtesting.Start(t)
	c := newClient(t, cfg)
	apply(t, ctx, c, certManagerCRDs())
	plan := websitePlan(t)
	for _, mode := range []struct {
		name string
		opts manifests.Options
	}{
		{"built-in certificates", manifests.Options{}},
		{"cert-manager", manifests.Options{Namespace: "orkestra-cm", Name: "ork", CertManager: true, Replicas: 3}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			in, objs := generate(t, plan, mode.opts)
			apply(t, ctx, c, objs)
			// Idempotent: applying the same output again writes nothing.
			before := resourceVersions(t, ctx, c, objs)
			apply(t, ctx, c, objs)
			if after := resourceVersions(t, ctx, c, objs); !slices.Equal(before, after) {
				t.Fatalf("re-applying the output changed objects:\n%v\n%v", before, after)
			}

			var deploy appsv1.Deployment
			if err := c.Get(ctx, types.NamespacedName{Namespace: in.Options.Namespace, Name: in.Options.Name}, &deploy); err != nil {
				t.Fatal(err)
			}
			if *deploy.Spec.Replicas != in.Options.Replicas {
				t.Fatalf("replicas %d", *deploy.Spec.Replicas)
			}
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "pss-check", Namespace: in.Options.Namespace, Labels: deploy.Spec.Template.Labels},
				Spec:       deploy.Spec.Template.Spec,
			}
			if err := c.Create(ctx, pod, client.DryRunAll); err != nil {
				t.Fatalf("the Deployment's pod is rejected in its namespace (restricted Pod Security): %v", err)
			}

			var crd apiextensionsv1.CustomResourceDefinition
			if err := c.Get(ctx, types.NamespacedName{Name: "websites.demo.orkestra.io"}, &crd); err != nil {
				t.Fatal(err)
			}
			conv := crd.Spec.Conversion
			if conv.Strategy != apiextensionsv1.WebhookConverter || conv.Webhook.ClientConfig.Service == nil ||
				conv.Webhook.ClientConfig.Service.Name != in.ServiceName || conv.Webhook.ClientConfig.Service.Namespace != in.Options.Namespace ||
				*conv.Webhook.ClientConfig.Service.Path != "/convert" || *conv.Webhook.ClientConfig.Service.Port != 443 ||
				!slices.Equal(conv.Webhook.ConversionReviewVersions, []string{"v1", "v1beta1"}) {
				t.Fatalf("conversion %+v", conv)
			}
			if len(conv.Webhook.ClientConfig.CABundle) != 0 {
				t.Fatal("the output must not carry a caBundle (injected at run time)")
			}
			inject := crd.Annotations[manifests.AnnotationInjectCA]
			if mode.opts.CertManager != (inject == in.Options.Namespace+"/"+in.Options.Name+"-webhook") {
				t.Fatalf("cert-manager mode %v, inject-ca-from %q", mode.opts.CertManager, inject)
			}
		})
	}
}

func resourceVersions(t *testing.T, ctx context.Context, c client.Client, objs []*unstructured.Unstructured) []string {
	t.Helper()
	var out []string
	for _, o := range objs {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(o.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), live); err != nil {
			t.Fatal(err)
		}
		out = append(out, o.GetKind()+"/"+o.GetName()+"@"+live.GetResourceVersion())
	}
	return out
}

// TestRunAsServiceAccount installs the built-in-mode output and runs the
// operator, the /convert webhook and the certificate manager with the
// generated ServiceAccount's identity (impersonation): the CA bundle is
// injected, the API server converts through the webhook, a Website is
// reconciled into its children (created, drift-corrected, deleted when its
// condition stops holding) with status and events — and not one request of
// that identity is forbidden. Requests outside the derived RBAC are.
func TestRunAsServiceAccount(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cfg := envtesting.Start(t)
	admin := newClient(t, cfg)
	plan := websitePlan(t)
	in, objs := generate(t, plan, manifests.Options{})
	ns := in.Options.Namespace

	// envtest has no cluster network: the CRD calls the webhook on
	// 127.0.0.1 instead of through the Service.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "https://" + l.Addr().String() + "/convert"
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			if err := unstructured.SetNestedMap(o.Object, map[string]any{"url": url}, "spec", "conversion", "webhook", "clientConfig"); err != nil {
				t.Fatal(err)
			}
		}
	}
	apply(t, ctx, admin, objs)

	// The identity of the Deployment's pods.
	forbidden := &forbiddenLog{}
	sa := rest.CopyConfig(cfg)
	sa.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + ns + ":" + in.ServiceAccount,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
	}
	sa.Wrap(forbidden.wrap)
	log := testr.NewWithOptions(t, testr.Options{Verbosity: 0})

	// What `orkestra run` starts in built-in certificate mode.
	certOpts := certs.DefaultOptions()
	certOpts.Namespace = ns
	certOpts.SecretName = in.SecretName
	certOpts.ServiceName = in.ServiceName
	certOpts.IPs = []net.IP{net.IPv4(127, 0, 0, 1)}
	certOpts.CertDir = t.TempDir()
	certOpts.Log = log.WithName("certs")
	mgr, err := operator.NewManager(sa, plan, operator.ManagerOptions{
		LeaderElection:               true,
		LeaderElectionID:             in.LeaseName,
		LeaderElectionNamespace:      ns,
		LeaseDuration:                4 * time.Second,
		RenewDeadline:                3 * time.Second,
		RetryPeriod:                  500 * time.Millisecond,
		GracefulShutdownTimeout:      5 * time.Second,
		SkipControllerNameValidation: true,
		Log:                          log,
	})
	if err != nil {
		t.Fatal(err)
	}
	// As `orkestra run` does in built-in certificate mode.
	cm, err := certs.Setup(ctx, sa, plan, certOpts, mgr)
	if err != nil {
		t.Fatalf("built-in certificates as the ServiceAccount: %v", err)
	}
	reg := prometheus.NewRegistry()
	op := operator.New(plan, operator.Options{Log: log.WithName("operator"), Registry: reg, SkipControllerNameValidation: true})
	if err := op.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := certOpts.Files()
	srv := &webhook.Server{
		Config:          webhook.Config{CertFile: certFile, KeyFile: keyFile, ShutdownTimeout: 2 * time.Second},
		Plan:            plan,
		Converter:       conversion.New(plan, conversion.Options{}),
		Registry:        reg,
		ReadyCheck:      op.Ready,
		WebhookListener: l,
		Log:             log.WithName("webhook"),
	}
	if err := mgr.Add(runnable{srv.Run}); err != nil {
		t.Fatal(err)
	}
	// As `orkestra run` does: the storage migration on the leader, trying
	// the built-in migrator first (envtest runs none: it falls back).
	sc, err := storage.NewController(sa, storage.ControllerOptions{
		CRDs:     plan.CRDNames(),
		Migrator: storage.Options{BuiltinTimeout: time.Second, BuiltinPoll: 200 * time.Millisecond},
		Registry: reg,
		Recorder: mgr.GetEventRecorder(operator.EventReporter),
		Log:      log.WithName("storage"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := mgr.Add(sc); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}()

	eventually(t, 30*time.Second, "the CA bundle in the CRD", func() error {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := admin.Get(ctx, types.NamespacedName{Name: "websites.demo.orkestra.io"}, &crd); err != nil {
			return err
		}
		if !bytes.Equal(crd.Spec.Conversion.Webhook.ClientConfig.CABundle, cm.CABundle()) {
			return fmt.Errorf("caBundle not injected")
		}
		return nil
	})

	// A Website written at v1alpha1: the API server converts it to the v1
	// storage version through the webhook; the operator (v1 entry) sees it.
	site := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "demo.orkestra.io/v1alpha1",
		"kind":       "Website",
		"metadata":   map[string]any{"name": "shop", "namespace": "default"},
		"spec":       map[string]any{"image": "nginx:1.27", "replicas": int64(2), "port": int64(8080), "tier": "pro", "theme": "dark"},
	}}
	eventually(t, 30*time.Second, "the Website to be created through /convert", func() error {
		return admin.Create(ctx, site.DeepCopy())
	})
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "default", Name: name} }
	eventually(t, 30*time.Second, "the Website's children", func() error {
		var d appsv1.Deployment
		if err := admin.Get(ctx, key("shop"), &d); err != nil {
			return err
		}
		if *d.Spec.Replicas != 2 || d.Spec.Template.Spec.Containers[0].Image != "nginx:1.27" {
			return fmt.Errorf("deployment %v %s", *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image)
		}
		for _, s := range []string{"shop-svc", "shop-lb"} {
			if err := admin.Get(ctx, key(s), &corev1.Service{}); err != nil {
				return err
			}
		}
		return nil
	})
	v1 := &unstructured.Unstructured{}
	v1.SetGroupVersionKind(schema.GroupVersionKind{Group: "demo.orkestra.io", Version: "v1", Kind: "Website"})
	eventually(t, 30*time.Second, "the Website's status", func() error {
		if err := admin.Get(ctx, key("shop"), v1); err != nil {
			return err
		}
		phase, _, _ := unstructured.NestedString(v1.Object, "status", "phase")
		if phase != "Running" {
			return fmt.Errorf("status %v", v1.Object["status"])
		}
		return nil
	})
	// Read back at v1alpha1: converted again by the webhook.
	alpha := &unstructured.Unstructured{}
	alpha.SetGroupVersionKind(schema.GroupVersionKind{Group: "demo.orkestra.io", Version: "v1alpha1", Kind: "Website"})
	if err := admin.Get(ctx, key("shop"), alpha); err != nil {
		t.Fatal(err)
	}
	if theme, _, _ := unstructured.NestedString(alpha.Object, "spec", "theme"); theme != "dark" {
		t.Fatalf("round trip through /convert lost spec.theme: %v", alpha.Object["spec"])
	}

	// Drift is corrected (update).
	var d appsv1.Deployment
	if err := admin.Get(ctx, key("shop"), &d); err != nil {
		t.Fatal(err)
	}
	d.Spec.Replicas = ptr.To(int32(7))
	if err := admin.Update(ctx, &d); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the drift to be corrected", func() error {
		if err := admin.Get(ctx, key("shop"), &d); err != nil {
			return err
		}
		if *d.Spec.Replicas != 2 {
			return fmt.Errorf("replicas %d", *d.Spec.Replicas)
		}
		return nil
	})
	// A condition that stops holding deletes its child (delete); a new one
	// creates a ConfigMap.
	patch := []byte(`{"spec":{"tier":"free","seo":{"enabled":true,"keywords":["a","b"]}}}`)
	if err := admin.Patch(ctx, v1, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "shop-lb deleted and shop-seo created", func() error {
		if err := admin.Get(ctx, key("shop-lb"), &corev1.Service{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("shop-lb: %v", err)
		}
		var cmap corev1.ConfigMap
		if err := admin.Get(ctx, key("shop-seo"), &cmap); err != nil {
			return err
		}
		if cmap.Data["keywords"] != "a,b" {
			return fmt.Errorf("data %v", cmap.Data)
		}
		return nil
	})
	// Events written by the ServiceAccount.
	eventually(t, 30*time.Second, "events about the Website", func() error {
		var evs eventsv1.EventList
		if err := admin.List(ctx, &evs, client.InNamespace("default")); err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Regarding.Name == "shop" && e.Reason == "Created" {
				return nil
			}
		}
		return fmt.Errorf("%d events, none Created for shop", len(evs.Items))
	})

	// The storage version changes: the migration rewrites the Website at
	// v1alpha1 and prunes storedVersions, all as the ServiceAccount.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := admin.Get(ctx, types.NamespacedName{Name: "websites.demo.orkestra.io"}, &crd); err != nil {
			return err
		}
		for i := range crd.Spec.Versions {
			crd.Spec.Versions[i].Storage = crd.Spec.Versions[i].Name == "v1alpha1"
		}
		return admin.Update(ctx, &crd)
	})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "storedVersions [v1alpha1] after the storage migration", func() error {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := admin.Get(ctx, types.NamespacedName{Name: "websites.demo.orkestra.io"}, &crd); err != nil {
			return err
		}
		if got := crd.Status.StoredVersions; len(got) != 1 || got[0] != "v1alpha1" {
			st, _ := sc.Status(crd.Name)
			return fmt.Errorf("storedVersions %v (migration: %+v)", got, st)
		}
		return nil
	})

	if got := forbidden.list(); len(got) > 0 {
		t.Fatalf("requests of the ServiceAccount were forbidden — the derived RBAC is not sufficient:\n%s", strings.Join(got, "\n"))
	}

	// Outside the RBAC: forbidden.
	saClient := newClient(t, sa)
	outside := map[string]error{
		"list secrets cluster-wide":                           saClient.List(ctx, &corev1.SecretList{}),
		"read another Secret in its namespace":                saClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "other"}, &corev1.Secret{}),
		"list pods (no hook declares pods)":                   saClient.List(ctx, &corev1.PodList{}),
		"delete a Deployment (never deleted by this katalog)": saClient.Delete(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "shop"}}),
		"create a ClusterRole": saClient.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "escalate"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}),
		"patch a CRD that is not the katalog's": saClient.Patch(ctx, &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "issuers.cert-manager.io"}},
			client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`))),
		"update another Lease": saClient.Update(ctx, leaseObject(ns, "someone-else")),
	}
	for what, err := range outside {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s as the ServiceAccount: %v, want Forbidden", what, err)
		}
	}
}

// runnable adapts a function to a manager Runnable that runs on every
// replica.
type runnable struct{ f func(context.Context) error }

func (r runnable) Start(ctx context.Context) error { return r.f(ctx) }
func (r runnable) NeedLeaderElection() bool        { return false }

func leaseObject(ns, name string) client.Object {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("coordination.k8s.io/v1")
	u.SetKind("Lease")
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetResourceVersion("1")
	return u
}

// TestOutputIsDeterministic: two runs print the same bytes, and every
// document parses back into the objects generated.
func TestOutputIsDeterministic(t *testing.T) {
	plan := websitePlan(t)
	var a, b bytes.Buffer
	in, err := manifests.Generate(plan, manifests.Options{CertManager: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.WriteYAML(&a); err != nil {
		t.Fatal(err)
	}
	in2, err := manifests.Generate(websitePlan(t), manifests.Options{CertManager: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := in2.WriteYAML(&b); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Fatal("two runs printed different output")
	}
	docs := strings.Split(a.String(), "\n---\n")[1:]
	us, _ := in.Unstructured()
	if len(docs) != len(us) {
		t.Fatalf("%d documents for %d objects", len(docs), len(us))
	}
	var kinds []string
	for i, d := range docs {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(us[i].Object)
		got, _ := json.Marshal(m)
		if string(want) != string(got) {
			t.Fatalf("document %d does not parse back to its object", i)
		}
		kinds = append(kinds, us[i].GetKind())
	}
	wantKinds := []string{"Namespace", "CustomResourceDefinition", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
		"ConfigMap", "Service", "Issuer", "Certificate", "Deployment", "NetworkPolicy", "PodDisruptionBudget"}
	if !slices.Equal(kinds, wantKinds) {
		t.Fatalf("kinds %v", kinds)
	}
}

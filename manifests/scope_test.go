package manifests_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/envassets/envtesting"
	"github.com/orkspace/orkestra-cel/manifests"
	"github.com/orkspace/orkestra-cel/operator"
)

// Issue 15 item 6: child kinds were granted and cached cluster-wide even
// when the operator watched one namespace (with secrets children it cached
// every Secret in the cluster). With --watch-namespace the custom
// resources, children and events are a Role in that namespace, only
// cluster-scoped resources (CRDs, admission policies, storage version
// migrations) stay cluster-wide, and the operator run with the generated identity
// and `--namespace` reconciles there without one forbidden request, while
// the same kinds elsewhere are forbidden.
func TestNamespaceScopedInstall(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cfg := envtesting.Start(t)
	admin := newClient(t, cfg)
	plan := websitePlan(t)
	const watched = "team-a"
	in, objs := generate(t, plan, manifests.Options{WatchNamespace: watched, CertManager: true})
	ns := in.Options.Namespace

	var kept []*unstructured.Unstructured
	for _, o := range objs {
		switch o.GetKind() {
		case "Issuer", "Certificate": // no cert-manager in envtest; nothing here converts
		case "ClusterRole":
			for _, r := range o.Object["rules"].([]any) {
				switch g := r.(map[string]any)["apiGroups"].([]any)[0]; g {
				case "apiextensions.k8s.io", "admissionregistration.k8s.io", "storagemigration.k8s.io":
				case "demo.orkestra.io":
					// The storage migration rewrites stored objects in every
					// namespace: list and patch only.
					if v := fmt.Sprint(r.(map[string]any)["verbs"]); v != "[list patch]" {
						t.Fatalf("the ClusterRole grants %s %s beyond the storage migration's list and patch", g, v)
					}
				default:
					t.Fatalf("the ClusterRole of a namespace-scoped install grants %s: %v", g, r)
				}
			}
			kept = append(kept, o)
		case "Role":
			if o.GetNamespace() == watched && !strings.Contains(fmt.Sprint(o.Object["rules"]), "deployments") {
				t.Fatalf("the watch Role lacks the children: %v", o.Object["rules"])
			}
			kept = append(kept, o)
		case "Deployment":
			if !strings.Contains(fmt.Sprint(o.Object["spec"]), "--namespace="+watched) {
				t.Fatalf("the Deployment does not run with --namespace=%s", watched)
			}
			kept = append(kept, o)
		default:
			kept = append(kept, o)
		}
	}
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: watched}}); err != nil {
		t.Fatal(err)
	}
	apply(t, ctx, admin, kept)

	forbidden := &forbiddenLog{}
	sa := rest.CopyConfig(cfg)
	sa.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + ns + ":" + in.ServiceAccount,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
	}
	sa.Wrap(forbidden.wrap)
	log := testr.NewWithOptions(t, testr.Options{Verbosity: 0})
	mgr, err := operator.NewManager(sa, plan, operator.ManagerOptions{
		Namespace:                    watched,
		GracefulShutdownTimeout:      5 * time.Second,
		SkipControllerNameValidation: true,
		Log:                          log,
	})
	if err != nil {
		t.Fatal(err)
	}
	op := operator.New(plan, operator.Options{Log: log.WithName("operator"), Registry: prometheus.NewRegistry(), SkipControllerNameValidation: true})
	if err := op.SetupWithManager(mgr); err != nil {
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

	site := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "demo.orkestra.io/v1",
		"kind":       "Website",
		"metadata":   map[string]any{"name": "shop", "namespace": watched},
		"spec":       map[string]any{"image": "nginx:1.27", "replicas": int64(2), "port": int64(8080), "tier": "pro"},
	}}
	if err := admin.Create(ctx, site); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the Website's Deployment in "+watched, func() error {
		return admin.Get(ctx, types.NamespacedName{Namespace: watched, Name: "shop"}, &appsv1.Deployment{})
	})
	if got := forbidden.list(); len(got) > 0 {
		t.Fatalf("requests of the ServiceAccount were forbidden — the namespaced RBAC is not sufficient:\n%s", strings.Join(got, "\n"))
	}
	saClient := newClient(t, sa)
	for what, err := range map[string]error{
		"list deployments cluster-wide":    saClient.List(ctx, &appsv1.DeploymentList{}),
		"list deployments in default":      saClient.List(ctx, &appsv1.DeploymentList{}, client.InNamespace("default")),
		"list services in default":         saClient.List(ctx, &corev1.ServiceList{}, client.InNamespace("default")),
		"get a Website outside " + watched: saClient.Get(ctx, types.NamespacedName{Namespace: "default", Name: "shop"}, site.DeepCopy()),
		"list configmaps in kube-system":   saClient.List(ctx, &corev1.ConfigMapList{}, client.InNamespace("kube-system")),
	} {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s as the ServiceAccount: %v, want Forbidden", what, err)
		}
	}
}

// An entry whose custom resources are cluster-scoped cannot be served from
// one namespace.
func TestNamespaceScopedInstallRefusesClusterScopedEntries(t *testing.T) {
	plan := websitePlan(t)
	plan.Entries[0].Namespaced = false
	_, err := manifests.Generate(plan, manifests.Options{WatchNamespace: "team-a"})
	want := "--watch-namespace: the custom resources of " + plan.Entries[0].Name + " (Website) are cluster-scoped, so an operator watching one namespace never sees them; install cluster-wide (drop --watch-namespace)"
	if err == nil || err.Error() != want {
		t.Fatalf("%v\nwant %s", err, want)
	}
}

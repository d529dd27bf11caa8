package admission_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/admission"
	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/gotmpl"
	"github.com/orkspace/orkestra-cel/envassets/envtesting"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/lifecycle/crdspec"
	"github.com/orkspace/orkestra-cel/operator"
)

func compile(t *testing.T, dir string) *engine.Plan {
	t.Helper()
	k, diags := katalog.Load(filepath.Join(dir, "katalog.yaml"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	c, err := cel.New(cel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	plan, cdiags := engine.Compile(k, engine.Backends{CEL: c, Legacy: gotmpl.New(c)}, engine.CompileOptions{})
	if cdiags.HasErrors() {
		t.Fatal(cdiags)
	}
	return plan
}

// warnings collects the API server's Warning headers.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, msg)
}

func (w *warnings) take() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := strings.Join(w.msgs, "\n")
	w.msgs = nil
	return s
}

func platform(ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "admission.example.io/v1", "kind": "Platform", "spec": spec}}
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// The katalog's rules run in a real kube-apiserver: a deny rule on the
// object's own fields as the CRD's validation rule, a rule that reads the
// request and a warn rule as ValidatingAdmissionPolicies, defaults and
// overrides as a MutatingAdmissionPolicy, deletion and namespace protection
// as policies; a rule the katalog drops is removed.
func TestAdmissionInTheAPIServer(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"crd.yaml", "katalog.yaml"} {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plan := compile(t, dir)

	cfg := envtesting.Start(t)
	warn := &warnings{}
	cfg = rest.CopyConfig(cfg)
	cfg.WarningHandler = warn
	scheme := operator.Scheme()
	_ = apiextensionsv1.AddToScheme(scheme)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	src := plan.Entries[0].Source.CRD
	spec, _ := crdspec.Spec(plan, src, apiextensionsv1.WebhookClientConfig{})
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: src.Object.Name}, Spec: spec}
	if err := c.Create(ctx, crd); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"team-a", "elsewhere"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := admission.Check(dc, plan); err != nil {
		t.Fatalf("the API server of the tests serves the policy APIs: %v", err)
	}
	applied, _, err := admission.Apply(ctx, c, scheme, plan)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("applied %v", applied)

	// Policies take effect once the API server has loaded them: retry the
	// first create until the namespace policy answers.
	create := func(u *unstructured.Unstructured) error { return c.Create(ctx, u.DeepCopy()) }
	deadline := time.Now().Add(time.Minute)
	for {
		err := create(platform("elsewhere", "p0", map[string]any{"image": "registry.internal/app", "rateLimit": int64(5)}))
		if err != nil && strings.Contains(err.Error(), "may not be created in this namespace") {
			break
		}
		if err == nil {
			_ = c.Delete(ctx, platform("elsewhere", "p0", nil))
		}
		if time.Now().After(deadline) {
			t.Fatalf("namespace protection never refused a create in namespace elsewhere: %v", err)
		}
		time.Sleep(300 * time.Millisecond)
	}

	// The CRD route: the deny rule on spec.image is the CRD's own rule.
	err = create(platform("default", "p1", map[string]any{"image": "docker.io/app", "rateLimit": int64(5)}))
	if err == nil || !strings.Contains(err.Error(), "images must come from registry.internal/") || !strings.Contains(err.Error(), "spec.image") {
		t.Fatalf("image from another registry: %v", err)
	}
	// The policy route: a rule that reads the request.
	err = create(platform("default", "p2", map[string]any{"image": "registry.internal/app", "replicas": int64(30), "rateLimit": int64(5)}))
	if err == nil || !strings.Contains(err.Error(), "at most 20 replicas unless you are capacity-admin") {
		t.Fatalf("30 replicas: %v", err)
	}
	// A warn rule: admitted with the API server's Warning header; the
	// mutations stored.
	warn.take()
	if err := create(platform("team-a", "p3", map[string]any{"image": "registry.internal/app", "owner": "someone"})); err != nil {
		t.Fatal(err)
	}
	if w := warn.take(); !strings.Contains(w, "declare spec.rateLimit for production readiness") {
		t.Fatalf("warnings %q", w)
	}
	got := platform("team-a", "p3", nil)
	if err := c.Get(ctx, client.ObjectKeyFromObject(got), got); err != nil {
		t.Fatal(err)
	}
	if env, _, _ := unstructured.NestedString(got.Object, "spec", "environment"); env != "development" {
		t.Fatalf("default environment: %q", env)
	}
	if owner, _, _ := unstructured.NestedString(got.Object, "spec", "owner"); owner != "platform-team" {
		t.Fatalf("override owner: %q", owner)
	}

	// Deletion protection: the CRD cannot be deleted, and the message says why.
	err = c.Delete(ctx, &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: src.Object.Name}})
	if err == nil || !strings.Contains(err.Error(), "protected from deletion by katalog platform (security.deletionProtection)") {
		t.Fatalf("CRD delete: %v", err)
	}

	// A custom resource labelled orkestra.io/deletion-protection=true cannot
	// be deleted (upstream protects them by label); one without the label can.
	guarded := platform("team-a", "guarded", map[string]any{"image": "registry.internal/app", "rateLimit": int64(5)})
	guarded.SetLabels(map[string]string{katalog.DeletionProtectionLabel: "true"})
	for _, u := range []*unstructured.Unstructured{guarded, platform("team-a", "free", map[string]any{"image": "registry.internal/app", "rateLimit": int64(5)})} {
		if err := create(u); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Delete(ctx, platform("team-a", "free", nil)); err != nil {
		t.Fatalf("deleting an unlabelled platform: %v", err)
	}
	deadline = time.Now().Add(time.Minute)
	for {
		err = c.Delete(ctx, platform("team-a", "guarded", nil))
		if err != nil && strings.Contains(err.Error(), "the object carries orkestra.io/deletion-protection=true and katalog platform protects it from deletion (security.deletionProtection); remove the label, then delete it") {
			break
		}
		if err == nil || time.Now().After(deadline) {
			t.Fatalf("a labelled platform was not protected: %v", err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	unlabelled := platform("team-a", "guarded", nil)
	if err := c.Get(ctx, client.ObjectKeyFromObject(unlabelled), unlabelled); err != nil {
		t.Fatal(err)
	}
	unlabelled.SetLabels(nil)
	if err := c.Update(ctx, unlabelled); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, platform("team-a", "guarded", nil)); err != nil {
		t.Fatalf("deleting the platform once unlabelled: %v", err)
	}

	// A new revision without the warn rule: its policy is removed, the
	// others stay.
	k := strings.Replace(mustRead(t, filepath.Join(dir, "katalog.yaml")), `          - field: spec.rateLimit
            operator: exists
            message: declare spec.rateLimit for production readiness
            action: warn
`, "", 1)
	if err := os.WriteFile(filepath.Join(dir, "katalog.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	_, deleted, err := admission.Apply(ctx, c, scheme, compile(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	want := "ValidatingAdmissionPolicyBinding/orkestra-platform-platform-warn ValidatingAdmissionPolicy/orkestra-platform-platform-warn"
	if fmt.Sprint(deleted) != "["+want+"]" {
		t.Fatalf("deleted %v, want %s", deleted, want)
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

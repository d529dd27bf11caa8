package manifests_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/orkspace/orkestra-cel/envassets/envtesting"

	"github.com/go-logr/logr"
	celgo "github.com/google/cel-go/cel"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/orkspace/orkestra-cel/engine"
	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/gotmpl"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/manifests"
	"github.com/orkspace/orkestra-cel/operator"
)

func init() { ctrllog.SetLogger(logr.Discard()) }

func compile(t testing.TB, files ...string) *engine.Plan {
	t.Helper()
	k, diags := katalog.Load(files...)
	if diags.HasErrors() {
		t.Fatalf("loading %v: %v", files, diags.Errors())
	}
	cel, err := celengine.New(celengine.Options{Libraries: []celgo.EnvOption{gotmpl.CELLibrary()}})
	if err != nil {
		t.Fatal(err)
	}
	plan, cdiags := engine.Compile(k, engine.Backends{CEL: cel, Legacy: gotmpl.New(cel)}, engine.CompileOptions{})
	if cdiags.HasErrors() {
		t.Fatalf("compiling %v: %v", files, cdiags.Errors())
	}
	return plan
}

func websitePlan(t testing.TB) *engine.Plan {
	return compile(t, filepath.Join(envtesting.RepoRoot(t), "examples", "website", "katalog.yaml"))
}

func generate(t testing.TB, plan *engine.Plan, opts manifests.Options) (*manifests.Install, []*unstructured.Unstructured) {
	t.Helper()
	in, err := manifests.Generate(plan, opts)
	if err != nil {
		t.Fatal(err)
	}
	us, err := in.Unstructured()
	if err != nil {
		t.Fatal(err)
	}
	return in, us
}

func newClient(t testing.TB, cfg *rest.Config) client.Client {
	t.Helper()
	scheme := operator.Scheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// apply server-side-applies the objects in order, as
// `kubectl apply --server-side` does.
func apply(t testing.TB, ctx context.Context, c client.Client, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.FieldOwner("test-kubectl"), client.ForceOwnership)
		if err != nil {
			t.Fatalf("server-side apply of %s %s/%s rejected: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
}

// eventually polls f until it returns nil, failing after timeout.
func eventually(t testing.TB, timeout time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// forbiddenLog records every request answered 403 Forbidden.
type forbiddenLog struct {
	mu   sync.Mutex
	reqs []string
}

func (f *forbiddenLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if err == nil && resp.StatusCode == http.StatusForbidden {
			f.mu.Lock()
			f.reqs = append(f.reqs, fmt.Sprintf("%s %s", r.Method, r.URL.RequestURI()))
			f.mu.Unlock()
		}
		return resp, err
	})
}

func (f *forbiddenLog) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.reqs...)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

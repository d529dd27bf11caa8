package storage

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// The tests run against a real kube-apiserver and etcd (envtest) and read
// what etcd holds directly, as the apiextensions integration tests do.

var (
	testEnv *envtest.Environment
	testCfg *rest.Config
	ext     apiextensionsclient.Interface
	dyn     dynamic.Interface
)

func TestMain(m *testing.M) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "FAIL: KUBEBUILDER_ASSETS is not set; export KUBEBUILDER_ASSETS=\"$(hack/envtest-assets.sh)\"")
		os.Exit(1)
	}
	testEnv = &envtest.Environment{}
	cfg, err := testEnv.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: starting envtest: %v\n", err)
		os.Exit(1)
	}
	cfg.QPS, cfg.Burst = 1000, 2000
	testCfg = cfg
	ext = apiextensionsclient.NewForConfigOrDie(cfg)
	dyn = dynamic.NewForConfigOrDie(cfg)
	code := m.Run()
	_ = testEnv.Stop()
	os.Exit(code)
}

// testCRD is a namespaced CRD of group storage.test.orkestra.io served at
// v1 and v2 with the same schema, v1 storing, no conversion webhook: the
// API server converts by rewriting apiVersion, and what etcd holds names
// the version an object was written at.
func testCRD(plural string) *apiextensionsv1.CustomResourceDefinition {
	schema := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"n": {Type: "integer"}}},
		},
	}}
	kind := strings.ToUpper(plural[:1]) + strings.TrimSuffix(plural[1:], "s")
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + ".storage.test.orkestra.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "storage.test.orkestra.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: kind, ListKind: kind + "List", Singular: strings.TrimSuffix(plural, "s")},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: schema},
				{Name: "v2", Served: true, Storage: false, Schema: schema},
			},
		},
	}
}

// installCRD creates crd and waits until it serves.
func installCRD(t testing.TB, crd *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	ctx := context.Background()
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating CRD %s: %v", crd.Name, err)
	}
	gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: "v1", Resource: crd.Spec.Names.Plural}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("CRD %s does not serve: %v", crd.Name, err)
	}
	t.Cleanup(func() {
		_ = ext.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), crd.Name, metav1.DeleteOptions{})
	})
}

func gvrOf(crd *apiextensionsv1.CustomResourceDefinition, version string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: crd.Spec.Group, Version: version, Resource: crd.Spec.Names.Plural}
}

// createObjects creates n objects at version v, spread over two
// namespaces, named <plural>-<i>; it returns their namespace/name.
func createObjects(t testing.TB, crd *apiextensionsv1.CustomResourceDefinition, v string, n int) []string {
	t.Helper()
	ctx := context.Background()
	for _, ns := range []string{"ns-a", "ns-b"} {
		nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		if _, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx, nsObj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	names := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	for i := range n {
		ns := []string{"ns-a", "ns-b"}[i%2]
		name := fmt.Sprintf("%s-%05d", crd.Spec.Names.Plural, i)
		names[i] = ns + "/" + name
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": crd.Spec.Group + "/" + v, "kind": crd.Spec.Names.Kind,
				"metadata": map[string]any{"name": name, "namespace": ns},
				"spec":     map[string]any{"n": int64(i)},
			}}
			if _, err := dyn.Resource(gvrOf(crd, v)).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("creating objects: %v", err)
	}
	return names
}

// setStorage makes v the storage version of the CRD named name.
func setStorage(t testing.TB, name, v string) {
	t.Helper()
	if err := switchStorage(name, v); err != nil {
		t.Fatal(err)
	}
}

func switchStorage(name, v string) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for i := range crd.Spec.Versions {
			crd.Spec.Versions[i].Storage = crd.Spec.Versions[i].Name == v
		}
		_, err = ext.ApiextensionsV1().CustomResourceDefinitions().Update(context.Background(), crd, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("making %s the storage version of %s: %w", v, name, err)
	}
	return nil
}

func getCRD(t testing.TB, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return crd
}

// storedAPIVersions reads etcd directly (its JSON gateway) and returns, by
// namespace/name, the apiVersion each object of crd is stored with.
func storedAPIVersions(t testing.TB, crd *apiextensionsv1.CustomResourceDefinition) map[string]string {
	t.Helper()
	prefix := "/registry/" + crd.Spec.Group + "/" + crd.Spec.Names.Plural + "/"
	end := prefix[:len(prefix)-1] + string(rune(prefix[len(prefix)-1]+1))
	body, _ := json.Marshal(map[string]string{
		"key":       base64.StdEncoding.EncodeToString([]byte(prefix)),
		"range_end": base64.StdEncoding.EncodeToString([]byte(end)),
	})
	resp, err := http.Post(testEnv.ControlPlane.Etcd.URL.String()+"/v3/kv/range", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("reading etcd: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("reading etcd: %s: %s", resp.Status, raw)
	}
	var out struct {
		KVs []struct{ Key, Value []byte } `json:"kvs"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("reading etcd: %v: %s", err, raw)
	}
	got := map[string]string{}
	for _, kv := range out.KVs {
		var obj struct {
			APIVersion string `json:"apiVersion"`
		}
		if err := json.Unmarshal(kv.Value, &obj); err != nil {
			t.Fatalf("etcd value of %s is not JSON: %v", kv.Key, err)
		}
		got[strings.TrimPrefix(string(kv.Key), prefix)] = obj.APIVersion
	}
	return got
}

// requestCounter counts API requests by method and a substring of the path.
type requestCounter struct {
	mu    sync.Mutex
	calls []string // "METHOD path"
	total atomic.Int64
}

func (c *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		c.total.Add(1)
		c.mu.Lock()
		c.calls = append(c.calls, r.Method+" "+r.URL.Path)
		c.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

func (c *requestCounter) reset() {
	c.mu.Lock()
	c.calls = nil
	c.mu.Unlock()
	c.total.Store(0)
}

func (c *requestCounter) count(method, pathPart string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, call := range c.calls {
		if strings.HasPrefix(call, method+" ") && strings.Contains(call, pathPart) {
			n++
		}
	}
	return n
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// countingConfig is testCfg with its requests counted by c.
func countingConfig(c *requestCounter) *rest.Config {
	cfg := rest.CopyConfig(testCfg)
	cfg.Wrap(c.wrap)
	return cfg
}

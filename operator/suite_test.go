package operator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	celgo "github.com/google/cel-go/cel"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/orkspace/orkestra-cel/engine"
	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/gotmpl"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/operator/external"
)

// The tests of this package run the operator against a real kube-apiserver
// and etcd (controller-runtime's envtest), started once for the package with
// every CRD the tests use installed up front: the API server delays the first
// custom resource after a CRD becomes Established by 2 s.

var (
	testEnv *envtest.Environment
	testCfg *rest.Config
	// k8s reads and writes directly (no cache), for the tests' own checks.
	k8s client.Client
	// apiCalls counts the HTTP requests of managers built on testCfg.
	apiCalls requestCounter
)

func TestMain(m *testing.M) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, `FAIL: KUBEBUILDER_ASSETS is not set.
The operator's tests run against a real kube-apiserver and etcd (envtest).
Build or find them with the project's script and export the directory:

    export KUBEBUILDER_ASSETS="$(hack/envtest-assets.sh)"

(make test does this for you).`)
		os.Exit(1)
	}
	klog.SetOutput(os.Stderr)
	ctrl.SetLogger(klog.NewKlogr().V(4))
	testEnv = &envtest.Environment{
		CRDDirectoryPaths: []string{
			filepath.Join("testdata", "crds"),
			filepath.Join("..", "examples", "website", "crd.yaml"),
			filepath.Join("..", "examples", "legacy-website", "crd.yaml"),
			filepath.Join("..", "examples", "state-machine", "crd.yaml"),
			filepath.Join("..", "examples", "observe", "crd.yaml"),
		},
		ErrorIfCRDPathMissing: true,
	}
	// Room for the Services of the benchmarks (envtest's default is a /24).
	testEnv.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", "10.96.0.0/12")
	cfg, err := testEnv.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: starting envtest (kube-apiserver and etcd from KUBEBUILDER_ASSETS=%s): %v\n", os.Getenv("KUBEBUILDER_ASSETS"), err)
		os.Exit(1)
	}
	// Faster than client-go's defaults: many objects in the benchmark.
	cfg.QPS, cfg.Burst = 500, 1000
	testCfg = rest.CopyConfig(cfg)
	testCfg.Wrap(apiCalls.wrap)
	k8s, err = client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: client: %v\n", err)
		_ = testEnv.Stop()
		os.Exit(1)
	}
	code := m.Run()
	if err := testEnv.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping envtest: %v\n", err)
	}
	os.Exit(code)
}

// ---- plans ----

var (
	backendsOnce sync.Once
	backends     engine.Backends
	backendsErr  error
)

func testBackends(t testing.TB) engine.Backends {
	t.Helper()
	backendsOnce.Do(func() {
		cel, err := celengine.New(celengine.Options{Libraries: []celgo.EnvOption{gotmpl.CELLibrary()}})
		if err != nil {
			backendsErr = err
			return
		}
		backends = engine.Backends{CEL: cel, Legacy: gotmpl.New(cel)}
	})
	if backendsErr != nil {
		t.Fatalf("CEL environment: %v", backendsErr)
	}
	return backends
}

// loadPlan loads and compiles a katalog file.
func loadPlan(t testing.TB, files ...string) *engine.Plan {
	t.Helper()
	k, diags := katalog.Load(files...)
	if diags.HasErrors() {
		t.Fatalf("loading %v:\n%v", files, diags.Errors())
	}
	plan, cdiags := engine.Compile(k, testBackends(t), engine.CompileOptions{})
	if cdiags.HasErrors() {
		t.Fatalf("compiling %v:\n%v", files, cdiags.Errors())
	}
	return plan
}

// widgetPlan compiles a katalog with one entry for the Widget CRD whose
// operatorBox is box (YAML, indented from column 0).
func widgetPlan(t testing.TB, box string) *engine.Plan {
	t.Helper()
	return widgetPlanWith(t, "", box)
}

// widgetPlanWith is widgetPlan with extra entry-level lines (indented for
// the entry, e.g. "      allowedNamespaces: [a]\n").
func widgetPlanWith(t testing.TB, entryLines, box string) *engine.Plan {
	t.Helper()
	dir := t.TempDir()
	crd, err := os.ReadFile(filepath.Join("testdata", "crds", "widget.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), crd, 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(`apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata:
  name: test
spec:
  crds:
    widget:
      crdFile: ./crd.yaml
      workers: 2
      apiTypes:
        group: test.orkestra.io
        version: v1
        kind: Widget
        plural: widgets
`)
	b.WriteString(entryLines)
	b.WriteString("      operatorBox:\n")
	for _, line := range strings.Split(strings.Trim(box, "\n"), "\n") {
		b.WriteString("        " + line + "\n")
	}
	file := filepath.Join(dir, "katalog.yaml")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return loadPlan(t, file)
}

// ---- the operator under test ----

// harness runs one operator (its own manager) watching one namespace.
type harness struct {
	t      testing.TB
	ns     string
	plan   *engine.Plan
	op     *Operator
	mgr    manager.Manager
	client *countingClient
	clock  *fakeClock
	reg    *prometheus.Registry
	cancel context.CancelFunc
	done   chan error
}

type harnessOptions struct {
	ns             string
	leaderElection bool
	leaseID        string
	// clusterWide: the manager watches every namespace (the katalog's own
	// namespace rules then decide).
	clusterWide bool
	// wholeObjects: the caches hold whole objects (ManagerOptions and
	// Options.WholeObjects).
	wholeObjects bool
	// external makes the katalog's external calls (nil: the default
	// client).
	external *external.Client
	// clockAt is the operator clock's reading at start (zero: 2030-01-01
	// 12:00 UTC).
	clockAt time.Time
}

// startOperator starts an operator for plan in a fresh namespace.
func startOperator(t testing.TB, plan *engine.Plan, opts ...func(*harnessOptions)) *harness {
	t.Helper()
	var o harnessOptions
	for _, f := range opts {
		f(&o)
	}
	if o.ns == "" {
		o.ns = newNamespace(t)
	}
	h := &harness{t: t, ns: o.ns, plan: plan, clock: &fakeClock{}, reg: prometheus.NewRegistry()}
	h.clock.set(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))
	if !o.clockAt.IsZero() {
		h.clock.set(o.clockAt)
	}
	mo := ManagerOptions{Namespace: o.ns, SkipControllerNameValidation: true, GracefulShutdownTimeout: 5 * time.Second, WholeObjects: o.wholeObjects}
	if o.clusterWide {
		mo.Namespace = ""
	}
	if o.leaderElection {
		mo.LeaderElection = true
		mo.LeaderElectionID = o.leaseID
		mo.LeaderElectionNamespace = o.ns
		mo.LeaseDuration, mo.RenewDeadline, mo.RetryPeriod = 3*time.Second, 2*time.Second, 500*time.Millisecond
	}
	mgr, err := NewManager(testCfg, plan, mo)
	if err != nil {
		t.Fatalf("manager: %v", err)
	}
	h.mgr = mgr
	h.op = New(plan, Options{
		Registry:                     h.reg,
		Now:                          h.clock.now,
		SkipControllerNameValidation: true,
		RequeueOnDeleteJob:           200 * time.Millisecond,
		WholeObjects:                 o.wholeObjects,
		External:                     o.external,
		WrapClient: func(c client.Client) client.Client {
			h.client = &countingClient{Client: c}
			return h.client
		},
	})
	if err := h.op.SetupWithManager(mgr); err != nil {
		t.Fatalf("setup: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan error, 1)
	go func() { h.done <- mgr.Start(ctx) }()
	t.Cleanup(h.stop)
	eventually(t, "the operator's caches to sync", func() error { return h.op.Ready() })
	return h
}

func (h *harness) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	h.cancel = nil
	select {
	case err := <-h.done:
		if err != nil {
			h.t.Errorf("manager stopped with: %v", err)
		}
	case <-time.After(30 * time.Second):
		h.t.Errorf("manager did not stop within 30s")
	}
}

// controller returns the entry controller of the entry named name.
func (h *harness) controller(name string) *entryController {
	h.t.Helper()
	e := h.op.entries[name]
	if e == nil {
		h.t.Fatalf("no controller for entry %q", name)
	}
	return e
}

// reconcileNow runs one reconcile of the named custom resource directly.
func (h *harness) reconcileNow(entry, name string) reconcile.Result {
	h.t.Helper()
	res, err := h.controller(entry).Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: h.ns, Name: name}})
	if err != nil {
		h.t.Fatalf("reconcile %s: %v", name, err)
	}
	return res
}

// idle waits until no reconcile is queued or running for a while.
func (h *harness) idle(entry string) {
	h.t.Helper()
	e := h.controller(entry)
	quiet := 0
	eventually(h.t, "the work queue to drain", func() error {
		if e.queueDepth() == 0 && e.active.Load() == 0 {
			quiet++
		} else {
			quiet = 0
		}
		if quiet < 6 {
			return fmt.Errorf("queue %d, active %d", e.queueDepth(), e.active.Load())
		}
		return nil
	})
}

// ---- helpers ----

var nsSeq atomic.Int64

func newNamespace(t testing.TB) string {
	t.Helper()
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	name := fmt.Sprintf("t%d-%s", nsSeq.Add(1), hex.EncodeToString(b))
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatalf("namespace: %v", err)
	}
	return name
}

// eventually polls f until it returns nil, failing the test after 30s.
func eventually(t testing.TB, what string, f func() error) {
	t.Helper()
	eventuallyWithin(t, 30*time.Second, what, f)
}

func eventuallyWithin(t testing.TB, d time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// never checks that f keeps returning nil for d.
func never(t testing.TB, d time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if err := f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// neverReconciled fails t when name's reconciler reads it again (its gets
// move past since) within 2 s: what reconciles nothing, as it says.
func neverReconciled(t testing.TB, c *countingClient, name string, since int, what string) {
	t.Helper()
	never(t, 2*time.Second, what, func() error {
		if n := c.getsOf(name); n != since {
			return fmt.Errorf("%s reconciled %d times", name, n-since)
		}
		return nil
	})
}

func widget(ns, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "test.orkestra.io/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec":       spec,
	}}
}

func create(t testing.TB, obj client.Object) {
	t.Helper()
	if err := k8s.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %s %s: %v", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
	}
}

// get reads obj (typed or unstructured with its GVK set) by name.
func get(ns, name string, obj client.Object) error {
	return k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, obj)
}

func mustGet(t testing.TB, ns, name string, obj client.Object) {
	t.Helper()
	if err := get(ns, name, obj); err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
}

// getCR reads a custom resource of the given GVK-bearing object.
func getWidget(t testing.TB, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := widget(ns, name, nil)
	mustGet(t, ns, name, u)
	return u
}

// absent returns nil once the object is gone.
func absent(ns, name string, obj client.Object) error {
	err := get(ns, name, obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("%s still exists", name)
}

// updateWidget applies f to the live widget and writes it, retrying conflicts.
func updateWidget(t testing.TB, ns, name string, f func(u *unstructured.Unstructured)) {
	t.Helper()
	eventually(t, "updating "+name, func() error {
		u := widget(ns, name, nil)
		if err := get(ns, name, u); err != nil {
			return err
		}
		f(u)
		return k8s.Update(context.Background(), u)
	})
}

// readyCondition returns the widget's Ready condition.
func readyCondition(u *unstructured.Unstructured) (map[string]any, bool) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == ConditionReady {
			return m, true
		}
	}
	return nil, false
}

// converged waits for the widget's Ready=True at its current generation.
func converged(t testing.TB, ns, name string) *unstructured.Unstructured {
	t.Helper()
	var u *unstructured.Unstructured
	eventually(t, name+" to be Ready", func() error {
		u = widget(ns, name, nil)
		if err := get(ns, name, u); err != nil {
			return err
		}
		c, ok := readyCondition(u)
		if !ok {
			return errors.New("no Ready condition")
		}
		og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		if c["status"] != "True" || og != u.GetGeneration() {
			return fmt.Errorf("Ready=%v (%v: %v), observedGeneration %d of %d", c["status"], c["reason"], c["message"], og, u.GetGeneration())
		}
		return nil
	})
	return u
}

// ---- counting ----

// countingClient counts the write calls the reconcilers make.
type countingClient struct {
	client.Client
	mu     sync.Mutex
	writes []string
	// gets counts the reads of each object by name.
	gets map[string]int
}

func (c *countingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.mu.Lock()
	if c.gets == nil {
		c.gets = map[string]int{}
	}
	c.gets[key.Name]++
	c.mu.Unlock()
	return c.Client.Get(ctx, key, obj, opts...)
}

// getsOf returns how often the object named name was read.
func (c *countingClient) getsOf(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gets[name]
}

func (c *countingClient) record(verb string, obj client.Object) {
	kind := fmt.Sprintf("%T", obj)
	if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Kind != "" {
		kind = gvk.Kind
	}
	c.mu.Lock()
	c.writes = append(c.writes, verb+" "+kind+" "+obj.GetName())
	c.mu.Unlock()
}

// Writes returns the writes so far and forgets them.
func (c *countingClient) takeWrites() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.writes
	c.writes = nil
	return w
}

func (c *countingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.record("create", obj)
	return c.Client.Create(ctx, obj, opts...)
}

func (c *countingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.record("update", obj)
	return c.Client.Update(ctx, obj, opts...)
}

func (c *countingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	c.record("patch", obj)
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c *countingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	c.record("delete", obj)
	return c.Client.Delete(ctx, obj, opts...)
}

func (c *countingClient) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	c.record("deleteAllOf", obj)
	return c.Client.DeleteAllOf(ctx, obj, opts...)
}

func (c *countingClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	if o, ok := obj.(client.Object); ok {
		c.record("apply", o)
	} else {
		c.mu.Lock()
		c.writes = append(c.writes, "apply")
		c.mu.Unlock()
	}
	return c.Client.Apply(ctx, obj, opts...)
}

func (c *countingClient) Status() client.SubResourceWriter {
	return &countingStatus{SubResourceWriter: c.Client.Status(), c: c}
}

func (c *countingClient) SubResource(name string) client.SubResourceClient {
	return &countingSubResource{SubResourceClient: c.Client.SubResource(name), c: c}
}

type countingStatus struct {
	client.SubResourceWriter
	c *countingClient
}

func (s *countingStatus) Create(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	s.c.record("status-create", obj)
	return s.SubResourceWriter.Create(ctx, obj, sub, opts...)
}

func (s *countingStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	s.c.record("status-update", obj)
	return s.SubResourceWriter.Update(ctx, obj, opts...)
}

func (s *countingStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	s.c.record("status-patch", obj)
	return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

func (s *countingStatus) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	s.c.mu.Lock()
	s.c.writes = append(s.c.writes, "status-apply")
	s.c.mu.Unlock()
	return s.SubResourceWriter.Apply(ctx, obj, opts...)
}

type countingSubResource struct {
	client.SubResourceClient
	c *countingClient
}

func (s *countingSubResource) Create(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	s.c.record("subresource-create", obj)
	return s.SubResourceClient.Create(ctx, obj, sub, opts...)
}

func (s *countingSubResource) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	s.c.record("subresource-update", obj)
	return s.SubResourceClient.Update(ctx, obj, opts...)
}

func (s *countingSubResource) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	s.c.record("subresource-patch", obj)
	return s.SubResourceClient.Patch(ctx, obj, patch, opts...)
}

// requestCounter counts HTTP requests to the API server by method; watch
// streams are counted apart. It keeps the Accept header last sent for
// each path (what form of object a list or watch asked for).
type requestCounter struct {
	mu      sync.Mutex
	byVerb  map[string]int64
	watches int64
	accept  map[string]string
}

func (r *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		r.mu.Lock()
		if r.byVerb == nil {
			r.byVerb, r.accept = map[string]int64{}, map[string]string{}
		}
		r.accept[req.URL.Path] = req.Header.Get("Accept")
		if req.URL.Query().Get("watch") == "true" {
			r.watches++
		} else {
			r.byVerb[req.Method]++
		}
		r.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

// total returns the requests (watches excluded) counted so far.
func (r *requestCounter) total() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n int64
	for _, v := range r.byVerb {
		n += v
	}
	return n
}

// acceptOf returns the Accept header last sent for path.
func (r *requestCounter) acceptOf(path string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.accept[path]
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// fakeClock is the operator's clock in tests (rotateAfter).
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

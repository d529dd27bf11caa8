// Package lifecycle_test walks a CRD through the whole version lifecycle of
// the Kubernetes "Versions in CustomResourceDefinitions" page against a real
// kube-apiserver and etcd, with Orkestra's pieces doing each step: objects
// at v1 → v2 added as the storage version → the storage migration (stopped
// half-way and resumed by a new controller) → every object stored at v2 in
// etcd and storedVersions [v2] → v1 deprecated, the Warning header seen →
// `versions` says v1 is safe to stop serving → v1 no longer served → v1
// removed. Each step's katalog revision passes `check --against` the one
// before.
package lifecycle_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	celgo "github.com/google/cel-go/cel"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/orkspace/orkestra-cel/engine"
	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/conversion"
	"github.com/orkspace/orkestra-cel/engine/gotmpl"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/lifecycle/compat"
	"github.com/orkspace/orkestra-cel/lifecycle/crdspec"
	"github.com/orkspace/orkestra-cel/lifecycle/storage"
	"github.com/orkspace/orkestra-cel/lifecycle/versions"
	"github.com/orkspace/orkestra-cel/webhook"
	"github.com/orkspace/orkestra-cel/webhook/certs"
)

const (
	crdName = "gizmos.lifecycle.orkestra.io"
	group   = "lifecycle.orkestra.io"
	objects = 40
)

var (
	testEnv *envtest.Environment
	testCfg *rest.Config
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
	code := m.Run()
	_ = testEnv.Stop()
	os.Exit(code)
}

func compile(t *testing.T, rev string) *engine.Plan {
	t.Helper()
	k, diags := katalog.Load(filepath.Join("testdata", rev))
	if diags.HasErrors() {
		t.Fatalf("%s: %v", rev, diags)
	}
	cel, err := celengine.New(celengine.Options{Libraries: []celgo.EnvOption{gotmpl.CELLibrary()}})
	if err != nil {
		t.Fatal(err)
	}
	plan, cdiags := engine.Compile(k, engine.Backends{CEL: cel, Legacy: gotmpl.New(cel)}, engine.CompileOptions{})
	if cdiags.HasErrors() {
		t.Fatalf("%s: %v", rev, cdiags)
	}
	return plan
}

// cluster is the test's view of the API server.
type cluster struct {
	t     *testing.T
	ext   apiextensionsclient.Interface
	dyn   dynamic.Interface
	hook  apiextensionsv1.WebhookClientConfig
	metns string // the /metrics URL of the webhook server
}

// install installs (or updates to) the CRD of rev as orkestra manifests or
// dev would: crdspec, converting through the test's webhook.
func (c *cluster) install(rev string) error {
	plan := compile(c.t, rev)
	src := plan.Entries[0].Source.CRD
	spec, _ := crdspec.Spec(plan, src, c.hook)
	crds := c.ext.ApiextensionsV1().CustomResourceDefinitions()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := crds.Get(context.Background(), crdName, metav1.GetOptions{})
		if err != nil {
			_, err = crds.Create(context.Background(), &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crdName}, Spec: spec}, metav1.CreateOptions{})
			return err
		}
		cur.Spec = spec
		_, err = crds.Update(context.Background(), cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	// Every served version answers (a new version a moment after the update).
	for _, v := range spec.Versions {
		if !v.Served {
			continue
		}
		err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := c.dyn.Resource(gvr(v.Name)).Namespace("default").List(ctx, metav1.ListOptions{Limit: 1})
			return err == nil, nil
		})
		if err != nil {
			c.t.Fatalf("%s: version %s does not serve: %v", rev, v.Name, err)
		}
	}
	return nil
}

func (c *cluster) crd() *apiextensionsv1.CustomResourceDefinition {
	c.t.Helper()
	crd, err := c.ext.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), crdName, metav1.GetOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	return crd
}

func gvr(v string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: v, Resource: "gizmos"}
}

// stored reads etcd directly (its JSON gateway) and returns each object's
// stored apiVersion by namespace/name.
func stored(t *testing.T) map[string]string {
	t.Helper()
	prefix := "/registry/" + group + "/gizmos/"
	body, _ := json.Marshal(map[string]string{
		"key":       base64.StdEncoding.EncodeToString([]byte(prefix)),
		"range_end": base64.StdEncoding.EncodeToString([]byte(prefix[:len(prefix)-1] + "0")),
	})
	resp, err := http.Post(testEnv.ControlPlane.Etcd.URL.String()+"/v3/kv/range", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("reading etcd: %v", err)
	}
	defer resp.Body.Close()
	var out struct {
		KVs []struct{ Key, Value []byte } `json:"kvs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("reading etcd: %v", err)
	}
	got := map[string]string{}
	for _, kv := range out.KVs {
		var obj struct {
			APIVersion string `json:"apiVersion"`
		}
		if err := json.Unmarshal(kv.Value, &obj); err != nil {
			t.Fatalf("etcd holds %s as %q, not JSON", kv.Key, kv.Value)
		}
		got[strings.TrimPrefix(string(kv.Key), prefix)] = obj.APIVersion
	}
	return got
}

func assertStoredAt(t *testing.T, v string) {
	t.Helper()
	got := stored(t)
	if len(got) != objects {
		t.Fatalf("etcd holds %d gizmos, want %d", len(got), objects)
	}
	for k, av := range got {
		if av != group+"/"+v {
			t.Errorf("etcd holds %s at %s, want %s/%s", k, av, group, v)
		}
	}
}

// patchCounter counts the PATCH requests on gizmo objects and cancels a
// context after a given number.
type patchCounter struct {
	n      atomic.Int64
	after  int64
	cancel context.CancelFunc
}

func (p *patchCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodPatch && strings.Contains(r.URL.Path, "/gizmos/") && !strings.Contains(r.URL.Path, "customresourcedefinitions") {
			if n := p.n.Add(1); p.cancel != nil && n == p.after {
				defer p.cancel()
			}
		}
		return rt.RoundTrip(r)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// warnings records Warning headers.
type warnings struct {
	mu  sync.Mutex
	all []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all = append(w.all, text)
}

func TestVersionLifecycle(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	// The /convert webhook on 127.0.0.1, serving release 2's conversion,
	// with /metrics (and the process collector: when it started counting).
	rev2 := compile(t, "rev2")
	caPEM, certPEM, keyPEM, err := certs.NewSelfSigned([]string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	whl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	httpl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	srv := &webhook.Server{
		Config:          webhook.Config{CertFile: certFile, KeyFile: keyFile, ShutdownTimeout: 2 * time.Second},
		Plan:            rev2,
		Converter:       conversion.New(rev2, conversion.Options{}),
		Registry:        reg,
		WebhookListener: whl,
		HTTPListener:    httpl,
	}
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.Run(ctx) }()
	defer func() {
		cancel()
		<-srvDone
	}()
	<-srv.Ready()
	url := "https://" + whl.Addr().String() + "/convert"
	c := &cluster{t: t, hook: apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: caPEM}, metns: "http://" + httpl.Addr().String() + "/metrics"}
	c.ext = apiextensionsclient.NewForConfigOrDie(testCfg)
	c.dyn = dynamic.NewForConfigOrDie(testCfg)

	// Each release passes `check --against` the one before.
	for i := 1; i < 5; i++ {
		old, next := fmt.Sprintf("rev%d", i), fmt.Sprintf("rev%d", i+1)
		if findings := compat.Compare(compile(t, old), compile(t, next)); findings.HasErrors() {
			t.Fatalf("%s against %s: %v", next, old, findings.Errors())
		}
	}

	// Release 1: gizmos written at v1, stored at v1.
	if err := c.install("rev1"); err != nil {
		t.Fatal(err)
	}
	for i := range objects {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": group + "/v1", "kind": "Gizmo",
			"metadata": map[string]any{"name": fmt.Sprintf("g%03d", i), "namespace": "default"},
			"spec":     map[string]any{"size": int64(i), "color": "red"},
		}}
		if _, err := c.dyn.Resource(gvr("v1")).Namespace("default").Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	assertStoredAt(t, "v1")

	// Release 2: v2 stores. Every object is still stored at v1, and v1
	// cannot be removed yet: the error users meet in the wild.
	if err := c.install("rev2"); err != nil {
		t.Fatal(err)
	}
	if got := c.crd().Status.StoredVersions; !slices.Equal(got, []string{"v1", "v2"}) {
		t.Fatalf("storedVersions after release 2 = %v, want [v1 v2]", got)
	}
	assertStoredAt(t, "v1")
	if err := c.install("rev5"); err == nil || !strings.Contains(err.Error(), `status.storedVersions[0]: Invalid value: "v1": missing from spec.versions`) {
		t.Fatalf("removing v1 before the migration: err = %v, want the API server's storedVersions refusal", err)
	}

	// The storage migration, as orkestra run runs it on the leader: pages
	// of 10, one worker; the first controller is stopped in the middle of
	// its second page (a restart), the second one resumes.
	recorderCtx, stopRecorder := context.WithCancel(ctx)
	defer stopRecorder()
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: kubernetes.NewForConfigOrDie(testCfg).EventsV1()})
	broadcaster.StartRecordingToSink(recorderCtx.Done())
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme.Scheme, "orkestra")
	storageReg := prometheus.NewRegistry()
	newController := func(pc *patchCounter) *storage.Controller {
		cfg := rest.CopyConfig(testCfg)
		cfg.Wrap(pc.wrap)
		sc, err := storage.NewController(cfg, storage.ControllerOptions{
			CRDs:     []string{crdName},
			Migrator: storage.Options{PageSize: 10, Workers: 1, BuiltinTimeout: time.Second, BuiltinPoll: 200 * time.Millisecond},
			Registry: storageReg,
			Recorder: recorder,
		})
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	firstCtx, stopFirst := context.WithCancel(ctx)
	first := &patchCounter{after: 15, cancel: stopFirst}
	if err := newController(first).Start(firstCtx); err != nil {
		t.Fatal(err)
	}
	saved := c.crd().Annotations[storage.AnnotationProgress]
	var progress struct {
		Pages, Migrated int64
		Continue        string
	}
	if err := json.Unmarshal([]byte(saved), &progress); err != nil || progress.Pages != 1 || progress.Migrated != 10 || progress.Continue == "" {
		t.Fatalf("progress saved by the stopped controller = %q (%v), want page 1 done, 10 migrated, a continue token", saved, err)
	}
	if got := c.crd().Status.StoredVersions; !slices.Equal(got, []string{"v1", "v2"}) {
		t.Fatalf("storedVersions after the stopped run = %v, want [v1 v2]", got)
	}

	secondCtx, stopSecond := context.WithCancel(ctx)
	defer stopSecond()
	second := &patchCounter{}
	sc := newController(second)
	scDone := make(chan error, 1)
	go func() { scDone <- sc.Start(secondCtx) }()
	defer func() {
		stopSecond()
		<-scDone
	}()
	// The controller writes storedVersions before it records the run as
	// over: wait for both, or the status below is read in between.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		st, _ := sc.Status(crdName)
		return slices.Equal(c.crd().Status.StoredVersions, []string{"v2"}) && !st.Migrating, nil
	})
	if err != nil {
		st, _ := sc.Status(crdName)
		t.Fatalf("storedVersions did not become [v2] with the migration over: %v (controller: %+v)", c.crd().Status.StoredVersions, st)
	}
	if got := second.n.Load(); got != objects-10 {
		t.Errorf("the resumed controller wrote %d objects, want %d: the finished first page is not redone", got, objects-10)
	}
	assertStoredAt(t, "v2")
	after := c.crd()
	if _, ok := after.Annotations[storage.AnnotationProgress]; ok {
		t.Errorf("the progress annotation is still on the CRD")
	}
	st, ok := sc.Status(crdName)
	if !ok || st.Migrating || st.LastError != "" || st.Remaining != 0 || !slices.Equal(st.StoredVersions, []string{"v2"}) {
		t.Errorf("controller status = %+v, want done with storedVersions [v2]", st)
	}
	if got := gauge(t, storageReg, storage.MetricStoredVersions, crdName); got != 1 {
		t.Errorf("%s = %v, want 1", storage.MetricStoredVersions, got)
	}
	if got := counter(t, storageReg, storage.MetricRuns, crdName, "succeeded"); got != 1 {
		t.Errorf("%s{succeeded} = %v, want 1", storage.MetricRuns, got)
	}
	waitEvent(t, storage.ReasonSucceeded)

	// Release 3: v1 deprecated. A client at v1 gets the Warning header.
	if err := c.install("rev3"); err != nil {
		t.Fatal(err)
	}
	rec := &warnings{}
	wcfg := rest.CopyConfig(testCfg)
	wcfg.WarningHandler = rec
	g, err := dynamic.NewForConfigOrDie(wcfg).Resource(gvr("v1")).Namespace("default").Get(ctx, "g007", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if size, _, _ := unstructured.NestedInt64(g.Object, "spec", "size"); size != 7 {
		t.Errorf("g007 read at v1 has spec.size %d, want 7 (converted from v2)", size)
	}
	wantWarning := "lifecycle.orkestra.io/v1 Gizmo is deprecated and will stop being served; use v2"
	if !slices.Equal(rec.all, []string{wantWarning}) {
		t.Fatalf("Warning headers %q, want [%q]", rec.all, wantWarning)
	}

	// `versions`: v1 was just used, so not yet; after --idle without a
	// client at v1 it is safe to stop serving.
	idle := 2 * time.Second
	report := func() versions.VersionReport {
		t.Helper()
		r, err := versions.Build(ctx, testCfg, compile(t, "rev3"), versions.Options{Conversions: versions.ScrapeURLs(ctx, []string{c.metns}), Idle: idle})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range r.CRDs[0].Versions {
			if v.Name == "v1" {
				return v
			}
		}
		t.Fatalf("no v1 in %+v", r.CRDs[0])
		return versions.VersionReport{}
	}
	v1 := report()
	if v1.ConversionsTo == nil || *v1.ConversionsTo < 1 {
		t.Fatalf("conversions to v1 = %v, want the reads at v1 counted", v1.ConversionsTo)
	}
	used := *v1.ConversionsTo
	if v1.Verdict != versions.NotYet || len(v1.Because) != 1 || !strings.HasPrefix(v1.Because[0], fmt.Sprintf("clients still use it: %.0f objects converted to v1, the last ", used)) {
		t.Fatalf("v1 right after a client used it: %s because %q", v1.Verdict, v1.Because)
	}
	time.Sleep(idle)
	v1 = report()
	if v1.Verdict != versions.SafeToStopServing || len(v1.Because) != 0 || !v1.Deprecated || v1.InStoredVersions || *v1.Objects != 0 || *v1.ConversionsTo != used {
		t.Fatalf("v1 after --idle: %+v (because %q)", v1, v1.Because)
	}

	// Release 4: v1 no longer served: safe to remove.
	if err := c.install("rev4"); err != nil {
		t.Fatal(err)
	}
	r, err := versions.Build(ctx, testCfg, compile(t, "rev4"), versions.Options{Conversions: versions.ScrapeURLs(ctx, []string{c.metns}), Idle: idle})
	if err != nil {
		t.Fatal(err)
	}
	if v := r.CRDs[0].Versions[0]; v.Name != "v1" || v.Served || v.Verdict != versions.SafeToRemove {
		t.Fatalf("v1 after release 4: %+v", v)
	}

	// Release 5: v1 removed; every object is there at v2.
	if err := c.install("rev5"); err != nil {
		t.Fatalf("removing v1 after the migration: %v", err)
	}
	list, err := c.dyn.Resource(gvr("v2")).Namespace("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != objects {
		t.Fatalf("listing at v2: %d items, %v", len(list.Items), err)
	}
	for _, o := range list.Items {
		size, _, _ := unstructured.NestedInt64(o.Object, "spec", "dimensions", "size")
		if want := fmt.Sprintf("g%03d", size); o.GetName() != want {
			t.Errorf("%s has spec.dimensions.size %d, want the number in its name", o.GetName(), size)
		}
	}
}

func waitEvent(t *testing.T, reason string) {
	t.Helper()
	kube := kubernetes.NewForConfigOrDie(testCfg)
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		evs, err := kube.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		return slices.ContainsFunc(evs.Items, func(e eventsv1.Event) bool {
			return e.Reason == reason && e.Regarding.Name == crdName && e.Regarding.Kind == "CustomResourceDefinition"
		}), nil
	})
	if err != nil {
		t.Errorf("no %s event on CRD %s", reason, crdName)
	}
}

func metric(t *testing.T, reg *prometheus.Registry, name string, labels ...string) *dto.Metric {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			for i, l := range m.GetLabel() {
				if i >= len(labels) || l.GetValue() != labels[i] {
					continue next
				}
			}
			return m
		}
	}
	t.Fatalf("no %s%v", name, labels)
	return nil
}

func gauge(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	return metric(t, reg, name, labels...).GetGauge().GetValue()
}

func counter(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	return metric(t, reg, name, labels...).GetCounter().GetValue()
}

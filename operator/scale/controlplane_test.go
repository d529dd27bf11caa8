package scale

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/orkspace/orkestra-cel/operator"
)

// namespace holds the benchmark's objects.
const namespace = "scale"

var siteGVR = schema.GroupVersionResource{Group: "scale.orkestra.io", Version: "v1", Resource: "sites"}

// controlPlane is one fresh kube-apiserver and etcd (envtest) with the
// benchmark's CRD: every measurement gets its own, so that none pays for the
// objects of another.
type controlPlane struct {
	env        *envtest.Environment
	client     client.Client
	dynamic    dynamic.Interface
	kubeconfig string
}

func startControlPlane(b *testing.B) *controlPlane {
	b.Helper()
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("testdata", "crd.yaml")},
		ErrorIfCRDPathMissing: true,
	}
	// Room for the Services (envtest's default range is a /24).
	env.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", "10.96.0.0/12")
	cfg, err := env.Start()
	if err != nil {
		b.Fatalf("starting envtest (kube-apiserver and etcd from KUBEBUILDER_ASSETS=%s): %v", os.Getenv("KUBEBUILDER_ASSETS"), err)
	}
	cp := &controlPlane{env: env}
	b.Cleanup(func() {
		if err := env.Stop(); err != nil {
			b.Logf("stopping envtest: %v", err)
		}
	})
	if cp.client, err = client.New(cfg, client.Options{Scheme: operator.Scheme()}); err != nil {
		b.Fatal(err)
	}
	if cp.dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		b.Fatal(err)
	}
	user, err := env.AddUser(envtest.User{Name: "orkestra", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		b.Fatal(err)
	}
	cp.kubeconfig = filepath.Join(b.TempDir(), "kubeconfig")
	if err := os.WriteFile(cp.kubeconfig, kc, 0o600); err != nil {
		b.Fatal(err)
	}
	if err := cp.client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		b.Fatal(err)
	}
	return cp
}

// site is the i-th custom resource of the benchmark, at v1.
func site(i int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scale.orkestra.io/v1",
		"kind":       "Site",
		"metadata":   map[string]any{"name": siteName(i), "namespace": namespace},
		"spec":       map[string]any{"image": "nginx:1.27", "replicas": int64(2), "port": int64(8080)},
	}}
}

func siteName(i int) string { return "site-" + strconv.Itoa(i) }

// readyWatch counts, through a watch, the custom resources whose Ready
// condition is True at their current generation.
type readyWatch struct {
	mu    sync.Mutex
	ready map[string]bool
	stop  chan struct{}
}

func watchReady(b *testing.B, cp *controlPlane) *readyWatch {
	b.Helper()
	w := &readyWatch{ready: map[string]bool{}, stop: make(chan struct{})}
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(cp.dynamic, 0, namespace, nil)
	inf := f.ForResource(siteGVR).Informer()
	set := func(obj any) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			w.mu.Lock()
			w.ready[u.GetName()] = isReady(u)
			w.mu.Unlock()
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, obj any) { set(obj) },
	}); err != nil {
		b.Fatal(err)
	}
	go inf.Run(w.stop)
	if !toolscache.WaitForCacheSync(w.stop, inf.HasSynced) {
		b.Fatal("the benchmark's watch of the custom resources did not sync")
	}
	b.Cleanup(func() { close(w.stop) })
	return w
}

func (w *readyWatch) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, r := range w.ready {
		if r {
			n++
		}
	}
	return n
}

// waitAll waits until n custom resources are Ready, or fails after limit.
func (w *readyWatch) waitAll(b *testing.B, n int, limit time.Duration) {
	b.Helper()
	deadline := time.Now().Add(limit)
	for {
		got := w.count()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d custom resources Ready after %s", got, n, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func isReady(u *unstructured.Unstructured) bool {
	og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	if og != u.GetGeneration() {
		return false
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == operator.ConditionReady {
			return m["status"] == "True"
		}
	}
	return false
}

package workloads

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The simulated status must be accepted by a real API server: its
// validation of status updates (a Job's conditions and completionTime, a
// pod's container statuses) is what a fake client does not check.

var (
	testCfg *rest.Config
	k8s     client.Client
)

func TestMain(m *testing.M) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, `FAIL: KUBEBUILDER_ASSETS is not set: these tests run against a real kube-apiserver (envtest).
    export KUBEBUILDER_ASSETS="$(hack/envtest-assets.sh)"`)
		os.Exit(1)
	}
	logf.SetLogger(logr.Discard())
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: starting envtest: %v\n", err)
		os.Exit(1)
	}
	testCfg = cfg
	k8s, err = client.New(cfg, client.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}

func namespace(t *testing.T, name string) string {
	t.Helper()
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

func createAll(t *testing.T, objs []client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := k8s.Create(context.Background(), o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
}

func TestStepAgainstAPIServer(t *testing.T) {
	ns := namespace(t, "step")
	createAll(t, everyKind(ns))
	n, err := Step(context.Background(), k8s, time.Now(), client.InNamespace(ns))
	if err != nil {
		t.Fatalf("the API server refused a simulated status: %v", err)
	}
	if n != len(everyKind(ns)) {
		t.Errorf("Step wrote %d statuses, want %d", n, len(everyKind(ns)))
	}
	checkSimulated(t, k8s, ns)
	if n, err := Step(context.Background(), k8s, time.Now().Add(time.Hour), client.InNamespace(ns)); err != nil || n != 0 {
		t.Errorf("a second Step wrote %d (err %v), want 0", n, err)
	}
}

func TestControllersSimulateAfterDelay(t *testing.T) {
	ns := namespace(t, "live")
	mgr, err := ctrl.NewManager(testCfg, ctrl.Options{Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	const delay = 3 * time.Second
	if err := Setup(mgr, Options{Delay: delay}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})

	created := time.Now()
	createAll(t, everyKind(ns))
	var d appsv1.Deployment
	key := types.NamespacedName{Namespace: ns, Name: "web"}
	if err := k8s.Get(context.Background(), key, &d); err != nil {
		t.Fatal(err)
	}
	if time.Since(created) < delay && d.Status.AvailableReplicas != 0 {
		t.Errorf("the Deployment was available before the delay: %+v", d.Status)
	}
	eventually(t, 30*time.Second, func() error {
		if err := k8s.Get(context.Background(), key, &d); err != nil {
			return err
		}
		if d.Status.AvailableReplicas != 3 {
			return fmt.Errorf("availableReplicas %d", d.Status.AvailableReplicas)
		}
		return nil
	})
	if since := time.Since(created); since < delay-time.Second {
		t.Errorf("available %s after creation, before the %s delay", since, delay)
	}
	eventually(t, 30*time.Second, func() error {
		// Every kind: the same checks as a step, failing Job included.
		return simulated(k8s, ns)
	})

	// Scaled: the status follows.
	d.Spec.Replicas = ptr(int32(1))
	if err := k8s.Update(context.Background(), &d); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		if err := k8s.Get(context.Background(), key, &d); err != nil {
			return err
		}
		if d.Status.AvailableReplicas != 1 || d.Status.ObservedGeneration != d.Generation {
			return fmt.Errorf("after scaling to 1: %+v", d.Status)
		}
		return nil
	})
}

func ptr[T any](v T) *T { return &v }

func eventually(t *testing.T, timeout time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %v", timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/controlplane"
	"github.com/orkspace/orkestra-cel/operator"
)

// syncBuffer is a bytes.Buffer safe for the session's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDevRunsTheKatalog runs `orkestra dev` on the example katalog with a
// v1alpha1 sample: the kubeconfig it prints reaches the control plane, the
// sample was converted through the in-process webhook to the v1 storage
// version, the operator reconciled it into a Deployment, and cancelling
// (Ctrl-C) stops everything and removes the session's directory. A missing
// kube-apiserver fails the test (envtestAssets builds it with
// hack/envtest-assets.sh).
func TestDevRunsTheKatalog(t *testing.T) {
	plan, err := (&katalogFlags{files: []string{websiteKatalog}}).compile(&bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	port, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stdout, stderr syncBuffer
	var session *devSession
	var checkErr error
	done := make(chan error, 1)
	go func() {
		done <- runDev(ctx, &stdout, &stderr, plan, []string{"../../examples/website/website-v1alpha1.yaml"},
			devFlags{httpAddr: fmt.Sprintf("127.0.0.1:%d", port)}, testr.New(t), func(s *devSession) {
				session = s
				checkErr = checkDevSession(ctx, s, stdout.String())
				cancel()
			})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("orkestra dev: %v\nstderr:\n%s", err, stderr.String())
		}
	case <-time.After(5 * time.Minute):
		t.Fatal("orkestra dev did not finish")
	}
	t.Logf("orkestra dev printed:\n%s", stdout.String())
	if session == nil {
		t.Fatalf("the session never became ready; stderr:\n%s", stderr.String())
	}
	if checkErr != nil {
		t.Fatalf("%v\nstdout:\n%s", checkErr, stdout.String())
	}
	if _, err := os.Stat(session.dir); !os.IsNotExist(err) {
		t.Fatalf("the session's temporary directory %s was not removed: %v", session.dir, err)
	}
}

func checkDevSession(ctx context.Context, s *devSession, out string) error {
	if !strings.Contains(out, "export KUBECONFIG="+s.kubeconfig) {
		return fmt.Errorf("the output does not say how to use the kubeconfig")
	}
	if !strings.Contains(out, "Website default/hello") {
		return fmt.Errorf("the output does not list the applied sample")
	}
	for _, want := range []string{
		"kubectl get websites.v1.demo.orkestra.io hello -n default -o yaml   # written at v1alpha1, read at v1",
		"kubectl get all,configmaps,secrets -n default -l orkestra-owner=hello",
		"kubectl delete deployments,services -n default -l orkestra-owner=hello   # then list again: drift correction recreates them",
	} {
		if !strings.Contains(out, want) {
			return fmt.Errorf("the output does not suggest %q", want)
		}
	}
	kc, err := os.ReadFile(s.kubeconfig)
	if err != nil {
		return err
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		return fmt.Errorf("the kubeconfig does not load: %w", err)
	}
	scheme := operator.Scheme()
	_ = apiextensionsv1.AddToScheme(scheme)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := c.Get(ctx, types.NamespacedName{Name: "websites.demo.orkestra.io"}, &crd); err != nil {
		return fmt.Errorf("through the printed kubeconfig: %w", err)
	}
	cc := crd.Spec.Conversion.Webhook.ClientConfig
	if cc.URL == nil || *cc.URL != s.webhookURL || !strings.HasPrefix(s.webhookURL, "https://127.0.0.1:") || len(cc.CABundle) == 0 {
		return fmt.Errorf("CRD conversion client config %+v", cc)
	}
	site := &unstructured.Unstructured{}
	site.SetGroupVersionKind(schema.GroupVersionKind{Group: "demo.orkestra.io", Version: "v1", Kind: "Website"})
	if err := c.Get(ctx, types.NamespacedName{Namespace: "default", Name: "hello"}, site); err != nil {
		return fmt.Errorf("the v1alpha1 sample read at v1 (through /convert): %w", err)
	}
	// The Service range holds thousands (issue 15: a /24 failed past 253):
	// an address far outside a /24 is allocatable.
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "range-check"},
		Spec:       corev1.ServiceSpec{ClusterIP: "10.0.200.7", Ports: []corev1.ServicePort{{Port: 80}}},
	}
	if err := c.Create(ctx, svc); err != nil {
		return fmt.Errorf("a Service at 10.0.200.7 (inside %s): %w", controlplane.ServiceCIDR, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var d appsv1.Deployment
		err := c.Get(ctx, types.NamespacedName{Namespace: "default", Name: "hello"}, &d)
		if err == nil {
			if *d.Spec.Replicas != 2 {
				return fmt.Errorf("deployment replicas %d", *d.Spec.Replicas)
			}
			return deletesChildren(ctx, c, site)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the operator did not create the sample's Deployment: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// deletesChildren: deleting the custom resource deletes its Deployment, as
// a cluster's garbage collector would (dev runs one).
func deletesChildren(ctx context.Context, c client.Client, site *unstructured.Unstructured) error {
	if err := c.Delete(ctx, site); err != nil {
		return err
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		err := c.Get(ctx, types.NamespacedName{Namespace: "default", Name: "hello"}, &appsv1.Deployment{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the Deployment of the deleted custom resource was not collected (%v)", err)
		}
	}
}

// TestDevSimulatesWorkloads: with --simulate-workloads the Deployment the
// operator creates becomes available at its replica count, as on a cluster
// with nodes (the workloads package's live mode), and dev says so.
func TestDevSimulatesWorkloads(t *testing.T) {
	plan, err := (&katalogFlags{files: []string{websiteKatalog}}).compile(&bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stdout, stderr syncBuffer
	var checkErr error
	done := make(chan error, 1)
	go func() {
		done <- runDev(ctx, &stdout, &stderr, plan, []string{"../../examples/website/website-v1alpha1.yaml"},
			devFlags{simulateWorkloads: true}, testr.New(t), func(s *devSession) {
				checkErr = waitAvailable(ctx, s, "hello", 2)
				cancel()
			})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("orkestra dev: %v\nstderr:\n%s", err, stderr.String())
		}
	case <-time.After(5 * time.Minute):
		t.Fatal("orkestra dev did not finish")
	}
	if checkErr != nil {
		t.Fatal(checkErr)
	}
	if !strings.Contains(stdout.String(), "Workloads: simulated") {
		t.Errorf("dev does not say workloads are simulated:\n%s", stdout.String())
	}
}

func waitAvailable(ctx context.Context, s *devSession, name string, want int32) error {
	c, err := client.New(s.cfg, client.Options{Scheme: operator.Scheme()})
	if err != nil {
		return err
	}
	var got int32
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var d appsv1.Deployment
		if err := c.Get(ctx, types.NamespacedName{Namespace: "default", Name: name}, &d); err == nil {
			if got = d.Status.AvailableReplicas; got == want {
				return nil
			}
		}
	}
	return fmt.Errorf("deployment %s: %d available replicas after 30s, want %d", name, got, want)
}

package certs_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orkspace/orkestra-cel/envassets/envtesting"

	"github.com/go-logr/logr"
	celgo "github.com/google/cel-go/cel"
	"github.com/prometheus/client_golang/prometheus"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/orkspace/orkestra-cel/engine"
	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/conversion"
	"github.com/orkspace/orkestra-cel/engine/gotmpl"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/webhook"
)

func loadPlan(t *testing.T, file string) *engine.Plan {
	t.Helper()
	k, diags := katalog.Load(file)
	if diags.HasErrors() {
		t.Fatalf("loading %s: %v", file, diags)
	}
	cel, err := celengine.New(celengine.Options{Libraries: []celgo.EnvOption{gotmpl.CELLibrary()}})
	if err != nil {
		t.Fatal(err)
	}
	plan, cdiags := engine.Compile(k, engine.Backends{CEL: cel, Legacy: gotmpl.New(cel)}, engine.CompileOptions{})
	if cdiags.HasErrors() {
		t.Fatalf("compiling %s: %v", file, cdiags)
	}
	return plan
}

// freePort returns a port on 127.0.0.1 nobody listens on.
func listen(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// installWebsiteCRD installs examples/website's CRD converting through a
// webhook at url, without a caBundle, and waits until it is established.
func installWebsiteCRD(t *testing.T, ctx context.Context, cfg *rest.Config, url string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(envtesting.RepoRoot(t), "examples", "website", "crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatal(err)
	}
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &url},
			ConversionReviewVersions: []string{"v1", "v1beta1"},
		},
	}
	ext := apiextensionsclient.NewForConfigOrDie(cfg)
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		c, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range c.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("CRD %s not established: %v", crd.Name, err)
	}
	return crd
}

// startWebhook serves /convert for plan on l with the certificate files,
// reloading them every 100ms.
func startWebhook(t *testing.T, ctx context.Context, plan *engine.Plan, l net.Listener, certFile, keyFile string) {
	t.Helper()
	srv := &webhook.Server{
		Config: webhook.Config{
			CertFile:         certFile,
			KeyFile:          keyFile,
			CertPollInterval: 100 * time.Millisecond,
			ShutdownTimeout:  2 * time.Second,
		},
		Plan:            plan,
		Converter:       conversion.New(plan, conversion.Options{}),
		Registry:        prometheus.NewRegistry(),
		WebhookListener: l,
		Log:             logr.Discard(),
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("webhook server: %v", err)
		}
	})
	select {
	case <-srv.Ready():
	case err := <-done:
		t.Fatalf("webhook server stopped: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("webhook server not ready")
	}
}

var websites = schema.GroupVersionResource{Group: "demo.orkestra.io", Resource: "websites"}

// convertThroughAPIServer creates a Website at v1alpha1 (stored at v1: the
// API server must call /convert) and reads it back at v1alpha1 (again).
func convertThroughAPIServer(ctx context.Context, cfg *rest.Config, name string) error {
	dyn := dynamic.NewForConfigOrDie(cfg)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "demo.orkestra.io/v1alpha1",
		"kind":       "Website",
		"metadata":   map[string]any{"name": name, "namespace": "default"},
		"spec":       map[string]any{"image": "nginx:1.27", "replicas": int64(2), "theme": "dark"},
	}}
	if _, err := dyn.Resource(websites.GroupResource().WithVersion("v1alpha1")).Namespace("default").Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating a v1alpha1 Website (converted to the v1 storage version): %w", err)
	}
	v1, err := dyn.Resource(websites.GroupResource().WithVersion("v1")).Namespace("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading at v1: %w", err)
	}
	if img, _, _ := unstructured.NestedString(v1.Object, "spec", "image"); img != "nginx:1.27" {
		return fmt.Errorf("converted object has spec.image %q", img)
	}
	back, err := dyn.Resource(websites.GroupResource().WithVersion("v1alpha1")).Namespace("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading at v1alpha1: %w", err)
	}
	if theme, _, _ := unstructured.NestedString(back.Object, "spec", "theme"); theme != "dark" {
		return fmt.Errorf("round trip lost spec.theme: %q", theme)
	}
	return nil
}

// eventuallyConverts retries convertThroughAPIServer (the API server picks
// up a new caBundle within a moment).
func eventuallyConverts(t *testing.T, ctx context.Context, cfg *rest.Config, prefix string) {
	t.Helper()
	var last error
	for i := 0; i < 100; i++ {
		last = convertThroughAPIServer(ctx, cfg, fmt.Sprintf("%s-%d", prefix, i))
		if last == nil {
			return
		}
		if !strings.Contains(last.Error(), "conversion webhook") && !strings.Contains(last.Error(), "x509") && !strings.Contains(last.Error(), "tls") {
			t.Fatal(last)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the API server could not convert through the webhook: %v", last)
}

// servedCert returns the certificate the webhook presents.
func servedCert(t *testing.T, addr string) *x509.Certificate {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // inspecting the served certificate
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0]
}

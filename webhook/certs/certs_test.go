package certs_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/orkspace/orkestra-cel/envassets/envtesting"
	"github.com/orkspace/orkestra-cel/webhook/certs"
)

const day = 24 * time.Hour

// clock is a settable time source for the managers.
type clock struct{ now atomic.Int64 }

func (c *clock) set(t time.Time)  { c.now.Store(t.UnixNano()) }
func (c *clock) Now() time.Time   { return time.Unix(0, c.now.Load()) }
func newClock(t time.Time) *clock { c := &clock{}; c.set(t); return c }
func pemCerts(b []byte) []*x509.Certificate {
	var out []*x509.Certificate
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return out
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err == nil {
			out = append(out, c)
		}
	}
}

func crdBundle(t *testing.T, ctx context.Context, cfg *rest.Config, name string) []byte {
	t.Helper()
	c, err := apiextensionsclient.NewForConfigOrDie(cfg).ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c.Spec.Conversion.Webhook.ClientConfig.CABundle
}

func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("timed out waiting until %s", what)
	}
}

// TestBuiltinCertificates runs the built-in mode against a real API server
// that calls /convert: the CA bundle is injected into the CRD, a reverted
// caBundle is written back, a serving certificate due for renewal is
// reissued and served without restarting the server, and a CA near its end
// is rotated in two steps without a failed conversion.
func TestBuiltinCertificates(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cfg := envtesting.Start(t)
	kube := kubernetes.NewForConfigOrDie(cfg)
	ext := apiextensionsclient.NewForConfigOrDie(cfg)
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "orkestra-system"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	plan := loadPlan(t, filepath.Join(envtesting.RepoRoot(t), "examples", "website", "katalog.yaml"))
	l := listen(t)
	crd := installWebsiteCRD(t, ctx, cfg, "https://"+l.Addr().String()+"/convert")

	// Real time R. Lifetimes: CA 600d (rotated with 200d left), serving
	// 300d (renewed with 100d left). The manager starts 250 days in the
	// past, so that what it issues then is still valid for the API server
	// now and due for renewal once its clock reaches R.
	R := time.Now()
	clk := newClock(R.Add(-250 * day))
	opts := certs.DefaultOptions()
	opts.Namespace = "orkestra-system"
	opts.ServiceName = ""
	opts.IPs = []net.IP{net.ParseIP("127.0.0.1")}
	opts.CertDir = t.TempDir()
	opts.CRDs = plan.WebhookCRDNames()
	opts.CAValidity = 600 * day
	opts.CertValidity = 300 * day
	opts.CAPromotionDelay = time.Minute
	opts.CheckInterval = 100 * time.Millisecond
	opts.Now = clk.Now
	opts.Log = testr.New(t)
	if len(opts.CRDs) != 1 || opts.CRDs[0] != crd.Name {
		t.Fatalf("CRDNames = %v, want [%s]", opts.CRDs, crd.Name)
	}
	m, err := certs.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := opts.Files()
	for _, f := range []string{certFile, keyFile} {
		if st, err := os.Stat(f); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v (mode %v), want a 0600 file", f, err, st)
		}
	}
	secret, err := kube.CoreV1().Secrets("orkestra-system").Get(ctx, certs.DefaultSecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if secret.Type != corev1.SecretTypeTLS {
		t.Fatalf("Secret type %s, want kubernetes.io/tls", secret.Type)
	}
	if file, _ := os.ReadFile(certFile); !bytes.Equal(file, secret.Data[certs.KeyTLSCert]) {
		t.Fatal("tls.crt on disk differs from the Secret's")
	}
	// Bootstrap injected the bundle already.
	if got := crdBundle(t, ctx, cfg, crd.Name); !bytes.Equal(got, secret.Data[certs.KeyCABundle]) {
		t.Fatal("Bootstrap did not write the CA bundle into the CRD")
	}

	startWebhook(t, ctx, plan, l, certFile, keyFile)
	runDone := make(chan error, 1)
	go func() { runDone <- m.Start(ctx) }()
	defer func() { cancel(); <-runDone }()

	t.Run("the API server converts over the injected bundle", func(t *testing.T) {
		eventuallyConverts(t, ctx, cfg, "first")
	})
	first := servedCert(t, l.Addr().String())

	t.Run("a reverted caBundle is written back", func(t *testing.T) {
		_, other, _, err := certs.NewSelfSigned([]string{"elsewhere"}, nil, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		for _, revert := range [][]byte{other, nil} {
			patch := []byte(`{"spec":{"conversion":{"webhook":{"clientConfig":{"caBundle":null}}}}}`)
			if revert != nil {
				patch, _ = jsonPatchBundle(revert)
			}
			if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Patch(ctx, crd.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, ctx, "the caBundle is restored", func() bool {
				return bytes.Equal(crdBundle(t, ctx, cfg, crd.Name), m.CABundle())
			})
		}
		eventuallyConverts(t, ctx, cfg, "reverted")
	})

	t.Run("a serving certificate due is reissued and served without restart", func(t *testing.T) {
		bundleBefore := crdBundle(t, ctx, cfg, crd.Name)
		clk.set(time.Now())
		waitFor(t, ctx, "the webhook serves a new certificate", func() bool {
			return !servedCert(t, l.Addr().String()).Equal(first)
		})
		served := servedCert(t, l.Addr().String())
		s, err := kube.CoreV1().Secrets("orkestra-system").Get(ctx, certs.DefaultSecretName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if stored := pemCerts(s.Data[certs.KeyTLSCert]); len(stored) != 1 || !stored[0].Equal(served) {
			t.Fatal("the served certificate is not the Secret's")
		}
		if served.CheckSignatureFrom(pemCerts(s.Data[certs.KeyCACert])[0]) != nil {
			t.Fatal("renewal must keep the CA")
		}
		if !bytes.Equal(crdBundle(t, ctx, cfg, crd.Name), bundleBefore) {
			t.Fatal("renewing the serving certificate must not change the CRD's bundle")
		}
		eventuallyConverts(t, ctx, cfg, "renewed")
	})

	t.Run("a CA near its end is rotated in two steps", func(t *testing.T) {
		// Start over from a Secret issued 450 days ago: its CA has 150 of
		// 600 days left, its serving certificate has expired.
		clk.set(time.Now().Add(-450 * day))
		if err := kube.CoreV1().Secrets("orkestra-system").Delete(ctx, certs.DefaultSecretName, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		var oldCA *x509.Certificate
		waitFor(t, ctx, "the Secret is recreated", func() bool {
			s, err := kube.CoreV1().Secrets("orkestra-system").Get(ctx, certs.DefaultSecretName, metav1.GetOptions{})
			if err != nil {
				return false
			}
			ca := pemCerts(s.Data[certs.KeyCACert])
			if len(ca) == 1 && time.Until(ca[0].NotAfter) < 160*day {
				oldCA = ca[0]
				return true
			}
			return false
		})
		// Now: the serving certificate is reissued by the old CA and the
		// next CA is staged in the bundle, which reaches the CRD.
		clk.set(time.Now())
		var next *x509.Certificate
		waitFor(t, ctx, "the next CA is staged in the CRD's bundle", func() bool {
			b := pemCerts(crdBundle(t, ctx, cfg, crd.Name))
			if len(b) == 2 && b[0].Equal(oldCA) {
				next = b[1]
				return true
			}
			return false
		})
		waitFor(t, ctx, "the old CA's fresh serving certificate is served", func() bool {
			c := servedCert(t, l.Addr().String())
			return c.CheckSignatureFrom(oldCA) == nil && time.Until(c.NotAfter) > 100*day
		})
		eventuallyConverts(t, ctx, cfg, "staged")

		// After the promotion delay the next CA signs; the old one stays in
		// the bundle.
		clk.set(time.Now().Add(2 * time.Minute))
		waitFor(t, ctx, "a certificate signed by the next CA is served", func() bool {
			return servedCert(t, l.Addr().String()).CheckSignatureFrom(next) == nil
		})
		// The bundle is injected from the Secret by its own loop: it follows
		// the served certificate, shortly after.
		waitFor(t, ctx, "the CRD's bundle is [next, old] after the promotion", func() bool {
			b := pemCerts(crdBundle(t, ctx, cfg, crd.Name))
			return len(b) == 2 && b[0].Equal(next) && b[1].Equal(oldCA)
		})
		eventuallyConverts(t, ctx, cfg, "promoted")
	})
}

func jsonPatchBundle(b []byte) ([]byte, error) {
	return []byte(`{"spec":{"conversion":{"webhook":{"clientConfig":{"caBundle":"` + base64.StdEncoding.EncodeToString(b) + `"}}}}}`), nil
}

// TestReplicasShareOneCertificate starts several managers at once, as the
// replicas of a Deployment do: one Secret is created, every replica writes
// its certificate; a renewal due on all of them at once is done once.
func TestReplicasShareOneCertificate(t *testing.T) {
	ctx := t.Context()
	cfg := envtesting.Start(t)
	kube := kubernetes.NewForConfigOrDie(cfg)
	R := time.Now()
	clk := newClock(R.Add(-250 * day))
	const replicas = 5
	managers := make([]*certs.Manager, replicas)
	for i := range managers {
		opts := certs.DefaultOptions()
		opts.Namespace = "default"
		opts.SecretName = "shared-tls"
		opts.ServiceName = "orkestra"
		opts.CertDir = t.TempDir()
		opts.CAValidity = 600 * day
		opts.CertValidity = 300 * day
		opts.Now = clk.Now
		opts.Log = testr.New(t)
		m, err := certs.New(cfg, opts)
		if err != nil {
			t.Fatal(err)
		}
		managers[i] = m
	}
	all := func(f func(*certs.Manager) error) {
		var wg sync.WaitGroup
		errs := make([]error, replicas)
		for i, m := range managers {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = f(m) }()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("replica %d: %v", i, err)
			}
		}
	}
	sameFiles := func() []byte {
		t.Helper()
		s, err := kube.CoreV1().Secrets("default").Get(ctx, "shared-tls", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range managers {
			o := m.Options()
			certFile, _ := o.Files()
			got, err := os.ReadFile(certFile)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, s.Data[certs.KeyTLSCert]) {
				t.Fatalf("replica %d serves another certificate than the Secret's", i)
			}
		}
		if c := pemCerts(s.Data[certs.KeyTLSCert])[0]; c.VerifyHostname("orkestra.default.svc") != nil {
			t.Fatalf("certificate does not cover the Service: %v", c.DNSNames)
		}
		return s.Data[certs.KeyTLSCert]
	}

	w, err := kube.CoreV1().Secrets("default").Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "shared-tls").String()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	all(func(m *certs.Manager) error { return m.Bootstrap(ctx) })
	created := sameFiles()

	clk.set(R) // the serving certificate is due on every replica
	all(func(m *certs.Manager) error { return m.Sync(ctx) })
	renewed := sameFiles()
	if bytes.Equal(created, renewed) {
		t.Fatal("the certificate was not renewed")
	}

	// Exactly one create and one update: the replicas that lost the race
	// read the winner's Secret instead of writing their own.
	events := map[watch.EventType]int{}
	timeout := time.After(2 * time.Second)
collect:
	for {
		select {
		case ev := <-w.ResultChan():
			events[ev.Type]++
		case <-timeout:
			break collect
		}
	}
	if events[watch.Added] != 1 || events[watch.Modified] != 1 {
		t.Fatalf("Secret events %v, want 1 ADDED and 1 MODIFIED", events)
	}
}

// TestForbiddenSecretNamesTheFix: without RBAC on the Secret the error says
// what to grant.
func TestForbiddenSecretNamesTheFix(t *testing.T) {
	ctx := t.Context()
	cfg := envtesting.Start(t)
	nobody := rest.CopyConfig(cfg)
	nobody.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:default:nobody"}
	opts := certs.DefaultOptions()
	opts.Namespace = "default"
	opts.CertDir = t.TempDir()
	m, err := certs.New(nobody, opts)
	if err != nil {
		t.Fatal(err)
	}
	err = m.Bootstrap(ctx)
	if err == nil || !apierrors.IsForbidden(err) || !bytes.Contains([]byte(err.Error()), []byte("needs get, create and update on secrets named orkestra-webhook-tls")) {
		t.Fatalf("Bootstrap as a user without RBAC = %v, want a Forbidden error naming the fix", err)
	}
}

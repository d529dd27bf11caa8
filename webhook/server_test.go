package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMetricsCountedPerObject(t *testing.T) {
	ts := startServer(t)
	// One review: 3 Website v1alpha1→v1, 1 Blog v1beta1→v1, 1 Website v1→v1.
	ok := review(t, ReviewV1, "m1", group+"/v1",
		website("v1alpha1", "a", "nginx"), website("v1alpha1", "b", "nginx"), blog("v1beta1", "c"),
		website("v1alpha1", "d", "nginx"), website("v1", "e", "nginx"))
	if code, body := ts.post(t, ok); code != 200 || decodeResponse(t, ReviewV1, body).Status != metav1.StatusSuccess {
		t.Fatalf("HTTP %d %s", code, body)
	}
	// A v1beta1 review down to v1alpha1, its second object fails: the first
	// counts as a success, the second as a failure, the third is not tried.
	bad := review(t, ReviewV1beta1, "m2", group+"/v1alpha1",
		website("v1", "f", "nginx"), website("v1", "g", "fail"), website("v1", "h", "nginx"))
	if code, body := ts.post(t, bad); code != 200 || decodeResponse(t, ReviewV1beta1, body).Status != metav1.StatusFailure {
		t.Fatalf("HTTP %d %s", code, body)
	}
	// Unknown kinds and versions are labelled "unknown".
	ts.post(t, review(t, ReviewV1, "m3", group+"/v1", map[string]any{"apiVersion": group + "/v1alpha1", "kind": "Gizmo", "metadata": map[string]any{"name": "z"}}))
	ts.post(t, review(t, ReviewV1, "m4", group+"/v1", website("v7", "y", "nginx")))

	for _, c := range []struct {
		kind, from, to, result string
		want                   float64
	}{
		{"Website", "v1alpha1", "v1", "success", 3},
		{"Website", "v1alpha1", "v1", "failure", 0},
		{"Blog", "v1beta1", "v1", "success", 1},
		{"Website", "v1", "v1", "success", 1},
		{"Website", "v1", "v1alpha1", "success", 1},
		{"Website", "v1", "v1alpha1", "failure", 1},
		{"unknown", "unknown", "unknown", "failure", 1},
		{"Website", "unknown", "v1", "failure", 1},
	} {
		if got := counterValue(t, ts.reg, c.kind, c.from, c.to, c.result); got != c.want {
			t.Errorf("%s{%s %s→%s %s} = %v, want %v", MetricRequests, c.kind, c.from, c.to, c.result, got, c.want)
		}
	}
	h := metric(t, ts.reg, MetricDuration, map[string]string{"kind": "Website", "from_version": "v1alpha1", "to_version": "v1"})
	if h == nil || h.GetHistogram().GetSampleCount() != 3 || h.GetHistogram().GetSampleSum() <= 0 {
		t.Fatalf("duration histogram %v, want 3 samples", h)
	}
	if b := h.GetHistogram().GetBucket(); len(b) != len(DurationBuckets) || b[0].GetUpperBound() != 50e-6 {
		t.Errorf("buckets start at %v, want 50µs", b[0].GetUpperBound())
	}
	for _, kind := range []string{"Website", "Blog", "unknown"} {
		g := metric(t, ts.reg, MetricActive, map[string]string{"kind": kind})
		if g == nil || g.GetGauge().GetValue() != 0 {
			t.Errorf("%s{kind=%s} = %v, want 0 after the reviews", MetricActive, kind, g)
		}
	}
	// /metrics serves the same registry.
	code, body := ts.get(t, "/metrics")
	if code != 200 || !bytes.Contains(body, []byte(`orkestra_conversion_requests_total{from_version="v1alpha1",kind="Website",result="success",to_version="v1"} 3`)) {
		t.Errorf("/metrics HTTP %d:\n%s", code, body)
	}
}

func TestActiveGaugeDuringConversion(t *testing.T) {
	ts := startServer(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		ts.post(t, review(t, ReviewV1, "slow", group+"/v1", website("v1alpha1", "slow", "block")))
	}()
	<-ts.converter.entered
	g := metric(t, ts.reg, MetricActive, map[string]string{"kind": "Website"})
	if g.GetGauge().GetValue() != 1 {
		t.Errorf("active = %v during a conversion, want 1", g.GetGauge().GetValue())
	}
	close(ts.converter.release)
	<-done
	if g := metric(t, ts.reg, MetricActive, map[string]string{"kind": "Website"}); g.GetGauge().GetValue() != 0 {
		t.Errorf("active = %v after, want 0", g.GetGauge().GetValue())
	}
}

func TestP95(t *testing.T) {
	m, _ := NewMetrics(nil)
	p := m.pair(pairKey{group: "g", kind: "K", from: "a", to: "b"})
	for i := 1; i <= 100; i++ {
		p.observe(time.Now(), time.Duration(i)*time.Millisecond, true)
	}
	s := m.Summary(schemaGVK("g", "b", "K"))
	if s.Total != 100 || s.P95Latency != 95*time.Millisecond || s.AvgLatency != 50500*time.Microsecond {
		t.Errorf("summary %+v", s)
	}
	// The window is bounded: after LatencyWindow fast samples the slow ones are gone.
	for range LatencyWindow {
		p.observe(time.Now(), time.Microsecond, true)
	}
	if s := m.Summary(schemaGVK("g", "b", "K")); s.P95Latency != time.Microsecond || s.Total != 100+LatencyWindow {
		t.Errorf("after the window: %+v", s)
	}
}

func TestHealthAndReadiness(t *testing.T) {
	ready := errors.New("caches not synced")
	ts := startServer(t, func(s *Server) { s.ReadyCheck = func() error { return ready } })
	if code, body := ts.get(t, "/healthz"); code != 200 || string(body) != "ok\n" {
		t.Errorf("/healthz HTTP %d %q", code, body)
	}
	if code, body := ts.get(t, "/readyz"); code != 503 || !strings.Contains(string(body), "caches not synced") {
		t.Errorf("/readyz with a failing check: HTTP %d %q", code, body)
	}
	ready = nil
	if code, _ := ts.get(t, "/readyz"); code != 200 {
		t.Errorf("/readyz HTTP %d", code)
	}
	// Before Run, not ready.
	s := &Server{Config: Config{CertFile: "x", KeyFile: "y"}, Plan: fakePlan(), Converter: &fakeConverter{}, Registry: prometheus.NewRegistry()}
	if err := s.init(); err != nil {
		t.Fatal(err)
	}
	if err := s.readiness(); err == nil || !strings.Contains(err.Error(), "not serving yet") {
		t.Errorf("readiness before Run: %v", err)
	}
}

// presented returns the CommonName of the certificate the server presents.
func presented(t *testing.T, addr string, roots *tls.Config) string {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, roots)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].Subject.CommonName
}

func TestCertificateReload(t *testing.T) {
	ts := startServer(t)
	addr := strings.TrimSuffix(strings.TrimPrefix(ts.convert, "https://"), "/convert")
	cfg := &tls.Config{RootCAs: ts.ca.pool()}
	if cn := presented(t, addr, cfg); cn != "webhook-a" {
		t.Fatalf("presents %q, want webhook-a", cn)
	}
	// Replace both files with certificate B, signed by another CA.
	caB := newCA(t, "ca-b")
	certB, keyB := caB.issue(t, "webhook-b", false)
	writeFile(t, ts.keyFile, keyB)
	writeFile(t, ts.certFile, certB)
	cfgB := &tls.Config{RootCAs: caB.pool()}
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := tls.Dial("tcp", addr, cfgB)
		if err == nil {
			cn := conn.ConnectionState().PeerCertificates[0].Subject.CommonName
			conn.Close()
			if cn == "webhook-b" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server still presents the old certificate 10s after the files changed (last error %v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// And it still converts, through the same server.
	ts.client.Transport.(*http.Transport).TLSClientConfig = cfgB
	ts.client.Transport.(*http.Transport).CloseIdleConnections()
	if code, body := ts.post(t, review(t, ReviewV1, "after-reload", group+"/v1", website("v1alpha1", "a", "nginx"))); code != 200 {
		t.Fatalf("HTTP %d %s", code, body)
	}
}

func TestTLSMinimumVersion(t *testing.T) {
	ts := startServer(t)
	addr := strings.TrimSuffix(strings.TrimPrefix(ts.convert, "https://"), "/convert")
	if _, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ts.ca.pool(), MaxVersion: tls.VersionTLS11}); err == nil {
		t.Error("a TLS 1.1 client connected; want TLS 1.2 at least")
	}
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ts.ca.pool(), MaxVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("TLS 1.2: %v", err)
	}
	conn.Close()
}

func TestClientCertificates(t *testing.T) {
	clientCA := newCA(t, "client-ca")
	caFile := filepath.Join(t.TempDir(), "client-ca.crt")
	writeFile(t, caFile, clientCA.pem)
	ts := startServer(t, func(s *Server) { s.ClientCAFile = caFile })
	body := review(t, ReviewV1, "mtls", group+"/v1", website("v1alpha1", "a", "nginx"))

	client := func(certPEM, keyPEM []byte) *http.Client {
		cfg := &tls.Config{RootCAs: ts.ca.pool()}
		if certPEM != nil {
			cert, err := tls.X509KeyPair(certPEM, keyPEM)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
	}
	post := func(c *http.Client) (int, error) {
		resp, err := c.Post(ts.convert, "application/json", bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	if _, err := post(client(nil, nil)); err == nil {
		t.Error("a client without a certificate was served")
	}
	other := newCA(t, "other-ca")
	if _, err := post(client(other.issue(t, "intruder", true))); err == nil {
		t.Error("a client certificate from another CA was accepted")
	}
	code, err := post(client(clientCA.issue(t, "kube-apiserver", true)))
	if err != nil || code != 200 {
		t.Errorf("a client certificate signed by --client-ca: HTTP %d, %v", code, err)
	}
}

func TestGracefulShutdownFinishesInFlight(t *testing.T) {
	ts := startServer(t)
	type result struct {
		code int
		body []byte
	}
	res := make(chan result, 1)
	go func() {
		code, body := ts.post(t, review(t, ReviewV1, "inflight", group+"/v1", website("v1alpha1", "slow", "block")))
		res <- result{code, body}
	}()
	<-ts.converter.entered
	ts.cancel()
	// Shutdown waits for the in-flight review.
	select {
	case err := <-ts.done:
		t.Fatalf("Run returned (%v) while a review was in flight", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := ts.srv.readiness(); err == nil {
		t.Error("ready while shutting down")
	}
	// New connections are refused while it drains.
	if _, err := net.DialTimeout("tcp", strings.TrimSuffix(strings.TrimPrefix(ts.convert, "https://"), "/convert"), time.Second); err == nil {
		t.Error("the listener still accepts connections during shutdown")
	}
	close(ts.converter.release)
	r := <-res
	if r.code != 200 || decodeResponse(t, ReviewV1, r.body).Status != metav1.StatusSuccess {
		t.Fatalf("the in-flight review got HTTP %d %s", r.code, r.body)
	}
	select {
	case err := <-ts.done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		ts.done <- nil // for the cleanup
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after the in-flight review finished")
	}
}

func TestShutdownTimeout(t *testing.T) {
	ts := startServer(t, func(s *Server) { s.ShutdownTimeout = 100 * time.Millisecond })
	go ts.post(t, review(t, ReviewV1, "stuck", group+"/v1", website("v1alpha1", "stuck", "block")))
	<-ts.converter.entered
	ts.cancel()
	select {
	case err := <-ts.done:
		if err == nil || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Run: %v, want a shutdown deadline error", err)
		}
		ts.done <- nil
	case <-time.After(5 * time.Second):
		t.Fatal("Run ignored the shutdown timeout")
	}
	close(ts.converter.release)
}

func TestConfig(t *testing.T) {
	t.Run("missing certificate", func(t *testing.T) {
		c := DefaultConfig()
		c.Complete(func(string) string { return "" })
		err := c.Validate()
		if err == nil {
			t.Fatal("no error")
		}
		mustContain(t, err.Error(), "--tls-cert", "--tls-key", "TLS_CERT", "TLS_KEY")
		s := &Server{Config: DefaultConfig(), Plan: fakePlan(), Converter: &fakeConverter{}, Registry: prometheus.NewRegistry()}
		if err := s.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "--tls-cert") {
			t.Errorf("Run: %v", err)
		}
	})
	t.Run("one of two", func(t *testing.T) {
		c := Config{CertFile: "a.crt", WebhookAddr: ":8443", MaxRequestBytes: 1}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--tls-key") {
			t.Errorf("%v", err)
		}
	})
	t.Run("env fallback", func(t *testing.T) {
		c := DefaultConfig()
		env := map[string]string{EnvTLSCert: "/tls/tls.crt", EnvTLSKey: "/tls/tls.key"}
		c.Complete(func(k string) string { return env[k] })
		if c.CertFile != "/tls/tls.crt" || c.KeyFile != "/tls/tls.key" || c.Validate() != nil {
			t.Errorf("%+v", c)
		}
		c = Config{CertFile: "flag.crt"}
		c.Complete(func(k string) string { return env[k] })
		if c.CertFile != "flag.crt" {
			t.Error("the environment overrode a flag")
		}
	})
	t.Run("flags", func(t *testing.T) {
		c := DefaultConfig()
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		c.AddFlags(fs)
		err := fs.Parse([]string{"--tls-cert=c", "--tls-key=k", "--client-ca=ca", "--webhook-addr=:9443", "--http-addr=:9090", "--max-request-bytes=1024", "--shutdown-timeout=5s"})
		if err != nil {
			t.Fatal(err)
		}
		want := DefaultConfig()
		want.CertFile, want.KeyFile, want.ClientCAFile, want.WebhookAddr, want.HTTPAddr, want.MaxRequestBytes, want.ShutdownTimeout = "c", "k", "ca", ":9443", ":9090", 1024, 5*time.Second
		if c != want {
			t.Errorf("got %+v\nwant %+v", c, want)
		}
		if d := DefaultConfig(); d.WebhookAddr != ":8443" || d.HTTPAddr != ":8080" || d.MaxRequestBytes != 3<<20 {
			t.Errorf("defaults %+v", d)
		}
	})
	t.Run("unreadable certificate", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "tls.crt"), []byte("not a certificate"))
		writeFile(t, filepath.Join(dir, "tls.key"), []byte("not a key"))
		s := &Server{Config: Config{CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key")}, Plan: fakePlan(), Converter: &fakeConverter{}, Registry: prometheus.NewRegistry()}
		err := s.Run(context.Background())
		if err == nil || !strings.Contains(err.Error(), "loading the TLS certificate") {
			t.Errorf("Run: %v", err)
		}
	})
	t.Run("bad client CA", func(t *testing.T) {
		ca := newCA(t, "ca")
		dir := t.TempDir()
		cert, key := ca.issue(t, "s", false)
		writeFile(t, filepath.Join(dir, "tls.crt"), cert)
		writeFile(t, filepath.Join(dir, "tls.key"), key)
		writeFile(t, filepath.Join(dir, "ca.crt"), []byte("nothing"))
		s := &Server{Config: Config{CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key"), ClientCAFile: filepath.Join(dir, "ca.crt")}, Plan: fakePlan(), Converter: &fakeConverter{}, Registry: prometheus.NewRegistry()}
		if err := s.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "holds no PEM certificate") {
			t.Errorf("Run: %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "ca.crt")); err != nil {
			t.Fatal(err)
		}
	})
}

func TestMetricsRegisterTwice(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewMetrics(reg)
	if err != nil {
		t.Fatalf("a second NewMetrics on the same registry: %v", err)
	}
	a.pair(pairKey{kind: "K", from: "a", to: "b"}).observe(time.Now(), time.Millisecond, true)
	b.pair(pairKey{kind: "K", from: "a", to: "b"}).observe(time.Now(), time.Millisecond, true)
	if got := counterValue(t, reg, "K", "a", "b", "success"); got != 2 {
		t.Errorf("shared collectors count %v, want 2", got)
	}
}

// The last-conversion gauge tells `orkestra versions` when a version was
// last used.
func TestLastConversionTimestamp(t *testing.T) {
	ts := startServer(t)
	before := float64(time.Now().UnixNano()) / 1e9
	if code, body := ts.post(t, review(t, ReviewV1, "t1", group+"/v1alpha1", website("v1", "a", "nginx"))); code != 200 {
		t.Fatalf("HTTP %d %s", code, body)
	}
	after := float64(time.Now().UnixNano()) / 1e9
	g := metric(t, ts.reg, MetricLastSeen, map[string]string{"kind": "Website", "from_version": "v1", "to_version": "v1alpha1"})
	if g == nil || g.GetGauge().GetValue() < before || g.GetGauge().GetValue() > after {
		t.Fatalf("%s = %v, want between %f and %f", MetricLastSeen, g, before, after)
	}
	if other := metric(t, ts.reg, MetricLastSeen, map[string]string{"kind": "Website", "from_version": "v1alpha1", "to_version": "v1"}); other != nil {
		t.Errorf("a pair that never converted has a timestamp: %v", other)
	}
}

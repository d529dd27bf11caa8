package webhook

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard()) // certwatcher logs through controller-runtime
	os.Exit(m.Run())
}

var reviewVersions = []string{ReviewV1, ReviewV1beta1}

// ---- certificates ----

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newCA(t testing.TB, cn string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

func (ca *testCA) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// issue returns a PEM certificate and key for cn, a server certificate for
// 127.0.0.1 and localhost, or a client certificate.
func (ca *testCA) issue(t testing.TB, cn string, client bool) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	if client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
		tmpl.DNSNames, tmpl.IPAddresses = nil, nil
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// ---- a fake converter ----

const group = "demo.orkestra.io"

// fakeConverter converts Website v1alpha1 ↔ v1 and Blog v1beta1 ↔ v1 in Go,
// like the website katalog does, and misbehaves on request: spec.image picks
// the misbehaviour.
type fakeConverter struct {
	entered chan struct{} // "block": signalled on entry
	release chan struct{} // "block": waits for it
}

func (f *fakeConverter) Handles(gk schema.GroupKind) bool {
	return gk.Group == group && (gk.Kind == "Website" || gk.Kind == "Blog")
}

func (f *fakeConverter) Convert(obj *unstructured.Unstructured, desired string) (*unstructured.Unstructured, error) {
	gv, _ := schema.ParseGroupVersion(obj.GetAPIVersion())
	to, _ := schema.ParseGroupVersion(desired)
	if gv.Version == to.Version {
		return obj, nil
	}
	versions := map[string][]string{"Website": {"v1alpha1", "v1"}, "Blog": {"v1beta1", "v1"}}[obj.GetKind()]
	for _, v := range []string{gv.Version, to.Version} {
		if !contains(versions, v) {
			return nil, fmt.Errorf("version %q is not served", v)
		}
	}
	out := map[string]any{}
	for k, v := range obj.Object {
		out[k] = v
	}
	out["apiVersion"] = desired
	spec := map[string]any{}
	in, _ := obj.Object["spec"].(map[string]any)
	for k, v := range in {
		spec[k] = v
	}
	if obj.GetKind() == "Website" {
		if to.Version == "v1" {
			delete(spec, "theme")
			spec["seo"] = map[string]any{"enabled": false}
		} else {
			delete(spec, "seo")
			spec["theme"] = "default"
		}
	}
	out["spec"] = spec
	meta := map[string]any{}
	for k, v := range obj.Object["metadata"].(map[string]any) {
		meta[k] = v
	}
	out["metadata"] = meta
	switch spec["image"] {
	case "fail":
		return nil, errors.New(`spec.image: evaluating ${self.spec.image.bad()} (at katalog.yaml:30:22): no such overload`)
	case "panic":
		var m map[string]any
		m["boom"] = 1 // nil map write
	case "rename":
		meta["name"] = "renamed"
	case "mutate-input":
		// changes the input in place and shares its metadata
		obj.Object["metadata"].(map[string]any)["namespace"] = "elsewhere"
		out["metadata"] = obj.Object["metadata"]
	case "add-finalizer":
		meta["finalizers"] = []any{"x"}
	case "drop-uid":
		delete(meta, "uid")
	case "label":
		meta["labels"] = map[string]any{"converted-by": "fake"}
		meta["annotations"] = map[string]string{"note": "typed map"}
	case "bad-label":
		meta["labels"] = map[string]any{"converted-by": "not valid!"}
	case "bad-annotation":
		meta["annotations"] = map[string]any{"Bad Key!": "x"}
	case "huge-annotation":
		meta["annotations"] = map[string]any{"big": strings.Repeat("x", 300<<10)}
	case "annotation-int":
		meta["annotations"] = map[string]any{"count": int64(1)}
	case "kind":
		out["kind"] = "Webthing"
	case "nil":
		return nil, nil
	case "panic-encode":
		spec["bomb"] = panickyValue{}
	case "block":
		select {
		case f.entered <- struct{}{}:
		default:
		}
		<-f.release
	}
	return &unstructured.Unstructured{Object: out}, nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// fakePlan is a plan with the fake converter's kinds: entries website-v1alpha1,
// website-v1 (3 workers) and blog-v1; Website has conversion declared.
func fakePlan() *engine.Plan {
	gvk := func(kind, v string) schema.GroupVersionKind {
		return schema.GroupVersionKind{Group: group, Version: v, Kind: kind}
	}
	return &engine.Plan{
		Katalog: &katalog.Katalog{Name: "fake"},
		Entries: []*engine.Entry{
			{Name: "website-v1alpha1", GVK: gvk("Website", "v1alpha1"), Workers: 1, Enabled: true},
			{Name: "website-v1", GVK: gvk("Website", "v1"), Workers: 3, Enabled: true},
			{Name: "blog-v1", GVK: gvk("Blog", "v1"), Workers: 2, Enabled: true},
		},
		Conversions: map[schema.GroupKind]*engine.Conversion{
			{Group: group, Kind: "Website"}: {Versions: []string{"v1alpha1", "v1"}, StorageVersion: "v1"},
			{Group: group, Kind: "Blog"}:    {Versions: []string{"v1beta1", "v1"}, StorageVersion: "v1"},
		},
	}
}

// ---- reviews ----

func website(version, name, image string) map[string]any {
	spec := map[string]any{"image": image, "replicas": int64(2), "port": int64(8080), "tier": "pro"}
	if version == "v1alpha1" {
		spec["theme"] = "dark"
	} else {
		spec["seo"] = map[string]any{"enabled": true, "keywords": []any{"shoes"}}
	}
	return map[string]any{
		"apiVersion": group + "/" + version,
		"kind":       "Website",
		"metadata": map[string]any{
			"name": name, "namespace": "default", "uid": "uid-" + name, "resourceVersion": "7", "generation": int64(2),
			"creationTimestamp": "2026-01-02T03:04:05Z", "labels": map[string]any{"team": "storefront"},
		},
		"spec": spec,
	}
}

func blog(version, name string) map[string]any {
	return map[string]any{
		"apiVersion": group + "/" + version, "kind": "Blog",
		"metadata": map[string]any{"name": name, "namespace": "blogs", "uid": "uid-" + name},
		"spec":     map[string]any{"title": "Hello"},
	}
}

// review encodes a ConversionReview request with the apiextensions types.
func review(t testing.TB, version, uid, desired string, objs ...map[string]any) []byte {
	t.Helper()
	raws := make([]runtime.RawExtension, len(objs))
	for i, o := range objs {
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		raws[i].Raw = b
	}
	var v any
	if version == ReviewV1beta1 {
		r := &apiextensionsv1beta1.ConversionReview{Request: &apiextensionsv1beta1.ConversionRequest{DesiredAPIVersion: desired, Objects: raws}}
		r.APIVersion, r.Kind, r.Request.UID = version, "ConversionReview", types.UID(uid)
		v = r
	} else {
		r := &apiextensionsv1.ConversionReview{Request: &apiextensionsv1.ConversionRequest{DesiredAPIVersion: desired, Objects: raws}}
		r.APIVersion, r.Kind, r.Request.UID = version, "ConversionReview", types.UID(uid)
		v = r
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// reviewResult is a decoded response review.
type reviewResult struct {
	APIVersion, Kind string
	UID              string
	Status, Message  string
	Objects          []map[string]any
	RawObjects       [][]byte
}

// decodeResponse decodes a response with the apiextensions type of version,
// rejecting unknown fields.
func decodeResponse(t testing.TB, version string, body []byte) reviewResult {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var res reviewResult
	var objs []runtime.RawExtension
	if version == ReviewV1beta1 {
		var r apiextensionsv1beta1.ConversionReview
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("decoding the response as %s: %v\n%s", version, err, body)
		}
		if r.Response == nil || r.Request != nil {
			t.Fatalf("want a response and no request: %s", body)
		}
		res = reviewResult{APIVersion: r.APIVersion, Kind: r.Kind, UID: string(r.Response.UID), Status: r.Response.Result.Status, Message: r.Response.Result.Message}
		objs = r.Response.ConvertedObjects
	} else {
		var r apiextensionsv1.ConversionReview
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("decoding the response as %s: %v\n%s", version, err, body)
		}
		if r.Response == nil || r.Request != nil {
			t.Fatalf("want a response and no request: %s", body)
		}
		res = reviewResult{APIVersion: r.APIVersion, Kind: r.Kind, UID: string(r.Response.UID), Status: r.Response.Result.Status, Message: r.Response.Result.Message}
		objs = r.Response.ConvertedObjects
	}
	if res.APIVersion != version || res.Kind != "ConversionReview" {
		t.Fatalf("response review is %s %s, want %s ConversionReview", res.APIVersion, res.Kind, version)
	}
	for _, o := range objs {
		var m map[string]any
		if err := json.Unmarshal(o.Raw, &m); err != nil {
			t.Fatalf("converted object: %v: %s", err, o.Raw)
		}
		res.Objects = append(res.Objects, m)
		res.RawObjects = append(res.RawObjects, o.Raw)
	}
	return res
}

// ---- a running server ----

type testServer struct {
	srv       *Server
	reg       *prometheus.Registry
	convert   string // https://…/convert
	http      string // http://…
	client    *http.Client
	ca        *testCA
	certFile  string
	keyFile   string
	cancel    context.CancelFunc
	done      chan error
	converter *fakeConverter
}

type serverOption func(*Server)

// startServer runs a Server on loopback ports with a fresh certificate, the
// fake converter and plan, and its own metrics registry.
func startServer(t testing.TB, opts ...serverOption) *testServer {
	t.Helper()
	dir := t.TempDir()
	ca := newCA(t, "test-ca")
	certPEM, keyPEM := ca.issue(t, "webhook-a", false)
	ts := &testServer{
		reg: prometheus.NewRegistry(), ca: ca,
		certFile: filepath.Join(dir, "tls.crt"), keyFile: filepath.Join(dir, "tls.key"),
		converter: &fakeConverter{entered: make(chan struct{}, 1), release: make(chan struct{})},
		done:      make(chan error, 1),
	}
	writeFile(t, ts.certFile, certPEM)
	writeFile(t, ts.keyFile, keyPEM)
	wl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.srv = &Server{
		Config:          Config{CertFile: ts.certFile, KeyFile: ts.keyFile, CertPollInterval: 50 * time.Millisecond},
		Plan:            fakePlan(),
		Converter:       ts.converter,
		Registry:        ts.reg,
		WebhookListener: wl,
		HTTPListener:    hl,
	}
	for _, o := range opts {
		o(ts.srv)
	}
	ts.convert = "https://" + wl.Addr().String() + "/convert"
	ts.http = "http://" + hl.Addr().String()
	ts.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.pool()}}}
	ctx, cancel := context.WithCancel(context.Background())
	ts.cancel = cancel
	go func() { ts.done <- ts.srv.Run(ctx) }()
	select {
	case <-ts.srv.Ready():
	case err := <-ts.done:
		t.Fatalf("server stopped: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("server not ready after 10s")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-ts.done:
		case <-time.After(10 * time.Second):
			t.Error("server did not stop")
		}
	})
	return ts
}

func (ts *testServer) post(t testing.TB, body []byte) (int, []byte) {
	t.Helper()
	return ts.do(t, http.MethodPost, ts.convert, "application/json", body)
}

func (ts *testServer) do(t testing.TB, method, url, contentType string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func (ts *testServer) get(t testing.TB, path string) (int, []byte) {
	t.Helper()
	return ts.do(t, http.MethodGet, ts.http+path, "", nil)
}

// ---- metrics ----

// metric returns the metric family name's sample with the given labels.
func metric(t testing.TB, g prometheus.Gatherer, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			for _, l := range m.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue next
				}
			}
			return m
		}
	}
	return nil
}

func counterValue(t testing.TB, g prometheus.Gatherer, kind, from, to, result string) float64 {
	t.Helper()
	m := metric(t, g, MetricRequests, map[string]string{"kind": kind, "from_version": from, "to_version": to, "result": result})
	if m == nil {
		return 0
	}
	return m.GetCounter().GetValue()
}

func mustContain(t testing.TB, s string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(s, p) {
			t.Errorf("%q does not contain %q", s, p)
		}
	}
}

func schemaGVK(g, v, k string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: g, Version: v, Kind: k}
}

// panickyValue panics when encoded: a bug outside the converter.
type panickyValue struct{}

func (panickyValue) MarshalJSON() ([]byte, error) { panic("boom while encoding") }

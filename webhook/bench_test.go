package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	engineconversion "github.com/orkspace/orkestra-cel/engine/conversion"
)

// BenchmarkConvertReview converts a ConversionReview of n Website objects
// v1alpha1 → v1 through a whole handler (ServeHTTP, httptest recorder, no
// network), side by side:
//
//	identity     this handler, a converter that only sets apiVersion: the floor
//	cel          this handler, engine/conversion on the website katalog
//	go           the same conversion hand-written in Go over typed structs,
//	             in a hand-written handler (encoding/json in and out)
//	kubebuilder  the same Go conversion as hub/spoke types behind
//	             controller-runtime's conversion webhook handler
//	legacy       this handler, engine/conversion on the website katalog
//	             written with text/template values
//
// Besides ns/op each case reports cpu-ns/op, the process CPU time per
// operation (GC included), steadier than wall-clock time on a busy machine;
// the cel and legacy cases report their CPU-time ratios to identity and go
// as x-identity and x-go. Those ratios compare runs a second apart, and a
// shared machine changes speed between them; the paired case (n=100 and
// n=1000) alternates identity and cel in rounds of pairedChunk reviews and
// reports their ratio over the same stretch of time (see runPaired).
func BenchmarkConvertReview(b *testing.B) {
	handlers := benchHandlers(b)
	for _, n := range []int{1, 100, 1000} {
		body := benchReview(b, n)
		nsPerOp := map[string]float64{}
		for _, h := range handlers {
			b.Run(fmt.Sprintf("n=%d/%s", n, h.name), func(b *testing.B) {
				nsPerOp[h.name] = runHandler(b, h.handler, body)
				if h.name == "cel" || h.name == "legacy" {
					if id := nsPerOp["identity"]; id > 0 {
						b.ReportMetric(nsPerOp[h.name]/id, "x-identity")
					}
					if g := nsPerOp["go"]; g > 0 {
						b.ReportMetric(nsPerOp[h.name]/g, "x-go")
					}
				}
			})
		}
		if n > 1 {
			b.Run(fmt.Sprintf("n=%d/paired", n), func(b *testing.B) {
				runPaired(b, handlers[0].handler, handlerNamed(b, handlers, "cel"), body)
			})
		}
	}
}

func handlerNamed(t testing.TB, hs []benchHandler, name string) http.Handler {
	for _, h := range hs {
		if h.name == name {
			return h.handler
		}
	}
	t.Fatalf("no handler %s", name)
	return nil
}

// pairedChunk is how many reviews of one handler runPaired runs before it
// switches: enough that most garbage collections fall within the chunk
// whose allocations started them (a 100-object review allocates about a
// quarter of a megabyte), few enough that both handlers meet the same
// machine.
const pairedChunk = 16

// runPaired alternates base and h on body, pairedChunk reviews of each per
// iteration (ns/op is one iteration: 2×pairedChunk reviews), and reports
// the process CPU time per review of each (base-cpu-ns/review,
// cpu-ns/review) and h's over base's (x-identity).
func runPaired(b *testing.B, base, h http.Handler, body []byte) {
	rdr := bytes.NewReader(body)
	req := httptest.NewRequest(http.MethodPost, "/convert", nil)
	req.Header.Set("Content-Type", "application/json")
	req.Body = nopBody{rdr}
	req.ContentLength = int64(len(body))
	out := bytes.NewBuffer(make([]byte, 0, 2*len(body)+4096))
	chunk := func(h http.Handler) time.Duration {
		start := processCPU()
		for range pairedChunk {
			rdr.Reset(body)
			serve(h, req, out)
		}
		return processCPU() - start
	}
	chunk(base) // warm both
	chunk(h)
	var baseCPU, hCPU time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		baseCPU += chunk(base)
		hCPU += chunk(h)
	}
	if baseCPU <= 0 || hCPU <= 0 {
		return // no CPU time on this platform: nothing to pair
	}
	reviews := float64(b.N * pairedChunk)
	b.ReportMetric(float64(baseCPU)/reviews, "base-cpu-ns/review")
	b.ReportMetric(float64(hCPU)/reviews, "cpu-ns/review")
	b.ReportMetric(float64(hCPU)/float64(baseCPU), "x-identity")
}

type benchHandler struct {
	name    string
	handler http.Handler
}

func benchHandlers(t testing.TB) []benchHandler {
	t.Helper()
	handler := func(c Converter, path string) http.Handler {
		m, err := NewMetrics(prometheus.NewRegistry())
		if err != nil {
			t.Fatal(err)
		}
		var served []schema.GroupVersionKind
		if path != "" {
			served = compilePlan(t, path).Served()
		}
		return NewConvertHandler(c, ConvertOptions{Metrics: m, Served: served})
	}
	celPlan, legacyPlan := compilePlan(t, websiteKatalog), compilePlan(t, legacyKatalog)
	return []benchHandler{
		{"identity", handler(identityConverter{}, websiteKatalog)},
		{"go", &goHandler{}},
		{"kubebuilder", kubebuilderHandler(t)},
		{"cel", handler(engineconversion.New(celPlan, engineconversion.Options{}), websiteKatalog)},
		{"legacy", handler(engineconversion.New(legacyPlan, engineconversion.Options{}), legacyKatalog)},
	}
}

// benchObject is a Website v1alpha1 as the API server sends it.
func benchObject(i int) map[string]any {
	name := fmt.Sprintf("site-%04d", i)
	return map[string]any{
		"apiVersion": "demo.orkestra.io/v1alpha1",
		"kind":       "Website",
		"metadata": map[string]any{
			"name": name, "namespace": "default", "uid": fmt.Sprintf("0b8e5a8c-6d1f-4a63-9d1e-%012d", i),
			"resourceVersion": fmt.Sprint(100000 + i), "generation": int64(3), "creationTimestamp": "2026-03-01T10:00:00Z",
			"labels": map[string]any{"app": name, "team": "storefront"},
		},
		"spec": map[string]any{"image": "nginx:1.27", "replicas": int64(2 + i%3), "port": int64(8080), "theme": "dark", "tier": "pro"},
	}
}

func benchReview(t testing.TB, n int) []byte {
	objs := make([]map[string]any, n)
	for i := range objs {
		objs[i] = benchObject(i)
	}
	return review(t, ReviewV1, "bench", group+"/v1", objs...)
}

// nopBody is a reusable request body.
type nopBody struct{ *bytes.Reader }

func (nopBody) Close() error { return nil }

func serve(h http.Handler, req *http.Request, out *bytes.Buffer) *httptest.ResponseRecorder {
	out.Reset()
	rec := &httptest.ResponseRecorder{HeaderMap: make(http.Header), Body: out, Code: http.StatusOK}
	h.ServeHTTP(rec, req)
	return rec
}

// runHandler benchmarks h on body and returns the CPU time per operation
// (wall-clock time where the CPU time is not available).
func runHandler(b *testing.B, h http.Handler, body []byte) float64 {
	rdr := bytes.NewReader(body)
	req := httptest.NewRequest(http.MethodPost, "/convert", nil)
	req.Header.Set("Content-Type", "application/json")
	req.Body = nopBody{rdr}
	req.ContentLength = int64(len(body))
	out := bytes.NewBuffer(make([]byte, 0, 2*len(body)+4096))
	check := func() {
		rdr.Reset(body)
		rec := serve(h, req, out)
		var r apiextensionsv1.ConversionReview
		if err := json.Unmarshal(out.Bytes(), &r); rec.Code != 200 || err != nil || r.Response.Result.Status != metav1.StatusSuccess {
			b.Fatalf("HTTP %d %v: %.300s", rec.Code, err, out.Bytes())
		}
	}
	check()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for b.Loop() {
		rdr.Reset(body)
		serve(h, req, out)
	}
	if cpu > 0 {
		perOp := float64(processCPU()-cpu) / float64(b.N)
		b.ReportMetric(perOp, "cpu-ns/op")
		return perOp
	}
	return float64(b.Elapsed().Nanoseconds()) / float64(b.N)
}

// identityConverter only sets apiVersion.
type identityConverter struct{}

func (identityConverter) Convert(obj *unstructured.Unstructured, desired string) (*unstructured.Unstructured, error) {
	out := make(map[string]any, len(obj.Object))
	for k, v := range obj.Object {
		out[k] = v
	}
	out["apiVersion"] = desired
	return &unstructured.Unstructured{Object: out}, nil
}

// ---- the conversion written in Go over typed structs ----

type websiteV1alpha1Spec struct {
	Image    string `json:"image"`
	Replicas *int64 `json:"replicas,omitempty"`
	Port     *int64 `json:"port,omitempty"`
	Theme    string `json:"theme,omitempty"`
	Tier     string `json:"tier,omitempty"`
}

type websiteStatus struct {
	Phase         string `json:"phase,omitempty"`
	ReadyReplicas *int64 `json:"readyReplicas,omitempty"`
	Endpoint      string `json:"endpoint,omitempty"`
}

type websiteV1alpha1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              websiteV1alpha1Spec `json:"spec"`
	Status            *websiteStatus      `json:"status,omitempty"`
}

type websiteSEO struct {
	Enabled  *bool    `json:"enabled,omitempty"`
	Keywords []string `json:"keywords,omitempty"`
}

type websiteV1Spec struct {
	Image    string      `json:"image"`
	Replicas *int64      `json:"replicas,omitempty"`
	Port     *int64      `json:"port,omitempty"`
	Tier     string      `json:"tier,omitempty"`
	SEO      *websiteSEO `json:"seo,omitempty"`
}

type websiteV1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              websiteV1Spec  `json:"spec"`
	Status            *websiteStatus `json:"status,omitempty"`
}

const stashAnnotation = "conversion.orkestra.orkspace.io/stash"

// themeStash is the annotation the CEL path writes to keep spec.theme for the
// way back: the Go conversion does the same, to do the same work.
type themeStash struct {
	V1alpha1 struct {
		Set struct {
			Spec struct {
				Theme string `json:"theme"`
			} `json:"spec"`
		} `json:"set"`
	} `json:"v1alpha1"`
}

func convertWebsiteUp(in *websiteV1alpha1, out *websiteV1) error {
	out.TypeMeta = metav1.TypeMeta{APIVersion: group + "/v1", Kind: "Website"}
	out.ObjectMeta = in.ObjectMeta
	if in.Spec.Theme != "" {
		var s themeStash
		s.V1alpha1.Set.Spec.Theme = in.Spec.Theme
		b, err := json.Marshal(&s)
		if err != nil {
			return err
		}
		annotations := make(map[string]string, len(in.Annotations)+1)
		for k, v := range in.Annotations {
			annotations[k] = v
		}
		annotations[stashAnnotation] = string(b)
		out.Annotations = annotations
	}
	disabled := false
	out.Spec = websiteV1Spec{Image: in.Spec.Image, Replicas: in.Spec.Replicas, Port: in.Spec.Port, Tier: in.Spec.Tier, SEO: &websiteSEO{Enabled: &disabled}}
	out.Status = in.Status
	return nil
}

// goHandler is a hand-written /convert handler over the typed structs.
type goHandler struct{}

func (goHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if r.Header.Get("Content-Type") != "application/json" {
		w.WriteHeader(http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, DefaultMaxRequestBytes+1))
	if err != nil || len(body) > DefaultMaxRequestBytes {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		return
	}
	var review apiextensionsv1.ConversionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	for _, raw := range review.Request.Objects {
		var in websiteV1alpha1
		var out websiteV1
		err := json.Unmarshal(raw.Raw, &in)
		if err == nil {
			err = convertWebsiteUp(&in, &out)
		}
		var b []byte
		if err == nil {
			b, err = json.Marshal(&out)
		}
		if err != nil {
			resp = &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}}
			break
		}
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: b})
	}
	review.Request, review.Response = nil, resp
	b, err := json.Marshal(&review)
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// ---- the same as kubebuilder hub/spoke types ----

func (w *websiteV1alpha1) DeepCopyObject() runtime.Object {
	c := *w
	w.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	if w.Status != nil {
		s := *w.Status
		c.Status = &s
	}
	return &c
}

func (w *websiteV1) DeepCopyObject() runtime.Object {
	c := *w
	w.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	if w.Status != nil {
		s := *w.Status
		c.Status = &s
	}
	return &c
}

// Hub marks v1 as the hub version.
func (*websiteV1) Hub() {}

func (w *websiteV1alpha1) ConvertTo(hub conversion.Hub) error {
	return convertWebsiteUp(w, hub.(*websiteV1))
}

func (w *websiteV1alpha1) ConvertFrom(conversion.Hub) error {
	return errors.New("not needed by the benchmark")
}

func kubebuilderHandler(t testing.TB) http.Handler {
	scheme := runtime.NewScheme()
	scheme.AddKnownTypeWithName(schema.GroupVersionKind{Group: group, Version: "v1alpha1", Kind: "Website"}, &websiteV1alpha1{})
	scheme.AddKnownTypeWithName(schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Website"}, &websiteV1{})
	return crconversion.NewWebhookHandler(scheme, crconversion.NewRegistry())
}

// The benchmark's conversions agree: the CEL, legacy, Go and kubebuilder
// handlers return the same objects.
func TestBenchmarkHandlersAgree(t *testing.T) {
	body := benchReview(t, 5)
	var want []any
	for _, h := range benchHandlers(t) {
		req := httptest.NewRequest(http.MethodPost, "/convert", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		out := new(bytes.Buffer)
		if rec := serve(h.handler, req, out); rec.Code != 200 {
			t.Fatalf("%s: HTTP %d", h.name, rec.Code)
		}
		var r struct {
			Response struct {
				ConvertedObjects []any
				Result           metav1.Status
			}
		}
		if err := json.Unmarshal(out.Bytes(), &r); err != nil || r.Response.Result.Status != metav1.StatusSuccess {
			t.Fatalf("%s: %v %s", h.name, err, out.Bytes())
		}
		switch {
		case h.name == "identity":
			continue
		case want == nil:
			want = r.Response.ConvertedObjects
		case !reflect.DeepEqual(r.Response.ConvertedObjects, want):
			t.Errorf("%s converts differently:\n got %v\nwant %v", h.name, r.Response.ConvertedObjects, want)
		}
	}
	if len(want) != 5 {
		t.Fatalf("%d objects", len(want))
	}
}

package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Protocol tests: every case through a running Server (HTTPS, the fake
// converter), for both review versions.

func forEachVersion(t *testing.T, f func(t *testing.T, version string)) {
	for _, v := range reviewVersions {
		t.Run(strings.TrimPrefix(v, "apiextensions.k8s.io/"), func(t *testing.T) { f(t, v) })
	}
}

func TestConvertSuccess(t *testing.T) {
	ts := startServer(t)
	forEachVersion(t, func(t *testing.T, version string) {
		in := []map[string]any{website("v1alpha1", "first", "nginx:1"), website("v1alpha1", "second", "nginx:2"), website("v1alpha1", "third", "nginx:3")}
		code, body := ts.post(t, review(t, version, "uid-123", group+"/v1", in...))
		if code != http.StatusOK {
			t.Fatalf("HTTP %d: %s", code, body)
		}
		res := decodeResponse(t, version, body)
		if res.UID != "uid-123" {
			t.Errorf("uid %q, want uid-123 echoed", res.UID)
		}
		if res.Status != metav1.StatusSuccess || res.Message != "" {
			t.Fatalf("status %q %q, want Success", res.Status, res.Message)
		}
		if len(res.Objects) != len(in) {
			t.Fatalf("%d converted objects, want %d", len(res.Objects), len(in))
		}
		for i, o := range res.Objects {
			meta := o["metadata"].(map[string]any)
			if o["apiVersion"] != group+"/v1" || o["kind"] != "Website" {
				t.Errorf("object %d is %v %v", i, o["apiVersion"], o["kind"])
			}
			if want := in[i]["metadata"].(map[string]any)["name"]; meta["name"] != want {
				t.Errorf("object %d is %v, want %v: order not kept", i, meta["name"], want)
			}
			spec := o["spec"].(map[string]any)
			if spec["image"] != fmt.Sprintf("nginx:%d", i+1) || spec["replicas"] != 2.0 || spec["theme"] != nil {
				t.Errorf("object %d spec %v", i, spec)
			}
			if !reflect.DeepEqual(spec["seo"], map[string]any{"enabled": false}) {
				t.Errorf("object %d seo %v", i, spec["seo"])
			}
			// metadata untouched
			wantMeta := roundTrip(t, in[i]["metadata"])
			if !reflect.DeepEqual(meta, wantMeta) {
				t.Errorf("object %d metadata %v, want %v", i, meta, wantMeta)
			}
		}
	})
}

func roundTrip(t testing.TB, v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestConvertSeveralKindsAndVersions(t *testing.T) {
	ts := startServer(t)
	forEachVersion(t, func(t *testing.T, version string) {
		in := []map[string]any{
			website("v1alpha1", "a", "nginx"),
			blog("v1beta1", "b"),
			website("v1", "c", "nginx"), // already at the desired version
			blog("v1", "d"),
			website("v1alpha1", "e", "nginx"),
		}
		code, body := ts.post(t, review(t, version, "multi", group+"/v1", in...))
		if code != http.StatusOK {
			t.Fatalf("HTTP %d: %s", code, body)
		}
		res := decodeResponse(t, version, body)
		if res.Status != metav1.StatusSuccess {
			t.Fatalf("%s: %s", res.Status, res.Message)
		}
		var got []string
		for _, o := range res.Objects {
			got = append(got, fmt.Sprintf("%s %s %s", o["apiVersion"], o["kind"], o["metadata"].(map[string]any)["name"]))
		}
		want := []string{group + "/v1 Website a", group + "/v1 Blog b", group + "/v1 Website c", group + "/v1 Blog d", group + "/v1 Website e"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}

func TestConvertSameVersionUnchanged(t *testing.T) {
	ts := startServer(t)
	forEachVersion(t, func(t *testing.T, version string) {
		// Unusual formatting and key order must survive: the object is not re-encoded.
		obj := `{ "kind":"Website","apiVersion":"demo.orkestra.io/v1",
		  "spec":{"z":1,"a":[true,null,1.50]},"metadata":{"name":"same","namespace":"default"} }`
		body := fmt.Sprintf(`{"apiVersion":%q,"kind":"ConversionReview","request":{"uid":"s","desiredAPIVersion":"demo.orkestra.io/v1","objects":[%s]}}`, version, obj)
		code, resp := ts.post(t, []byte(body))
		if code != http.StatusOK {
			t.Fatalf("HTTP %d: %s", code, resp)
		}
		res := decodeResponse(t, version, resp)
		if res.Status != metav1.StatusSuccess || len(res.RawObjects) != 1 {
			t.Fatalf("%s %s: %d objects", res.Status, res.Message, len(res.RawObjects))
		}
		if string(res.RawObjects[0]) != strings.TrimSpace(obj) {
			t.Errorf("same-version object changed:\n got %s\nwant %s", res.RawObjects[0], obj)
		}
	})
}

// failure posts a review and checks it fails with a message holding parts
// and without converted objects.
func failure(t *testing.T, ts *testServer, version string, body []byte, parts ...string) string {
	t.Helper()
	code, resp := ts.post(t, body)
	if code != http.StatusOK {
		t.Fatalf("HTTP %d, want 200 with a Failure: %s", code, resp)
	}
	res := decodeResponse(t, version, resp)
	if res.Status != metav1.StatusFailure {
		t.Fatalf("status %q, want Failure: %s", res.Status, resp)
	}
	if len(res.Objects) != 0 || bytes.Contains(resp, []byte(`"convertedObjects":[`)) {
		t.Errorf("a failed review returned converted objects: %s", resp)
	}
	if res.UID != "fail-uid" {
		t.Errorf("uid %q not echoed on failure", res.UID)
	}
	mustContain(t, res.Message, parts...)
	return res.Message
}

func TestConvertFailures(t *testing.T) {
	ts := startServer(t)
	forEachVersion(t, func(t *testing.T, version string) {
		cases := []struct {
			name    string
			desired string
			objs    []map[string]any
			parts   []string
		}{
			{"unknown kind", group + "/v1",
				[]map[string]any{website("v1alpha1", "ok", "nginx"), {"apiVersion": group + "/v1alpha1", "kind": "Widget", "metadata": map[string]any{"name": "w", "namespace": "default"}}},
				[]string{"Widget default/w", group + "/v1alpha1", "to " + group + "/v1", "Widget.demo.orkestra.io is not served", "Website.demo.orkestra.io v1alpha1, v1"}},
			{"unknown kind at the desired version", group + "/v1",
				[]map[string]any{{"apiVersion": group + "/v1", "kind": "Widget", "metadata": map[string]any{"name": "w2", "namespace": "default"}}},
				[]string{"Widget default/w2", "Widget.demo.orkestra.io is not served"}},
			{"unknown source version", group + "/v1",
				[]map[string]any{website("v9", "old", "nginx")},
				[]string{"Website default/old", "from " + group + "/v9 to " + group + "/v1", "version v9 of Website.demo.orkestra.io is not served (served: v1alpha1, v1)"}},
			{"unknown target version", group + "/v2",
				[]map[string]any{website("v1alpha1", "new", "nginx")},
				[]string{"Website default/new", "to " + group + "/v2", "version v2 of Website.demo.orkestra.io is not served"}},
			{"failing object in the middle", group + "/v1",
				[]map[string]any{website("v1alpha1", "a", "nginx"), website("v1alpha1", "broken", "fail"), website("v1alpha1", "c", "nginx")},
				[]string{"Website default/broken", "from " + group + "/v1alpha1 to " + group + "/v1", "spec.image", "${self.spec.image.bad()}", "katalog.yaml:30:22"}},
			{"converter panics", group + "/v1",
				[]map[string]any{website("v1alpha1", "p", "panic")},
				[]string{"Website default/p", "panicked", "assignment to entry in nil map"}},
			{"handler panics", group + "/v1",
				[]map[string]any{website("v1alpha1", "e", "panic-encode")},
				[]string{"internal error converting the review", "boom while encoding"}},
			{"converter returns nothing", group + "/v1",
				[]map[string]any{website("v1alpha1", "n", "nil")},
				[]string{"Website default/n", "returned no object"}},
			{"group change", "other.io/v1",
				[]map[string]any{website("v1alpha1", "g", "nginx")},
				[]string{"Website default/g", "cannot change the API group"}},
			{"object without kind", group + "/v1",
				[]map[string]any{{"apiVersion": group + "/v1alpha1", "metadata": map[string]any{"name": "k"}}},
				[]string{"has no apiVersion or kind"}},
			{"bad desiredAPIVersion", "a/b/c",
				[]map[string]any{website("v1alpha1", "d", "nginx")},
				[]string{`desiredAPIVersion "a/b/c"`}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				failure(t, ts, version, review(t, version, "fail-uid", c.desired, c.objs...), c.parts...)
			})
		}
		t.Run("object is not a JSON object", func(t *testing.T) {
			body := fmt.Sprintf(`{"apiVersion":%q,"kind":"ConversionReview","request":{"uid":"fail-uid","desiredAPIVersion":"demo.orkestra.io/v1","objects":["just a string"]}}`, version)
			failure(t, ts, version, []byte(body), "objects[0] is not a JSON object")
		})
		t.Run("no active conversions left", func(t *testing.T) {
			for _, kind := range []string{"Website", "unknown"} {
				if g := metric(t, ts.reg, MetricActive, map[string]string{"kind": kind}); g == nil || g.GetGauge().GetValue() != 0 {
					t.Errorf("%s{kind=%s} = %v after failures and panics, want 0", MetricActive, kind, g)
				}
			}
		})
		t.Run("server still serves after a panic", func(t *testing.T) {
			code, body := ts.post(t, review(t, version, "after", group+"/v1", website("v1alpha1", "fine", "nginx")))
			if res := decodeResponse(t, version, body); code != http.StatusOK || res.Status != metav1.StatusSuccess {
				t.Fatalf("HTTP %d %s %s", code, res.Status, res.Message)
			}
		})
	})
}

func TestMetadataGuard(t *testing.T) {
	ts := startServer(t)
	const only = "a conversion may change only metadata.labels and metadata.annotations"
	forEachVersion(t, func(t *testing.T, version string) {
		for image, parts := range map[string][]string{
			"rename":          {"Website default/m", `changed metadata.name from "m" to "renamed"`, only},
			"mutate-input":    {"Website default/m", `changed metadata.namespace from "default" to "elsewhere"`, only},
			"add-finalizer":   {"Website default/m", "added metadata.finalizers", only},
			"drop-uid":        {"Website default/m", "removed metadata.uid", only},
			"kind":            {"Website default/m", "changed kind from Website to Webthing"},
			"bad-label":       {"Website default/m", "invalid labels", "metadata.labels: Invalid value: \"not valid!\""},
			"annotation-int":  {"Website default/m", `metadata.annotations["count"] must be a string, got 1`},
			"bad-annotation":  {"Website default/m", "invalid annotations", `metadata.annotations: Invalid value: "Bad Key!"`},
			"huge-annotation": {"Website default/m", "invalid annotations", "metadata.annotations: Too long"},
		} {
			t.Run(image, func(t *testing.T) {
				failure(t, ts, version, review(t, version, "fail-uid", group+"/v1", website("v1alpha1", "m", image)), parts...)
			})
		}
		t.Run("labels and annotations may change", func(t *testing.T) {
			code, body := ts.post(t, review(t, version, "labels", group+"/v1", website("v1alpha1", "m", "label")))
			res := decodeResponse(t, version, body)
			if code != http.StatusOK || res.Status != metav1.StatusSuccess {
				t.Fatalf("HTTP %d %s %s", code, res.Status, res.Message)
			}
			meta := res.Objects[0]["metadata"].(map[string]any)
			if !reflect.DeepEqual(meta["labels"], map[string]any{"converted-by": "fake"}) || !reflect.DeepEqual(meta["annotations"], map[string]any{"note": "typed map"}) {
				t.Errorf("labels %v annotations %v", meta["labels"], meta["annotations"])
			}
		})
	})
}

func TestBadRequests(t *testing.T) {
	ts := startServer(t, func(s *Server) { s.MaxRequestBytes = 4096 })
	valid := func(version string) []byte {
		return review(t, version, "u", group+"/v1", website("v1alpha1", "a", "nginx"))
	}
	forEachVersion(t, func(t *testing.T, version string) {
		big := review(t, version, "u", group+"/v1", website("v1alpha1", strings.Repeat("x", 5000), "nginx"))
		cases := []struct {
			name, method, contentType string
			body                      []byte
			code                      int
			msg                       string
		}{
			{"malformed JSON", "POST", "application/json", []byte(`{"apiVersion":`), 400, "invalid JSON at byte 14"},
			{"truncated object", "POST", "application/json", valid(version)[:60], 400, "invalid JSON"},
			{"trailing data", "POST", "application/json", append(valid(version), `{}`...), 400, "after the top-level value"},
			{"missing request", "POST", "application/json", fmt.Appendf(nil, `{"apiVersion":%q,"kind":"ConversionReview"}`, version), 400, "no request"},
			{"null request", "POST", "application/json", fmt.Appendf(nil, `{"apiVersion":%q,"kind":"ConversionReview","request":null}`, version), 400, "no request"},
			{"not a review", "POST", "application/json", fmt.Appendf(nil, `{"apiVersion":%q,"kind":"AdmissionReview","request":{}}`, version), 400, `kind is "AdmissionReview"`},
			{"unknown review version", "POST", "application/json", []byte(`{"apiVersion":"apiextensions.k8s.io/v2","kind":"ConversionReview","request":{}}`), 400, `unsupported apiVersion "apiextensions.k8s.io/v2"`},
			{"JSON array", "POST", "application/json", []byte(`[]`), 400, "expected '{'"},
			{"empty body", "POST", "application/json", nil, 400, "unexpected end of input"},
			{"GET", "GET", "", nil, 405, "method GET not allowed"},
			{"PUT", "PUT", "application/json", valid(version), 405, "method PUT not allowed"},
			{"too large", "POST", "application/json", big, 413, "exceeds the limit of 4096 bytes"},
			{"text/plain", "POST", "text/plain", valid(version), 415, `Content-Type "text/plain" not supported`},
			{"no Content-Type", "POST", "", valid(version), 415, "not supported"},
			{"yaml", "POST", "application/yaml", valid(version), 415, "not supported"},
			{"charset parameter", "POST", "application/json; charset=utf-8", valid(version), 200, ""},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				code, body := ts.do(t, c.method, ts.convert, c.contentType, c.body)
				if code != c.code {
					t.Fatalf("HTTP %d, want %d: %s", code, c.code, body)
				}
				if c.code == 200 {
					decodeResponse(t, version, body)
					return
				}
				var e struct{ Error string }
				if err := json.Unmarshal(body, &e); err != nil {
					t.Fatalf("error body is not JSON: %s", body)
				}
				mustContain(t, e.Error, c.msg)
			})
		}
	})
	t.Run("Allow header", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, ts.convert, nil)
		resp, err := ts.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" {
			t.Errorf("HTTP %d Allow %q, want 405 Allow POST", resp.StatusCode, resp.Header.Get("Allow"))
		}
	})
	t.Run("too large without Content-Length", func(t *testing.T) {
		big := review(t, ReviewV1, "u", group+"/v1", website("v1alpha1", strings.Repeat("x", 5000), "nginx"))
		req, _ := http.NewRequest(http.MethodPost, ts.convert, io.MultiReader(bytes.NewReader(big))) // chunked
		req.Header.Set("Content-Type", "application/json")
		resp, err := ts.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if req.ContentLength != 0 || resp.StatusCode != 413 {
			t.Errorf("HTTP %d (Content-Length %d), want 413", resp.StatusCode, req.ContentLength)
		}
	})
}

// The hand-assembled success response is exactly what encoding/json writes
// for the apiextensions types.
func TestResponseEncodingMatchesTypes(t *testing.T) {
	h := NewConvertHandler(&fakeConverter{}, ConvertOptions{})
	for _, version := range reviewVersions {
		for _, n := range []int{0, 1, 3} {
			var objs []map[string]any
			for i := range n {
				objs = append(objs, website("v1alpha1", fmt.Sprint("o", i), "nginx"))
			}
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, "/convert", bytes.NewReader(review(t, version, "u\"<1>", group+"/v1", objs...)))
			req.Header.Set("Content-Type", "application/json")
			h.ServeHTTP(rec, req)
			got := rec.Body.Bytes()
			if rec.Code != 200 || rec.Header().Get("Content-Length") != fmt.Sprint(len(got)) {
				t.Fatalf("HTTP %d, Content-Length %s for %d bytes", rec.Code, rec.Header().Get("Content-Length"), len(got))
			}
			res := decodeResponse(t, version, got)
			raws := make([]runtime.RawExtension, len(res.RawObjects))
			for i, r := range res.RawObjects {
				raws[i].Raw = r
			}
			var typed any
			if version == ReviewV1 {
				typed = &apiextensionsv1.ConversionReview{TypeMeta: metav1.TypeMeta{APIVersion: version, Kind: "ConversionReview"},
					Response: &apiextensionsv1.ConversionResponse{UID: "u\"<1>", ConvertedObjects: raws, Result: metav1.Status{Status: "Success"}}}
			} else {
				typed = &apiextensionsv1beta1.ConversionReview{TypeMeta: metav1.TypeMeta{APIVersion: version, Kind: "ConversionReview"},
					Response: &apiextensionsv1beta1.ConversionResponse{UID: "u\"<1>", ConvertedObjects: raws, Result: metav1.Status{Status: "Success"}}}
			}
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(typed); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("%s, %d objects:\n got %s\nwant %s", version, n, got, want.Bytes())
			}
		}
	}
}

// Whatever the body, the handler answers 200 with a review or 400, and never
// panics.
func FuzzConvertHandler(f *testing.F) {
	released := make(chan struct{})
	close(released)
	h := NewConvertHandler(&fakeConverter{release: released}, ConvertOptions{Served: fakePlan().Served()})
	for _, v := range reviewVersions {
		f.Add(review(f, v, "u", group+"/v1", website("v1alpha1", "a", "nginx"), blog("v1beta1", "b")))
		f.Add(review(f, v, "u", group+"/v1alpha1", website("v1", "a", "fail")))
	}
	f.Add([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"objects":[1,"x",null,{}]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest(http.MethodPost, "/convert", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK:
			var r apiextensionsv1.ConversionReview
			if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || r.Response == nil {
				t.Fatalf("200 with an invalid review (%v): %s", err, rec.Body.Bytes())
			}
			if r.Response.Result.Status == metav1.StatusFailure && len(r.Response.ConvertedObjects) > 0 {
				t.Fatalf("a failure with converted objects: %s", rec.Body.Bytes())
			}
		case http.StatusBadRequest:
		default:
			t.Fatalf("HTTP %d: %s", rec.Code, rec.Body.Bytes())
		}
	})
}

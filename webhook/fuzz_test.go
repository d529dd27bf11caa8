package webhook

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	engineconversion "github.com/orkspace/orkestra-cel/engine/conversion"
)

// FuzzConvertWebsite sends arbitrary bodies to /convert backed by the real
// converter on the website katalogs (CEL and legacy templates): 200 with a
// well-formed review (a failure carries no objects; a success one object
// per request object, each at the desired version) or 400, never a panic.
func FuzzConvertWebsite(f *testing.F) {
	var handlers []http.Handler
	for _, path := range []string{websiteKatalog, legacyKatalog} {
		plan := compilePlan(f, path)
		handlers = append(handlers, NewConvertHandler(engineconversion.New(plan, engineconversion.Options{}), ConvertOptions{Served: plan.Served()}))
	}
	stashed := website("v1", "s", "nginx")
	stashed["metadata"].(map[string]any)["annotations"] = map[string]any{engineconversion.StashAnnotation: `{"v1alpha1":{"set":{"spec":{"theme":"dark"}},"unset":[["spec","seo"]]}}`}
	for _, v := range reviewVersions {
		f.Add(review(f, v, "u", group+"/v1", website("v1alpha1", "a", "nginx"), website("v1", "b", "nginx")))
		f.Add(review(f, v, "u", group+"/v1alpha1", website("v1", "a", "nginx"), stashed))
	}
	f.Add(review(f, ReviewV1, "u", group+"/v1", benchObject(1)))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, h := range handlers {
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
				var in apiextensionsv1.ConversionReview
				_ = json.Unmarshal(body, &in)
				switch {
				case r.Response.Result.Status == metav1.StatusFailure && len(r.Response.ConvertedObjects) > 0:
					t.Fatalf("a failure with converted objects: %s", rec.Body.Bytes())
				case r.Response.Result.Status == metav1.StatusSuccess && in.Request != nil && len(r.Response.ConvertedObjects) != len(in.Request.Objects):
					t.Fatalf("%d objects converted of %d", len(r.Response.ConvertedObjects), len(in.Request.Objects))
				}
				for _, o := range r.Response.ConvertedObjects {
					var m map[string]any
					if err := json.Unmarshal(o.Raw, &m); err != nil || m["apiVersion"] != in.Request.DesiredAPIVersion {
						t.Fatalf("converted object %s not at %s (%v)", o.Raw, in.Request.DesiredAPIVersion, err)
					}
				}
			case http.StatusBadRequest:
			default:
				t.Fatalf("HTTP %d: %s", rec.Code, rec.Body.Bytes())
			}
		}
	})
}

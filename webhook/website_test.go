package webhook

import (
	"net/http"
	"reflect"
	"testing"

	celgo "github.com/google/cel-go/cel"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/orkestra-cel/engine"
	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/conversion"
	"github.com/orkspace/orkestra-cel/engine/gotmpl"
	"github.com/orkspace/orkestra-cel/katalog"
)

// Through the real converter (engine/conversion) on the website katalog.

const (
	websiteKatalog = "testdata/website/katalog.yaml"
	legacyKatalog  = "testdata/legacy-website/katalog.yaml"
)

// compilePlan loads and compiles a katalog with both backends, as the CLI does.
func compilePlan(t testing.TB, path string) *engine.Plan {
	t.Helper()
	k, diags := katalog.Load(path)
	if diags.HasErrors() {
		t.Fatalf("loading %s:\n%v", path, diags)
	}
	cel, err := celengine.New(celengine.Options{Libraries: []celgo.EnvOption{gotmpl.CELLibrary()}})
	if err != nil {
		t.Fatal(err)
	}
	plan, cdiags := engine.Compile(k, engine.Backends{CEL: cel, Legacy: gotmpl.New(cel)}, engine.CompileOptions{})
	if cdiags.HasErrors() {
		t.Fatalf("compiling %s:\n%v", path, cdiags)
	}
	return plan
}

func withKatalog(t testing.TB, path string) serverOption {
	plan := compilePlan(t, path)
	return func(s *Server) {
		s.Plan = plan
		s.Converter = conversion.New(plan, conversion.Options{})
	}
}

// helloV1alpha1 is examples/website/website-v1alpha1.yaml as the API server sends it.
func helloV1alpha1() map[string]any {
	return map[string]any{
		"apiVersion": "demo.orkestra.io/v1alpha1",
		"kind":       "Website",
		"metadata": map[string]any{
			"name": "hello", "namespace": "default", "uid": "6c4f-hello", "resourceVersion": "1234",
			"generation": int64(1), "creationTimestamp": "2026-03-01T10:00:00Z",
		},
		"spec": map[string]any{"image": "nginx:1.27", "replicas": int64(2), "port": int64(8080), "theme": "dark", "tier": "pro"},
	}
}

func TestWebsiteKatalog(t *testing.T) {
	for _, kat := range []string{websiteKatalog, legacyKatalog} {
		t.Run(kat, func(t *testing.T) {
			ts := startServer(t, withKatalog(t, kat))
			forEachVersion(t, func(t *testing.T, version string) {
				code, body := ts.post(t, review(t, version, "up", group+"/v1", helloV1alpha1()))
				res := decodeResponse(t, version, body)
				if code != http.StatusOK || res.Status != metav1.StatusSuccess {
					t.Fatalf("HTTP %d %s: %s", code, res.Status, res.Message)
				}
				up := res.Objects[0]
				wantSpec := map[string]any{"image": "nginx:1.27", "replicas": 2.0, "port": 8080.0, "tier": "pro", "seo": map[string]any{"enabled": false}}
				if up["apiVersion"] != group+"/v1" || !reflect.DeepEqual(up["spec"], wantSpec) {
					t.Fatalf("up-converted %v %v, want spec %v", up["apiVersion"], up["spec"], wantSpec)
				}
				// And back: theme comes back from the stash annotation.
				back := review(t, version, "down", group+"/v1alpha1", up)
				code, body = ts.post(t, back)
				res = decodeResponse(t, version, body)
				if code != http.StatusOK || res.Status != metav1.StatusSuccess {
					t.Fatalf("HTTP %d %s: %s", code, res.Status, res.Message)
				}
				down := res.Objects[0]
				if !reflect.DeepEqual(down["spec"], roundTrip(t, helloV1alpha1()["spec"])) {
					t.Errorf("round trip spec %v, want %v", down["spec"], helloV1alpha1()["spec"])
				}
				meta := down["metadata"].(map[string]any)
				for _, k := range []string{"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp"} {
					if meta[k] != roundTrip(t, helloV1alpha1()["metadata"]).(map[string]any)[k] {
						t.Errorf("metadata.%s changed: %v", k, meta[k])
					}
				}

				// Unknown versions are named with the served ones.
				failure(t, ts, version, review(t, version, "fail-uid", group+"/v2", helloV1alpha1()),
					"Website default/hello", "version v2 of Website.demo.orkestra.io is not served (served: v1alpha1, v1)")
			})
			// The statistics of the entries of the target versions.
			if s := ts.srv.Metrics().Summary(schemaGVK(group, "v1", "Website")); s.Total != 2 || s.Success != 2 {
				t.Errorf("into v1: %+v", s)
			}
			if s := ts.srv.Metrics().Summary(schemaGVK(group, "v1alpha1", "Website")); s.Total != 2 || s.Success != 2 {
				t.Errorf("into v1alpha1: %+v", s)
			}
		})
	}
}

// A /convert failure says whether the failing path declares that it may
// fail (mayFail): the message of an acknowledged one quotes the reason;
// TestFailureNamesKatalogFileRelative shows an unacknowledged one.
func TestConvertFailureAcknowledged(t *testing.T) {
	ts := startServer(t, withKatalog(t, "../conformance/testdata/mayfail/katalog.yaml"))
	gadget := map[string]any{
		"apiVersion": "conformance.orkestra.io/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g", "namespace": "default", "uid": "6c4f-g"},
		"spec":     map[string]any{"priority": "high"},
	}
	forEachVersion(t, func(t *testing.T, version string) {
		failure(t, ts, version, review(t, version, "fail-uid", "conformance.orkestra.io/v2", gadget),
			"converting Gadget default/g from v1 to v2: path v1→v2 failed (acknowledged: mayFail \"v1 takes free text: a tier that is not a label value",
			"conversion.paths[0].spec.priority")
	})
}

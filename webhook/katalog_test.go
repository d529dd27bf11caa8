package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/katalogapi"
)

// The JSON shapes are upstream's (pkg/kordinator/crd_health_handers.go,
// cr_handlers.go): these tests decode them strictly, so a renamed or
// added field fails them.

type fakeRuntime map[string]EntryRuntime

func (f fakeRuntime) Entry(name string) (EntryRuntime, bool) { e, ok := f[name]; return e, ok }

func decodeStrict(t *testing.T, body []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
}

func TestKatalogSummaryAndInfo(t *testing.T) {
	ts := startServer(t, func(s *Server) {
		s.Plan.Katalog.Description = "a fake katalog"
		s.Plan.Entries = append(s.Plan.Entries, &engine.Entry{Name: "off-v1", GVK: schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Off"}})
	})
	// Into v1: 2 successes + 1 failure; into v1alpha1: 1 success.
	ts.post(t, review(t, ReviewV1, "k1", group+"/v1", website("v1alpha1", "a", "nginx"), website("v1alpha1", "b", "nginx")))
	ts.post(t, review(t, ReviewV1, "k2", group+"/v1", website("v1alpha1", "c", "fail")))
	ts.post(t, review(t, ReviewV1, "k3", group+"/v1alpha1", website("v1", "d", "nginx")))

	code, body := ts.get(t, "/katalog")
	if code != 200 {
		t.Fatalf("/katalog HTTP %d: %s", code, body)
	}
	var sum katalogapi.KatalogSummary
	decodeStrict(t, body, &sum)
	if sum.Name != "fake" || sum.Description != "a fake katalog" || sum.Total != 4 || sum.TotalEnabled != 3 || len(sum.CRDs) != 3 ||
		!sum.OrkReady || !sum.Healthy || sum.Status != 200 || sum.StatusCounts != (katalogapi.StatusCounts{Healthy: 3}) {
		t.Fatalf("summary %+v", sum)
	}
	byName := map[string]katalogapi.KatalogEntry{}
	for _, e := range sum.CRDs {
		byName[e.Name] = e
	}
	v1 := byName["website-v1"]
	if v1.GVK != "demo.orkestra.io/v1, Kind=Website" || v1.Workers != 3 || v1.WorkersActive != 0 || v1.ResourceCount != 0 || v1.Started || !v1.Healthy || v1.State != StateHealthy {
		t.Errorf("website-v1 %+v", v1)
	}
	if v1.Endpoints != (katalogapi.EndpointInfo{Health: "/katalog/website-v1/health", Info: "/katalog/website-v1", HealthEnabled: true, InfoEnabled: true}) {
		t.Errorf("endpoints %+v", v1.Endpoints)
	}
	if c := v1.Conversion; !c.Enabled || c.Total != 3 || c.Success != 2 || c.Failures != 1 || c.AvgLatencyMs <= 0 || c.P95LatencyMs <= 0 || c.P95LatencyMs > 1000 {
		t.Errorf("website-v1 conversion %+v, want enabled, 3 total, 2 success, 1 failure, latencies", c)
	}
	if c := byName["website-v1alpha1"].Conversion; !c.Enabled || c.Total != 1 || c.Success != 1 || c.Failures != 0 {
		t.Errorf("website-v1alpha1 conversion %+v, want 1 success", c)
	}

	// One entry: the same object as its row.
	code, body = ts.get(t, "/katalog/website-v1")
	var one katalogapi.KatalogEntry
	decodeStrict(t, body, &one)
	if code != 200 || one.Name != "website-v1" || one.Conversion.Total != 3 || one.StartedAt != StateNotStarted {
		t.Errorf("HTTP %d %+v", code, one)
	}

	// Unknown and disabled entries: 404 naming the entries served.
	for _, name := range []string{"nope", "off-v1"} {
		code, body = ts.get(t, "/katalog/"+name)
		var e struct {
			Error string
			Known []string
		}
		if err := json.Unmarshal(body, &e); code != 404 || err != nil {
			t.Fatalf("%s: HTTP %d %s", name, code, body)
		}
		mustContain(t, e.Error, quote(name), "known entries: website-v1alpha1, website-v1, blog-v1")
		if len(e.Known) != 3 {
			t.Errorf("known %v", e.Known)
		}
	}
	if code, _ := ts.do(t, http.MethodPost, ts.http+"/katalog", "application/json", nil); code != 405 {
		t.Errorf("POST /katalog: HTTP %d, want 405", code)
	}
}

// Under run the runtime's values replace the static ones; a degraded entry
// makes /katalog answer 503 with the reason, a gated healthy one is
// "gated" in the summary.
func TestKatalogAPIRuntimeStatus(t *testing.T) {
	started := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
	ts := startServer(t, func(s *Server) {
		s.Runtime = fakeRuntime{
			"website-v1":       {Workers: 5, WorkersActive: 2, ResourceCount: 42, Started: true, Healthy: false, StartedAt: started, TotalReconciles: 8, FailedReconciles: 2},
			"website-v1alpha1": {Started: true, Healthy: true, StartedAt: started, TotalReconciles: 1, Gated: true, GatedReason: "not reconciled: the preReconcile gate … does not hold"},
		}
	})
	var e katalogapi.KatalogEntry
	_, body := ts.get(t, "/katalog/website-v1")
	decodeStrict(t, body, &e)
	if e.Workers != 5 || e.WorkersActive != 2 || e.ResourceCount != 42 || !e.Started || e.Healthy || e.State != StateDegraded ||
		e.TotalReconciles != 8 || e.ErrorRate != 25 || e.StartedAt != "2025-05-01T10:00:00Z" || e.Uptime == StateNotStarted {
		t.Errorf("runtime values not reported: %+v", e)
	}
	_, body = ts.get(t, "/katalog/blog-v1") // unknown to the runtime: static values
	decodeStrict(t, body, &e)
	if e.Workers != 2 || e.Started || !e.Healthy || e.State != StateHealthy {
		t.Errorf("static values: %+v", e)
	}
	code, body := ts.get(t, "/katalog")
	var sum katalogapi.KatalogSummary
	decodeStrict(t, body, &sum)
	if code != 503 || sum.Healthy || sum.Status != 503 || sum.DegradedReason != "1 degraded" ||
		sum.StatusCounts != (katalogapi.StatusCounts{Healthy: 2, Degraded: 1}) {
		t.Errorf("HTTP %d %+v", code, sum)
	}
	for _, row := range sum.CRDs {
		if row.Name == "website-v1alpha1" && (row.State != StateGated || !row.Gated) {
			t.Errorf("a healthy gated entry: %+v", row)
		}
	}
}

// The storage object appears when the runtime knows the CRD's storage
// state, with remaining null when unknown.
func TestKatalogAPIStorage(t *testing.T) {
	ts := startServer(t, func(s *Server) {
		s.Runtime = fakeRuntime{"website-v1": {Healthy: true, Storage: &katalogapi.StorageStatus{StoredVersions: []string{"v1alpha1", "v1"}, Migrating: true, Migrated: 12, LastError: "boom"}}}
	})
	_, body := ts.get(t, "/katalog/website-v1")
	want := `"storage": {
    "storedVersions": [
      "v1alpha1",
      "v1"
    ],
    "migrating": true,
    "migrated": 12,
    "remaining": null,
    "lastError": "boom"
  }`
	if !strings.Contains(string(body), want) {
		t.Errorf("/katalog/website-v1:\n%s\nwant it to hold\n%s", body, want)
	}
	if _, body = ts.get(t, "/katalog/blog-v1"); strings.Contains(string(body), `"storage"`) {
		t.Errorf("an entry without storage state shows one:\n%s", body)
	}
}

// /katalog/{crd}/health: upstream's states and codes (StateAndStatus).
func TestKatalogHealth(t *testing.T) {
	started := time.Now().Add(-time.Minute)
	last := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		rt    *EntryRuntime // nil: serve
		state string
		code  int
	}{
		{"serve", nil, StateHealthy, 200},
		{"not started", &EntryRuntime{}, StateNotStarted, 503},
		{"pending", &EntryRuntime{Started: true, Pending: true, Healthy: true, StartedAt: started}, StatePending, 200},
		{"degraded", &EntryRuntime{Started: true, Healthy: false, StartedAt: started, TotalReconciles: 4, FailedReconciles: 3, ConsecutiveFailures: 3, LastError: "boom", LastReconcile: last}, StateDegraded, 503},
		{"healthy and gated", &EntryRuntime{Started: true, Healthy: true, StartedAt: started, TotalReconciles: 1, LastReconcile: last, Gated: true, GatedReason: "gate"}, StateHealthy, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := startServer(t, func(s *Server) {
				if c.rt != nil {
					s.Runtime = fakeRuntime{"website-v1": *c.rt}
				}
			})
			code, body := ts.get(t, "/katalog/website-v1/health")
			var h katalogapi.EntryHealth
			decodeStrict(t, body, &h)
			if code != c.code || h.Status != c.code || h.State != c.state || h.Name != "website-v1" {
				t.Fatalf("HTTP %d %+v, want %d %s", code, h, c.code, c.state)
			}
			switch c.name {
			case "degraded":
				if h.ErrorRate != 75 || h.ConsecutiveFails != 3 || h.TotalReconciles != 4 || h.LastError != "boom" || h.LastReconcile != "2025-05-01T10:00:00Z" {
					t.Errorf("%+v", h)
				}
			case "healthy and gated":
				if !h.Gated || h.GatedReason != "gate" || !h.Healthy {
					t.Errorf("%+v", h)
				}
			case "pending":
				if h.LastReconcile != "no reconciles yet" || h.Uptime != "1m0s" {
					t.Errorf("%+v", h)
				}
			}
		})
	}
}

// Dependencies are reported by name, unsatisfied ones flagged.
func TestKatalogHealthDependencies(t *testing.T) {
	ts := startServer(t, func(s *Server) {
		s.Runtime = fakeRuntime{"website-v1": {Started: true, Healthy: true, Dependencies: []DependencyRuntime{
			{Entry: "blog-v1", Condition: "healthy", State: "degraded"},
			{Entry: "website-v1alpha1", Condition: "started", State: "healthy", Satisfied: true},
		}}}
	})
	_, body := ts.get(t, "/katalog/website-v1/health")
	var h katalogapi.EntryHealth
	decodeStrict(t, body, &h)
	want := map[string]katalogapi.DependencyHealth{
		"blog-v1":          {Name: "blog-v1", State: "degraded", Condition: "healthy"},
		"website-v1alpha1": {Name: "website-v1alpha1", State: "healthy", Condition: "started", Satisfied: true},
	}
	if !h.HasUnhealthyDependencies || len(h.Dependencies) != 2 || h.Dependencies["blog-v1"] != want["blog-v1"] || h.Dependencies["website-v1alpha1"] != want["website-v1alpha1"] {
		t.Errorf("%+v", h)
	}
}

// endpoints: what an entry turns off answers 404 as an unknown path
// (upstream never registers it); the entry stays in the summary.
func TestKatalogEndpointSwitches(t *testing.T) {
	ts := startServer(t, func(s *Server) {
		s.Resources = fakeResources{}
		s.Plan.Entries[1].Source = &katalog.CRDEntry{Endpoints: katalog.Endpoints{Info: true}} // website-v1: health: false
		s.Plan.Entries[2].Source = &katalog.CRDEntry{Endpoints: katalog.Endpoints{}}           // blog-v1: enabled: false
	})
	cases := []struct {
		path string
		code int
	}{
		{"/katalog/website-v1/health", 404},
		{"/katalog/website-v1", 200},
		{"/katalog/website-v1/cr", 200},
		{"/katalog/blog-v1", 404},
		{"/katalog/blog-v1/health", 404},
		{"/katalog/blog-v1/cr", 404},
		{"/katalog/blog-v1/cr/default/a", 404},
		{"/katalog/website-v1alpha1/health", 200},
	}
	for _, c := range cases {
		code, body := ts.get(t, c.path)
		if code != c.code {
			t.Errorf("%s: HTTP %d, want %d: %s", c.path, code, c.code, body)
		}
		if code == 404 && string(body) != "404 page not found\n" {
			t.Errorf("%s: a route switched off answers %q, want net/http's 404 page", c.path, body)
		}
	}
	_, body := ts.get(t, "/katalog")
	var sum katalogapi.KatalogSummary
	decodeStrict(t, body, &sum)
	got := map[string]katalogapi.EndpointInfo{}
	for _, r := range sum.CRDs {
		got[r.Name] = r.Endpoints
	}
	if len(sum.CRDs) != 3 || got["website-v1"].HealthEnabled || !got["website-v1"].InfoEnabled || got["blog-v1"].HealthEnabled || got["blog-v1"].InfoEnabled {
		t.Errorf("summary endpoints %+v", got)
	}
}

// fakeResources serves two Websites in default, one child and two events.
type fakeResources struct{}

func fakeCR(name string, ready metav1.ConditionStatus) unstructured.Unstructured {
	u := unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": "Website",
		"metadata": map[string]any{"name": name, "namespace": "default", "generation": int64(3),
			"creationTimestamp": time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339),
			"annotations":       map[string]any{"team": "web", "orkestra.orkspace.io/checksum": "x", corev1.LastAppliedConfigAnnotation: "{}"}},
		"spec":   map[string]any{"image": "nginx:" + name, "replicas": int64(2)},
		"status": map[string]any{"phase": "Running", "conditions": []any{map[string]any{"type": "Ready", "status": string(ready), "reason": "ReconcileSucceeded", "message": "ok"}}},
	}}
	return u
}

func (fakeResources) CustomResources(context.Context, string) ([]unstructured.Unstructured, error) {
	return []unstructured.Unstructured{fakeCR("shop", metav1.ConditionFalse), fakeCR("hello", metav1.ConditionTrue)}, nil
}

func (f fakeResources) CustomResource(_ context.Context, _, namespace, name string) (*unstructured.Unstructured, error) {
	if namespace != "default" || name != "hello" {
		return nil, nil
	}
	u := fakeCR("hello", metav1.ConditionTrue)
	return &u, nil
}

func (fakeResources) Children(context.Context, string, *unstructured.Unstructured) ([]unstructured.Unstructured, error) {
	dep := unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "hello", "namespace": "default"},
		"spec":     map[string]any{"replicas": int64(2)}, "status": map[string]any{"availableReplicas": int64(2)}}}
	svc := func(n string) unstructured.Unstructured {
		return unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": n, "namespace": "default"}}}
	}
	return []unstructured.Unstructured{svc("hello-b"), dep, svc("hello-a")}, nil
}

func (fakeResources) Events(_ context.Context, _, namespace, name string) ([]corev1.Event, error) {
	if name == "broken" {
		return nil, errors.New("events are not readable")
	}
	at := func(m int) metav1.Time { return metav1.NewTime(time.Date(2025, 5, 1, 10, m, 0, 0, time.UTC)) }
	return []corev1.Event{
		{Type: "Normal", Reason: "Created", Message: "created Deployment hello", InvolvedObject: corev1.ObjectReference{Kind: "Website", Name: name}, FirstTimestamp: at(1), LastTimestamp: at(1), Count: 1, Source: corev1.EventSource{Component: "orkestra"}},
		{Type: "Warning", Reason: "Gated", Message: "not reconciled", InvolvedObject: corev1.ObjectReference{Kind: "Website", Name: name}, EventTime: metav1.NewMicroTime(at(5).Time), ReportingController: "orkestra"},
	}, nil
}

func TestKatalogCustomResources(t *testing.T) {
	ts := startServer(t, func(s *Server) {
		s.Resources = fakeResources{}
		s.Plan.Entries[1].Namespaced = true
		s.Plan.Entries[1].GVR = schema.GroupVersionResource{Group: group, Version: "v1", Resource: "websites"}
	})
	code, body := ts.get(t, "/katalog/website-v1/cr?field=spec.image")
	var list katalogapi.CRList
	decodeStrict(t, body, &list)
	if code != 200 || list.CRD != "website-v1" || list.GVK != "demo.orkestra.io/v1, Kind=Website" || list.Total != 2 || len(list.Items) != 2 {
		t.Fatalf("HTTP %d %+v", code, list)
	}
	want := katalogapi.CRSummary{Name: "hello", Namespace: "default", Phase: "Running", Ready: true, ReadyReason: "ReconcileSucceeded", Age: "120m", Generation: 3, Value: "nginx:hello"}
	if list.Items[0] != want || list.Items[1].Name != "shop" || list.Items[1].Ready {
		t.Errorf("items %+v, want the first %+v (sorted by namespace/name)", list.Items, want)
	}

	code, body = ts.get(t, "/katalog/website-v1/cr/default/hello")
	var d katalogapi.CRDetail
	decodeStrict(t, body, &d)
	if code != 200 || d.Name != "hello" || d.Generation != 3 || !d.Ready || d.ReadyMessage != "ok" || d.EventsEndpoint != "/katalog/website-v1/cr/default/hello/events" ||
		len(d.Annotations) != 1 || d.Annotations["team"] != "web" || d.Status["phase"] != "Running" {
		t.Errorf("HTTP %d %+v", code, d)
	}
	// One child of a kind is an object, several a list (upstream's shape).
	if dep, ok := d.Children["Deployment"].(map[string]any); !ok || dep["ready"] != true || dep["name"] != "hello" {
		t.Errorf("children %v", d.Children)
	}
	if svcs, ok := d.Children["Service"].([]any); !ok || len(svcs) != 2 || svcs[0].(map[string]any)["name"] != "hello-a" {
		t.Errorf("children %v", d.Children)
	}

	code, body = ts.get(t, "/katalog/website-v1/cr/default/hello/events")
	var evs katalogapi.CREvents
	decodeStrict(t, body, &evs)
	if code != 200 || evs.Total != 2 || evs.Events[0].Reason != "Gated" || evs.Events[0].LastSeen != "2025-05-01T10:05:00Z" || evs.Events[0].Count != 1 ||
		evs.Events[0].Source != "orkestra" || evs.Events[1].Object != "Website/hello" {
		t.Errorf("HTTP %d %+v", code, evs)
	}

	for path, says := range map[string]string{
		"/katalog/website-v1/cr/default/gone":          `default/gone\" not found`,
		"/katalog/website-v1/cr/hello":                 "websites is namespaced: ask for /katalog/website-v1/cr/{namespace}/{name}",
		"/katalog/website-v1/cr/default/broken/events": "events are not readable",
	} {
		code, body := ts.get(t, path)
		if code == 200 || !strings.Contains(string(body), says) {
			t.Errorf("%s: HTTP %d %s, want it to say %s", path, code, body, says)
		}
	}

	serve := startServer(t)
	if code, body := serve.get(t, "/katalog/website-v1/cr"); code != 503 || !strings.Contains(string(body), "orkestra serve reads no cluster") {
		t.Errorf("serve: HTTP %d %s", code, body)
	}
}

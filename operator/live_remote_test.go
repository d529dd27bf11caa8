package operator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/orkestra-cel/katalogapi"
	"github.com/orkspace/orkestra-cel/operator/external"
)

// loaderRuntime is a second Orkestra runtime's /katalog API as a remote
// cross read sees it (upstream: examples/advanced/12-autoscale/
// 04-sibling-in-cluster): entry loader with one custom resource,
// default/my-loader. Its health answer echoes the Authorization header the
// read sent (in lastError), and /feed/{name} is a plain JSON endpoint that
// fails for "broken".
func loaderRuntime(t *testing.T, hits *atomic.Int64) *httptest.Server {
	answer := func(w http.ResponseWriter, code int, v any) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(v)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /katalog/loader/cr/default/my-loader", func(w http.ResponseWriter, r *http.Request) {
		answer(w, 200, katalogapi.CRDetail{Name: "my-loader", Namespace: "default", Ready: true, Status: map[string]any{"phase": "Loading"},
			Children: map[string]any{"Deployment": katalogapi.ChildSummary{Name: "my-loader", Kind: "Deployment", Ready: true}}})
	})
	mux.HandleFunc("GET /katalog/loader/cr/{ns}/{name}", func(w http.ResponseWriter, r *http.Request) {
		answer(w, 404, map[string]string{"error": "CR not found"})
	})
	mux.HandleFunc("GET /katalog/loader/health", func(w http.ResponseWriter, r *http.Request) {
		answer(w, 200, katalogapi.EntryHealth{Name: "loader", State: "healthy", Status: 200, Healthy: true, LastError: r.Header.Get("Authorization")})
	})
	mux.HandleFunc("GET /katalog/loader", func(w http.ResponseWriter, r *http.Request) {
		answer(w, 200, katalogapi.KatalogEntry{Name: "loader", Metrics: katalogapi.EntryMetrics{QueueDepth: 42}})
	})
	mux.HandleFunc("GET /feed/{name}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("name") == "broken" {
			answer(w, 500, map[string]string{"error": "down"})
			return
		}
		answer(w, 200, map[string]any{"metrics": map[string]any{"queueDepth": 7}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// Remote cross reads through a real reconcile: each route of another
// runtime's /katalog API and an endpoint, read through the operator's
// external client, typed in CEL and read by legacy templates as upstream's
// readCross gives them; a 404 reads as not found; a failure reads as not
// found with a Warning event and a note in Ready; answers are cached for
// cacheFor.
func TestRemoteCrossReadsThroughReconcile(t *testing.T) {
	var hits atomic.Int64
	srv := loaderRuntime(t, &hits)
	client := external.New(external.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Backoff: 10 * time.Millisecond})
	h := startOperator(t, widgetPlan(t, strings.ReplaceAll(`
cross:
  - crd: loader
    selector: {name: "${self.spec.message}", namespace: default}
    source: {host: "SRV", protocol: cr, cacheFor: 1h}
    as: loaderCR
  - crd: loader
    source:
      host: "SRV"
      type: health
      cacheFor: 1h
      auth: {secretRef: {name: loader-token}}
    as: loaderHealth
  - crd: loader
    source: {host: "SRV", protocol: metrics, cacheFor: 1h}
    as: loaderInfo
  - as: feed
    source:
      endpoint: "SRV/feed/${self.metadata.name}"
      retries: 0
      cacheFor: 1h
      schema:
        type: object
        properties:
          metrics:
            type: object
            properties:
              queueDepth: {type: integer}
onReconcile:
  configMaps:
    - name: "${self.metadata.name}-remote"
      data:
        phase: "{{ .cross.loaderCR.status.phase }}"
        found: "{{ .cross.loaderCR.found }}"
        ready: "${has(cross.loaderCR) ? string(cross.loaderCR.ready) : 'absent'}"
        healthy: "${string(cross.loaderHealth.healthy)}"
        auth: "{{ .cross.loaderHealth.lastError }}"
        depth: "${string(cross.loaderInfo.metrics.queueDepth)}"
        feed: "${has(cross.feed) ? string(cross.feed.metrics.queueDepth + 1) : 'absent'}"
`, "SRV", srv.URL)), func(o *harnessOptions) { o.external = client })
	ns := h.ns
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "loader-token", Namespace: ns}, Data: map[string][]byte{"token": []byte("t0k")}})

	data := func(name string) map[string]string {
		var cm corev1.ConfigMap
		mustGet(t, ns, name+"-remote", &cm)
		return cm.Data
	}
	create(t, widget(ns, "ok", map[string]any{"message": "my-loader"}))
	converged(t, ns, "ok")
	want := map[string]string{"phase": "Loading", "found": "true", "ready": "true", "healthy": "true", "auth": "Bearer t0k", "depth": "42", "feed": "8"}
	if got := data("ok"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("read through the remote runtime: %v, want %v", got, want)
	}

	t.Run("404 reads as not found", func(t *testing.T) {
		create(t, widget(ns, "gone", map[string]any{"message": "nope"}))
		converged(t, ns, "gone")
		got := data("gone")
		if got["found"] != "false" || got["ready"] != "absent" || got["phase"] != "" {
			t.Errorf("a 404 answer: found %q ready %q phase %q, want \"false\", absent and empty", got["found"], got["ready"], got["phase"])
		}
	})

	t.Run("a failed read reads as not found and is reported", func(t *testing.T) {
		create(t, widget(ns, "broken", map[string]any{"message": "my-loader"}))
		msg := readyIs(t, ns, "broken", "True", ReasonSucceeded)
		cause := "cross read feed (operatorBox.cross[3]) failed: HTTP 500; it reads as not found"
		if !strings.Contains(msg, cause) {
			t.Errorf("Ready message %q, want it to name the read and the cause (%s)", msg, cause)
		}
		eventWith(t, ns, ReasonCrossReadFailed, cause)
		if got := data("broken")["feed"]; got != "absent" {
			t.Errorf("feed = %q after a failed read, want absent", got)
		}
	})

	t.Run("answers are reused within cacheFor", func(t *testing.T) {
		h.idle("widget")
		before := hits.Load()
		for range 3 {
			h.reconcileNow("widget", "ok")
		}
		if got := hits.Load() - before; got != 0 {
			t.Errorf("3 reconciles within cacheFor made %d requests, want 0", got)
		}
	})
}

// continueOnError: false makes a failed remote read fail the reconcile;
// reads go through the operator's one egress path, so a loopback address
// is refused unless --external-allow lists it.
func TestRemoteCrossReadFailsReconcile(t *testing.T) {
	var hits atomic.Int64
	srv := loaderRuntime(t, &hits)
	h := startOperator(t, widgetPlan(t, `
cross:
  - crd: loader
    source: {host: "`+srv.URL+`", protocol: health, continueOnError: false, retries: 0}
    as: loaderHealth
onReconcile:
  configMaps:
    - name: "${self.metadata.name}-remote"
      data:
        state: "${cross.loaderHealth.state}"
`))
	create(t, widget(h.ns, "w", map[string]any{}))
	msg := readyIs(t, h.ns, "w", "False", ReasonCrossReadFailed)
	if want := "cross read loaderHealth (operatorBox.cross[0]) failed: GET " + srv.URL + "/katalog/loader/health: address 127.0.0.1 is refused"; !strings.Contains(msg, want) {
		t.Errorf("Ready message %q, want %q", msg, want)
	}
	eventWith(t, h.ns, ReasonCrossReadFailed, "is refused")
	var cm corev1.ConfigMap
	if err := get(h.ns, "w-remote", &cm); err == nil {
		t.Errorf("a failed read with continueOnError: false still applied the children")
	}
	if hits.Load() != 0 {
		t.Errorf("the refused address was called %d times", hits.Load())
	}
}

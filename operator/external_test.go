package operator

import (
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

	"github.com/orkspace/orkestra-cel/operator/external"
)

// External calls through a real reconcile (upstream: iAlexeze/orkestra
// pkg/reconciler/run_external.go, examples/use-cases/external/): a widget
// calls the URL its spec.message holds; a local server answers each path
// its own way. A failure fails the reconcile with a Ready condition and an
// event naming the call; with continueOnError the rest reconciles and the
// result says why.
func TestExternalCallsThroughReconcile(t *testing.T) {
	var hits atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/config", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprintf(w, `{"level": 7, "auth": %q}`, r.Header.Get("Authorization"))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, strings.Repeat("x", 2048)) })
	mux.HandleFunc("/badjson", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"level":`) })
	mux.HandleFunc("/500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", 500) })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	client := external.New(external.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Backoff: 10 * time.Millisecond})
	h := startOperator(t, widgetPlan(t, `
onReconcile:
  external:
    - name: cfg
      url: "${self.spec.message}"
      timeout: 500ms
      retries: 1
      maxBytes: 1024
      auth:
        secretRef: {name: api-token}
      schema:
        type: object
        properties:
          level: {type: integer}
          auth: {type: string}
    - name: optional
      url: "${self.spec.message}"
      timeout: 500ms
      retries: 0
      maxBytes: 1024
      continueOnError: true
  configMaps:
    - name: "${self.metadata.name}-config"
      data:
        level: "${string(external.cfg.json.level)}"
        auth: "${external.cfg.json.auth}"
status:
  fields:
    - path: phase
      value: "{{ .external.optional.status }}"
`), func(o *harnessOptions) { o.external = client })
	ns := h.ns
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "api-token", Namespace: ns}, Data: map[string][]byte{"token": []byte("s3cret\n")}})

	create(t, widget(ns, "ok", map[string]any{"message": srv.URL + "/config"}))
	converged(t, ns, "ok")
	var cm corev1.ConfigMap
	mustGet(t, ns, "ok-config", &cm)
	if cm.Data["level"] != "7" || cm.Data["auth"] != "Bearer s3cret" {
		t.Fatalf("configMap data %v, want level 7 and the Secret's bearer token", cm.Data)
	}
	if st := getWidget(t, ns, "ok").Object["status"].(map[string]any); st["phase"] != "200" {
		t.Errorf("status.phase = %v, want 200 (.external.optional.status)", st["phase"])
	}
	// Within cacheFor the result is reused: reconciles make no request.
	h.idle("widget")
	before := hits.Load()
	for i := 0; i < 3; i++ {
		h.reconcileNow("widget", "ok")
	}
	if got := hits.Load() - before; got != 0 {
		t.Errorf("3 reconciles within cacheFor made %d requests, want 0", got)
	}

	for _, tc := range []struct{ name, path, msg string }{
		{"timeout", "/slow", "no response within the timeout of 500ms"},
		{"oversize", "/big", "the response body is larger than 1024 bytes (maxBytes)"},
		{"badjson", "/badjson", "the response is not JSON"},
		{"down", "/500", "HTTP 500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			create(t, widget(ns, tc.name, map[string]any{"message": srv.URL + tc.path}))
			msg := readyIs(t, ns, tc.name, "False", ReasonExternalCallFailed)
			want := "external call cfg (operatorBox.onReconcile.external[0]) failed: "
			if !strings.Contains(msg, want) || !strings.Contains(msg, tc.msg) {
				t.Errorf("Ready message %q, want it to name the call (%s) and the cause (%s)", msg, want, tc.msg)
			}
			eventWith(t, ns, ReasonExternalCallFailed, tc.msg)
			var cm corev1.ConfigMap
			if err := get(ns, tc.name+"-config", &cm); err == nil {
				t.Errorf("a failed call without continueOnError still applied the children")
			}
		})
	}
}

// continueOnError: the call's failure does not stop the reconcile; its
// result says why, and the Ready condition and an event name it.
func TestExternalContinueOnError(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
onReconcile:
  external:
    - name: flags
      url: "http://127.0.0.1:9/flags"
      continueOnError: true
      retries: 0
      timeout: 1s
  configMaps:
    - name: "${self.metadata.name}-flags"
      data:
        v2: "{{ if eq .external.flags.body \"true\" }}on{{ else }}off{{ end }}"
        called: "{{ .external.flags.called }}"
        why: "${external.flags.error}"
`))
	create(t, widget(h.ns, "w", map[string]any{}))
	msg := readyIs(t, h.ns, "w", "True", ReasonSucceeded)
	if !strings.Contains(msg, "external call flags (operatorBox.onReconcile.external[0]) failed: GET http://127.0.0.1:9/flags: address 127.0.0.1 is refused") {
		t.Errorf("Ready message %q does not name the failed call", msg)
	}
	eventWith(t, h.ns, ReasonExternalCallFailed, "continueOnError: the reconcile went on")
	var cm corev1.ConfigMap
	mustGet(t, h.ns, "w-flags", &cm)
	if cm.Data["v2"] != "off" || cm.Data["called"] != "true" || !strings.Contains(cm.Data["why"], "is refused") {
		t.Errorf("data %v", cm.Data)
	}
}

// Upstream merged a JSON object response's keys into the call's result,
// below its own keys (orkspace/orkestra pkg/external/http_client.go; its
// docs/02-result-maps.md: a body {"pendingJobs": 100} reads as
// .external.api.pendingJobs). The legacy root reads them so; a body that is
// not a JSON object merges nothing, and status/body/error/called stay the
// call's own even when the body has such keys.
func TestExternalJSONKeysReadAsUpstream(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/busy", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"queue": {"pendingJobs": 150}, "status": "from-body", "region": "eu"}`)
	})
	mux.HandleFunc("/idle", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"queue": {"pendingJobs": 3}, "region": "us"}`)
	})
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "region") })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	client := external.New(external.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Backoff: 10 * time.Millisecond})
	h := startOperator(t, widgetPlan(t, `
onReconcile:
  external:
    - name: queue
      url: "${self.spec.message}"
      retries: 0
  configMaps:
    - name: "${self.metadata.name}-seen"
      data:
        region: "{{ .external.queue.region }}"
        status: "{{ .external.queue.status }}"
    - name: "${self.metadata.name}-busy"
      data:
        pending: "{{ .external.queue.queue.pendingJobs }}"
      when:
        - field: external.queue.queue.pendingJobs
          greaterThan: "100"
`), func(o *harnessOptions) { o.external = client })
	for _, c := range []struct {
		name, path, region string
		busy               bool
	}{
		{"busy", "/busy", "eu", true},
		{"idle", "/idle", "us", false},
		{"text", "/text", "", false},
	} {
		create(t, widget(h.ns, c.name, map[string]any{"message": srv.URL + c.path}))
		converged(t, h.ns, c.name)
		var seen corev1.ConfigMap
		mustGet(t, h.ns, c.name+"-seen", &seen)
		if seen.Data["region"] != c.region || seen.Data["status"] != "200" {
			t.Errorf("%s: data %v, want region %q (the body's key) and status 200 (the call's own, not the body's)", c.name, seen.Data, c.region)
		}
		var busy corev1.ConfigMap
		err := get(h.ns, c.name+"-busy", &busy)
		switch {
		case c.busy && err != nil:
			t.Errorf("%s: the ConfigMap gated on external.queue.queue.pendingJobs > 100 is missing: %v", c.name, err)
		case c.busy && busy.Data["pending"] != "150":
			t.Errorf("%s: pending %q, want 150", c.name, busy.Data["pending"])
		case !c.busy && err == nil:
			t.Errorf("%s: the gated ConfigMap exists, want none (pendingJobs is 3 or absent)", c.name)
		}
	}
}

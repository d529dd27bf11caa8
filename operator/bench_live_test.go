package operator

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/operator/external"
)

// liveBenchBox is benchBox's children and status plus one cross read (the
// widget spec.message names) and one external call whose result is
// cached, both read by the status.
const liveBenchBox = `
cross:
  - crd: widget
    selector: {name: "${self.spec.message}"}
    as: peer
status:
  fields:
    - path: phase
      value: Running
    - path: replicas
      value: "${self.spec.replicas}"
    - path: endpoint
      value: "${cross.?peer.?spec.?image.orValue('') + ' ' + external.cfg.body}"
onReconcile:
  external:
    - name: cfg
      url: "%s/config"
      cacheFor: 1h
  deployments:
    - name: "${self.metadata.name}"
      image: "${self.spec.image}"
      replicas: "${self.spec.replicas}"
      port: 8080
  services:
    - name: "${self.metadata.name}"
      port: 80
  configMaps:
    - name: "${self.metadata.name}-config"
      data:
        message: "${self.spec.message}"
`

// BenchmarkLiveInputs measures a no-op reconcile of a custom resource that
// reads one cross resource and one cached external result, against the
// same reconcile without them (benchBox), on a real API server: the time of
// each, their ratio, and the API requests and external requests each
// reconcile makes (the cross read comes from the informer, the result from
// the cache: none added).
func BenchmarkLiveInputs(b *testing.B) {
	const n = 50
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, `{"level": 1}`)
	}))
	defer srv.Close()
	calls := external.New(external.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})

	livePlan := widgetPlan(b, fmt.Sprintf(liveBenchBox, srv.URL))
	for _, e := range livePlan.Entries {
		e.Workers = benchWorkers
	}
	// Both operators run at once and their reconciles alternate, so that
	// the load of a shared machine weighs on both alike.
	ctx := context.Background()
	start := func(plan *engine.Plan) *harness {
		h := startOperator(b, plan, func(o *harnessOptions) { o.external = calls })
		create(b, widget(h.ns, "hello", map[string]any{"image": "peer:1", "replicas": int64(1), "message": "none"}))
		if err := parallel(n, benchWorkers, func(i int) error { return k8s.Create(ctx, benchWidget(h.ns, i)) }); err != nil {
			b.Fatal(err)
		}
		eventuallyWithin(b, 5*time.Minute, "convergence", func() error {
			ready, err := readyCount(ctx, h.ns)
			if err != nil || ready < n+1 {
				time.Sleep(100 * time.Millisecond)
				return fmt.Errorf("%d of %d ready (%v)", ready, n+1, err)
			}
			return nil
		})
		h.idle("widget")
		for i := 0; i < n; i++ { // warm: the external results are cached
			h.reconcileNow("widget", benchWidget(h.ns, i).GetName())
		}
		return h
	}
	type result struct {
		perReconcile           time.Duration
		apiCalls, externalHits float64
	}
	b.StopTimer()
	hp, hl := start(benchPlan(b)), start(livePlan)
	var plain, live result
	for i := 0; i < b.N; i++ {
		for _, side := range []struct {
			h *harness
			r *result
		}{{hp, &plain}, {hl, &live}} {
			api, ext := apiCalls.total(), hits.Load()
			t0 := time.Now()
			side.h.reconcileNow("widget", benchWidget(side.h.ns, i%n).GetName())
			side.r.perReconcile += time.Since(t0)
			side.r.apiCalls += float64(apiCalls.total() - api)
			side.r.externalHits += float64(hits.Load() - ext)
		}
	}
	for _, r := range []*result{&plain, &live} {
		r.perReconcile /= time.Duration(b.N)
		r.apiCalls /= float64(b.N)
		r.externalHits /= float64(b.N)
	}
	hp.stop()
	hl.stop()
	b.ReportMetric(float64(plain.perReconcile.Microseconds()), "µs/plain-reconcile")
	b.ReportMetric(float64(live.perReconcile.Microseconds()), "µs/live-reconcile")
	b.ReportMetric(float64(live.perReconcile)/float64(plain.perReconcile), "x-plain")
	b.ReportMetric(plain.apiCalls, "apicalls/plain-reconcile")
	b.ReportMetric(live.apiCalls, "apicalls/live-reconcile")
	b.ReportMetric(live.externalHits, "external-requests/live-reconcile")
	if live.apiCalls > plain.apiCalls {
		b.Errorf("a reconcile reading a cross resource and a cached result made %.2f API requests, the plain one %.2f: the reads must add none", live.apiCalls, plain.apiCalls)
	}
	if live.externalHits > 0 {
		b.Errorf("a reconcile within cacheFor reached the external server (%.2f requests per reconcile)", live.externalHits)
	}
}

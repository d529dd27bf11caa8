package operator

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/orkestra-cel/operator/external"
)

// queue.behaviour.onLimit (upstream v0.7.17, orkspace/orkestra
// pkg/runtime/queue/helper.go): while the work queue holds maxDepth custom
// resources, a new one's event is dropped, not queued; it is reconciled on
// its next change. Both workers are held in an external call to a server
// that answers only when released, so the queue fills deterministically.
func TestQueueBehaviourDropsAtTheLimit(t *testing.T) {
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/hold", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		fmt.Fprint(w, `{}`)
	})
	mux.HandleFunc("/fast", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{}`) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	client := external.New(external.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	h := startOperator(t, widgetPlanWith(t, "      queue:\n        maxDepth: 2\n        behaviour:\n          onLimit:\n            drop: true\n", `
onReconcile:
  external:
    - name: wait
      url: "${self.spec.message}"
      timeout: 30s
      retries: 0
status:
  fields:
    - path: phase
      value: Seen
`), func(o *harnessOptions) { o.external = client })
	e := h.controller("widget")
	// Both workers (workers: 2) wait on the server.
	for _, n := range []string{"hold1", "hold2"} {
		create(t, widget(h.ns, n, map[string]any{"message": srv.URL + "/hold"}))
	}
	eventually(t, "both workers busy", func() error {
		if a := e.active.Load(); a != 2 {
			return fmt.Errorf("%d active", a)
		}
		return nil
	})
	// Two fill the queue to maxDepth; the third is dropped.
	for _, n := range []string{"q1", "q2"} {
		create(t, widget(h.ns, n, map[string]any{"message": srv.URL + "/fast"}))
	}
	eventually(t, "the queue at maxDepth", func() error {
		if d := e.queueDepth(); d != 2 {
			return fmt.Errorf("depth %d", d)
		}
		return nil
	})
	create(t, widget(h.ns, "dropped", map[string]any{"message": srv.URL + "/fast"}))
	time.Sleep(500 * time.Millisecond) // let its event reach the predicate
	close(release)
	released = true
	for _, n := range []string{"hold1", "hold2", "q1", "q2"} {
		phaseIs(t, h.ns, n, "Seen")
	}
	h.idle("widget")
	never(t, 2*time.Second, "the dropped widget is not reconciled", func() error {
		if _, ok, _ := unstructured.NestedString(getWidget(t, h.ns, "dropped").Object, "status", "phase"); ok {
			return fmt.Errorf("it was reconciled")
		}
		return nil
	})
	// Its next change, with the queue empty, is queued.
	updateWidget(t, h.ns, "dropped", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, srv.URL+"/fast?again", "spec", "message")
	})
	phaseIs(t, h.ns, "dropped", "Seen")
}

package operator

import (
	"fmt"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// eventsOf lists the events of reason in ns, read with a real client from
// the API server.
func eventsOf(t *testing.T, ns, reason string) []eventsv1.Event {
	t.Helper()
	var evs eventsv1.EventList
	if err := k8s.List(t.Context(), &evs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []eventsv1.Event
	for _, e := range evs.Items {
		if e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// operatorBox.emit.events (upstream v0.7.18): declared Events are recorded
// on the custom resource after a reconcile, by outcome (on:), under their
// condition (when:), with a CEL or legacy-template message.
func TestEmitEvents(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
onReconcile:
  configMaps:
    - name: "${self.metadata.name}-share"
      data: {share: "${string(100 / int(self.spec.divisor))}"}
emit:
  events:
    applied:
      reason: SharesApplied
      message: "${'share of ' + self.metadata.name + ' is ' + string(100 / int(self.spec.divisor))}"
    loud:
      reason: LoudWidget
      message: "{{ .metadata.name }} speaks on {{ .spec.channel }}"
      when:
        - field: spec.channel
          equals: loud
    broken:
      reason: ShareFailed
      type: Warning
      message: "${self.metadata.name + ' could not be shared'}"
      on: failure
    every:
      reason: Reconciled
      message: reconciled
      on: [always]
`))
	create(t, widget(h.ns, "quiet", map[string]any{"divisor": int64(4), "channel": "calm"}))
	create(t, widget(h.ns, "noisy", map[string]any{"divisor": int64(5), "channel": "loud"}))
	create(t, widget(h.ns, "zero", map[string]any{"divisor": int64(0), "channel": "loud"}))

	eventWith(t, h.ns, "SharesApplied", "share of quiet is 25")
	eventWith(t, h.ns, "SharesApplied", "share of noisy is 20")
	eventWith(t, h.ns, "LoudWidget", "noisy speaks on loud")
	eventWith(t, h.ns, "ShareFailed", "zero could not be shared")
	eventually(t, "Reconciled events for the three widgets", func() error {
		seen := map[string]bool{}
		for _, e := range eventsOf(t, h.ns, "Reconciled") {
			seen[e.Regarding.Name] = true
		}
		if len(seen) != 3 {
			return fmt.Errorf("Reconciled on %v", seen)
		}
		return nil
	})
	h.idle("widget")
	for _, e := range eventsOf(t, h.ns, "ShareFailed") {
		if e.Type != "Warning" || e.Regarding.Name != "zero" || e.Regarding.Kind != "Widget" || e.ReportingController != EventReporter {
			t.Errorf("ShareFailed event %s/%s type %s by %s", e.Regarding.Kind, e.Regarding.Name, e.Type, e.ReportingController)
		}
	}
	for _, e := range eventsOf(t, h.ns, "SharesApplied") {
		if e.Type != "Normal" || e.Regarding.Name == "zero" {
			t.Errorf("SharesApplied on %s (%s): a failed reconcile records only on: failure events", e.Regarding.Name, e.Type)
		}
	}
	for _, e := range eventsOf(t, h.ns, "LoudWidget") {
		if e.Regarding.Name != "noisy" {
			t.Errorf("LoudWidget on %s: its when: does not hold there (quiet is calm; zero failed)", e.Regarding.Name)
		}
	}
	// Repeated reconciles of an unchanged resource aggregate into one
	// event (a series), as the runtime's own events do, instead of one
	// object per reconcile.
	quiet := func() (objects int, count int32) {
		for _, e := range eventsOf(t, h.ns, "SharesApplied") {
			if e.Regarding.Name == "quiet" {
				objects++
				if e.Series != nil && e.Series.Count > count {
					count = e.Series.Count
				}
			}
		}
		return objects, count
	}
	before, _ := quiet()
	for range 3 {
		h.reconcileNow("widget", "quiet")
	}
	// (client-go's broadcaster patches a series' count when it starts, then
	// on its periodic refresh.)
	eventually(t, "a SharesApplied series for quiet", func() error {
		if objects, count := quiet(); objects != before || count < 2 {
			return fmt.Errorf("%d event objects (were %d), series count %d", objects, before, count)
		}
		return nil
	})
	never(t, 2*time.Second, "no new SharesApplied object for quiet", func() error {
		if objects, _ := quiet(); objects != before {
			return fmt.Errorf("%d event objects, were %d", objects, before)
		}
		return nil
	})
}

// A message that fails to evaluate is reported by a Warning event; the
// reconcile still succeeds.
func TestEmitEventThatFailsIsReported(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
emit:
  events:
    ratio:
      reason: Ratio
      message: "${string(100 / int(self.spec.divisor))}"
`))
	create(t, widget(h.ns, "w", map[string]any{"divisor": int64(0)}))
	converged(t, h.ns, "w")
	eventWith(t, h.ns, ReasonEmitEventFailed, "operatorBox.emit.events.ratio.message")
	if evs := eventsOf(t, h.ns, "Ratio"); len(evs) != 0 {
		t.Errorf("a failed message was recorded: %v", evs[0].Note)
	}
	readyIs(t, h.ns, "w", "True", ReasonSucceeded)
}

// A declared event reads the reconcile's live inputs as the rest of the
// entry does: here the widget its cross read found.
func TestEmitEventReadsCross(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
cross:
  - crd: widget
    selector:
      name: "${self.spec.?message.orValue('')}"
    as: peer
emit:
  events:
    peer:
      reason: PeerSeen
      message: "${has(cross.peer) ? 'peer image ' + cross.peer.spec.image : 'no peer'}"
`))
	create(t, widget(h.ns, "p", map[string]any{"image": "nginx:1"}))
	create(t, widget(h.ns, "r", map[string]any{"message": "p"}))
	eventWith(t, h.ns, "PeerSeen", "peer image nginx:1")
	eventWith(t, h.ns, "PeerSeen", "no peer")
	if evs := eventsOf(t, h.ns, ReasonEmitEventFailed); len(evs) != 0 {
		t.Errorf("EmitEventFailed: %s", evs[0].Note)
	}
}

package webhook

import (
	"net/http"
	"time"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalogapi"
)

func (k *katalogAPI) health(w http.ResponseWriter, _ *http.Request, e *engine.Entry) {
	rt, known := k.runtimeOf(e)
	state, code := k.stateOf(rt, known)
	out := katalogapi.EntryHealth{
		Name:          e.Name,
		State:         state,
		Status:        code,
		Healthy:       k.serving(),
		StartedAt:     StateNotStarted,
		Uptime:        StateNotStarted,
		LastReconcile: StateNotStarted,
	}
	if known {
		out.Healthy, out.Started, out.Pending = rt.Healthy, rt.Started, rt.Pending
		out.StartedAt, out.Uptime = k.startedAt(rt)
		out.QueueDepth, out.ResourceCount = rt.QueueDepth, rt.ResourceCount
		out.ErrorRate = errorRate(rt)
		out.ConsecutiveFails, out.TotalReconciles = rt.ConsecutiveFailures, rt.TotalReconciles
		out.LastError = rt.LastError
		out.LastReconcile = lastReconcile(rt)
		out.Gated, out.GatedReason = rt.Gated, rt.GatedReason
		for _, d := range rt.Dependencies {
			if out.Dependencies == nil {
				out.Dependencies = map[string]katalogapi.DependencyHealth{}
			}
			out.Dependencies[d.Entry] = katalogapi.DependencyHealth{Name: d.Entry, State: d.State, Condition: d.Condition, Satisfied: d.Satisfied}
			out.HasUnhealthyDependencies = out.HasUnhealthyDependencies || !d.Satisfied
		}
	}
	writeJSON(w, code, out)
}

// lastReconcile is upstream's text for the last reconcile's time.
func lastReconcile(rt EntryRuntime) string {
	switch {
	case !rt.LastReconcile.IsZero():
		return rt.LastReconcile.UTC().Format(time.RFC3339)
	case rt.Started:
		return "no reconciles yet"
	}
	return StateNotStarted
}

package webhook

import (
	"net/http"
	"time"

	"github.com/orkspace/orkestra-cel/engine"
)

// EntryHealth is the GET /katalog/{crd}/health response (upstream's
// CRDHealthResponse), answered 200 while the entry is pending or healthy
// and 503 while it is not started or degraded (Status repeats the code).
type EntryHealth struct {
	Name       string `json:"name"`
	State      string `json:"state"`
	Status     int    `json:"status"`
	Healthy    bool   `json:"healthy"`
	Started    bool   `json:"started"`
	Pending    bool   `json:"pending"`
	StartedAt  string `json:"startedAt"`
	Uptime     string `json:"uptime"`
	QueueDepth int    `json:"queueDepth"`
	// ErrorRate is the percentage of the reconciles that failed.
	ErrorRate        float64 `json:"errorRate"`
	ConsecutiveFails int64   `json:"consecutiveFails"`
	TotalReconciles  int64   `json:"totalReconciles"`
	ResourceCount    int     `json:"resourceCount"`
	LastError        string  `json:"lastError"`
	// LastReconcile is RFC 3339, or "no reconciles yet" / "not started".
	LastReconcile            string                      `json:"lastReconcile"`
	HasUnhealthyDependencies bool                        `json:"hasUnhealthyDependencies"`
	Dependencies             map[string]DependencyHealth `json:"dependencies,omitempty"`
	Gated                    bool                        `json:"gated"`
	GatedReason              string                      `json:"gatedReason,omitempty"`
}

// DependencyHealth is one dependsOn entry of EntryHealth.
type DependencyHealth struct {
	Name      string `json:"name"`
	State     string `json:"state"`
	Condition string `json:"condition"`
	Satisfied bool   `json:"satisfied"`
}

func (k *katalogAPI) health(w http.ResponseWriter, _ *http.Request, e *engine.Entry) {
	rt, known := k.runtimeOf(e)
	state, code := k.stateOf(rt, known)
	out := EntryHealth{
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
				out.Dependencies = map[string]DependencyHealth{}
			}
			out.Dependencies[d.Entry] = DependencyHealth{Name: d.Entry, State: d.State, Condition: d.Condition, Satisfied: d.Satisfied}
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

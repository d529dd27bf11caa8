package webhook

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/katalogapi"
)

// The runtime's HTTP API under /katalog, with upstream Orkestra's routes
// and field names (pkg/kordinator/crd_health_handers.go, cr_handlers.go;
// registered in its runtime_konstructor.go): the summary of every entry,
// one entry's info, its health, its custom resources. An entry's
// `endpoints:` switches its routes off: such a route answers 404 as any
// path the server does not know, as upstream, which never registers it.

// EntryRuntime is what the operator knows about one katalog entry at run time.
type EntryRuntime struct {
	// Workers is the size of the entry's worker pool, WorkersActive how many
	// are reconciling right now.
	Workers       int
	WorkersActive int
	// ResourceCount is how many custom resources the entry's informer holds.
	ResourceCount int
	// Started is true once the entry's workers run; Pending while no
	// reconcile has run since.
	Started, Pending bool
	Healthy          bool
	// QueueDepth is how many custom resources wait in the work queue.
	QueueDepth int
	// StartedAt is when the entry started; zero while it has not.
	StartedAt time.Time
	// TotalReconciles counts the reconciles that ran, FailedReconciles
	// those that failed, ConsecutiveFailures the failures since the last
	// success.
	TotalReconciles, FailedReconciles, ConsecutiveFailures int64
	// LastError is the last failed reconcile's error; LastReconcile when the
	// last reconcile ran (zero: none yet).
	LastError     string
	LastReconcile time.Time
	// Gated is true when the preReconcile gate held a custom resource back
	// and no reconcile has run since; GatedReason names the gate.
	Gated       bool
	GatedReason string
	// Dependencies are the entry's dependsOn as they stand.
	Dependencies []DependencyRuntime
	// Storage is the storage state of the entry's CRD; nil when nothing
	// watches it (serve, or storage migration turned off).
	Storage *katalogapi.StorageStatus
}

// DependencyRuntime is one dependsOn entry as the dependent sees it.
type DependencyRuntime struct {
	Entry, Condition, State string
	Satisfied               bool
}

// RuntimeStatus supplies run-time facts about katalog entries (the operator
// implements it). Entry returns false for an entry it knows nothing about;
// the /katalog API then reports the static values of `orkestra serve`.
type RuntimeStatus interface {
	Entry(name string) (EntryRuntime, bool)
}

// Entry states, as upstream names them.
const (
	StateNotStarted = "not started"
	StatePending    = "pending"
	StateDegraded   = "degraded"
	StateHealthy    = "healthy"
	// StateGated is a healthy entry whose gate held a custom resource
	// back (in the /katalog summary only, as upstream).
	StateGated = "gated"
)

// katalogAPI serves the /katalog routes.
type katalogAPI struct {
	plan      *engine.Plan
	metrics   *Metrics
	runtime   RuntimeStatus
	resources ResourceReader
	// serving reports whether the server is ready (/readyz).
	serving func() bool
	now     func() time.Time
}

func (k *katalogAPI) register(mux *http.ServeMux) {
	mux.HandleFunc("GET /katalog", k.summary)
	mux.HandleFunc("GET /katalog/{crd}", k.route(routeInfo, k.info))
	mux.HandleFunc("GET /katalog/{crd}/health", k.route(routeHealth, k.health))
	mux.HandleFunc("GET /katalog/{crd}/cr", k.route(routeInfo, k.crList))
	mux.HandleFunc("GET /katalog/{crd}/cr/{path...}", k.route(routeInfo, k.crDetail))
}

// routeKind is which of an entry's switches serves a route.
type routeKind int

const (
	routeInfo routeKind = iota
	routeHealth
)

// route finds the entry a request names and serves it with h, unless the
// entry's endpoints: switch the route off (404 as an unknown path). An
// unknown or disabled entry is a 404 naming the entries served.
func (k *katalogAPI) route(kind routeKind, h func(http.ResponseWriter, *http.Request, *engine.Entry)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("crd")
		e := k.plan.Entry(name)
		if e == nil || !e.Enabled {
			k.unknown(w, name)
			return
		}
		ep := endpointsOf(e)
		if kind == routeInfo && !ep.Info || kind == routeHealth && !ep.Health {
			http.NotFound(w, r)
			return
		}
		h(w, r, e)
	}
}

func (k *katalogAPI) unknown(w http.ResponseWriter, name string) {
	known := []string{}
	for _, e := range k.plan.Entries {
		if e.Enabled {
			known = append(known, e.Name)
		}
	}
	writeJSON(w, http.StatusNotFound, map[string]any{
		"error": "no katalog entry named " + quote(name) + "; known entries: " + strings.Join(known, ", "),
		"known": known,
	})
}

// endpointsOf returns the entry's route switches (all on when the entry
// has no source, as in tests).
func endpointsOf(e *engine.Entry) katalog.Endpoints {
	if e.Source == nil {
		return katalog.AllEndpoints
	}
	return e.Source.Endpoints
}

// runtimeOf returns what the runtime knows about e; false under serve.
func (k *katalogAPI) runtimeOf(e *engine.Entry) (EntryRuntime, bool) {
	if k.runtime == nil {
		return EntryRuntime{}, false
	}
	return k.runtime.Entry(e.Name)
}

// stateOf derives upstream's state and the /health HTTP status. Under
// serve (no runtime) nothing reconciles: the entry is healthy while the
// server serves.
func (k *katalogAPI) stateOf(rt EntryRuntime, known bool) (string, int) {
	switch {
	case !known && k.serving():
		return StateHealthy, http.StatusOK
	case !known || !rt.Started:
		return StateNotStarted, http.StatusServiceUnavailable
	case rt.Pending:
		return StatePending, http.StatusOK
	case !rt.Healthy:
		return StateDegraded, http.StatusServiceUnavailable
	}
	return StateHealthy, http.StatusOK
}

func (k *katalogAPI) entry(e *engine.Entry) katalogapi.KatalogEntry {
	rt, known := k.runtimeOf(e)
	state, _ := k.stateOf(rt, known)
	out := katalogapi.KatalogEntry{
		Name:          e.Name,
		GVK:           e.GVK.String(),
		GVR:           e.GVR.String(),
		Namespaced:    e.Namespaced,
		Workers:       e.Workers,
		WorkersSource: "default",
		Resync:        e.Resync.String(),
		ResyncSource:  "default",
		// Upstream's default depth; 0 here means unbounded.
		MaxDepthSource: "default",
		State:          state,
		Healthy:        k.serving(),
		StartedAt:      StateNotStarted,
		Uptime:         StateNotStarted,
		Endpoints:      endpointInfo(e),
	}
	for _, d := range e.DependsOn {
		out.DependsOn = append(out.DependsOn, d.Name)
	}
	if src := e.Source; src != nil {
		out.Description = src.Description
		if !src.WorkersPos.IsZero() {
			out.WorkersSource = "configured"
		}
		if !src.ResyncPos.IsZero() {
			out.ResyncSource = "configured"
		}
		if src.Queue != nil && src.Queue.MaxDepth > 0 {
			out.MaxDepth, out.MaxDepthSource = src.Queue.MaxDepth, "configured"
		}
	}
	if known {
		out.Workers, out.WorkersActive, out.ResourceCount = rt.Workers, rt.WorkersActive, rt.ResourceCount
		out.Started, out.Healthy, out.Pending = rt.Started, rt.Healthy, rt.Pending
		out.QueueDepth, out.TotalReconciles = rt.QueueDepth, rt.TotalReconciles
		out.ErrorRate = errorRate(rt)
		out.Gated, out.GatedReason = rt.Gated, rt.GatedReason
		out.StartedAt, out.Uptime = k.startedAt(rt)
		out.Storage = rt.Storage
		out.Metrics = katalogapi.EntryMetrics{QueueDepth: rt.QueueDepth, ErrorRatePercent: out.ErrorRate, WorkersIdlePercent: 100}
		if rt.Workers > 0 {
			busy := math.Round(float64(rt.WorkersActive)/float64(rt.Workers)*10000) / 100
			out.Metrics.WorkersBusyPercent, out.Metrics.WorkersIdlePercent = busy, 100-busy
		}
	}
	if k.plan.Conversions[e.GVK.GroupKind()] != nil {
		out.Conversion.Enabled = true
	}
	if k.metrics != nil {
		s := k.metrics.Summary(e.GVK)
		out.Conversion.Total, out.Conversion.Success, out.Conversion.Failures = s.Total, s.Success, s.Failures
		out.Conversion.AvgLatencyMs = millis(s.AvgLatency)
		out.Conversion.P95LatencyMs = millis(s.P95Latency)
	}
	return out
}

func endpointInfo(e *engine.Entry) katalogapi.EndpointInfo {
	ep := endpointsOf(e)
	return katalogapi.EndpointInfo{Health: "/katalog/" + e.Name + "/health", Info: "/katalog/" + e.Name, HealthEnabled: ep.Health, InfoEnabled: ep.Info}
}

// errorRate is the percentage of the reconciles that failed.
func errorRate(rt EntryRuntime) float64 {
	if rt.TotalReconciles == 0 {
		return 0
	}
	return math.Round(float64(rt.FailedReconciles)/float64(rt.TotalReconciles)*10000) / 100
}

// startedAt returns upstream's startedAt and uptime texts.
func (k *katalogAPI) startedAt(rt EntryRuntime) (string, string) {
	if rt.StartedAt.IsZero() {
		return StateNotStarted, StateNotStarted
	}
	return rt.StartedAt.UTC().Format(time.RFC3339), k.now().Sub(rt.StartedAt).Round(time.Second).String()
}

// millis converts to milliseconds, rounded to the microsecond.
func millis(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)) / 1000
}

func (k *katalogAPI) summary(w http.ResponseWriter, _ *http.Request) {
	out := katalogapi.KatalogSummary{Name: k.plan.Katalog.Name, Description: k.plan.Katalog.Description, CRDs: []katalogapi.KatalogEntry{}, OrkReady: k.serving()}
	for _, e := range k.plan.Entries {
		out.Total++
		if !e.Enabled {
			continue
		}
		out.TotalEnabled++
		row := k.entry(e)
		switch row.State {
		case StateHealthy:
			out.StatusCounts.Healthy++
			if row.Gated {
				row.State = StateGated
			}
		case StateDegraded:
			out.StatusCounts.Degraded++
		default:
			out.StatusCounts.Pending++
		}
		out.CRDs = append(out.CRDs, row)
	}
	out.Healthy, out.Status = true, http.StatusOK
	if c := out.StatusCounts; c.Degraded > 0 {
		out.Healthy, out.Status = false, http.StatusServiceUnavailable
		out.DegradedReason = fmt.Sprintf("%d degraded", c.Degraded)
		if c.Pending > 0 {
			out.DegradedReason += fmt.Sprintf(", %d pending", c.Pending)
		}
	}
	writeJSON(w, out.Status, out)
}

func (k *katalogAPI) info(w http.ResponseWriter, _ *http.Request, e *engine.Entry) {
	writeJSON(w, http.StatusOK, k.entry(e))
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		httpError(w, http.StatusInternalServerError, "encoding the response: %v", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

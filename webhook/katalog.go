package webhook

import (
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/orkspace/orkestra-cel/engine"
)

// EntryRuntime is what the operator knows about one katalog entry at run time.
type EntryRuntime struct {
	// Workers is the size of the entry's worker pool, WorkersActive how many
	// are reconciling right now.
	Workers       int
	WorkersActive int
	// ResourceCount is how many custom resources the entry's informer holds.
	ResourceCount int
	// Started is true once the entry's workers run.
	Started bool
	Healthy bool
	// Storage is the storage state of the entry's CRD; nil when nothing
	// watches it (serve, or storage migration turned off).
	Storage *StorageStatus
}

// StorageStatus is the `storage` object of a /katalog entry: the CRD's
// status.storedVersions and the storage migration that empties it of every
// version but the storage version.
type StorageStatus struct {
	StoredVersions []string `json:"storedVersions"`
	Migrating      bool     `json:"migrating"`
	// Migrated counts the objects the current (or last) migration rewrote;
	// Remaining those still to do (null when unknown).
	Migrated  int64  `json:"migrated"`
	Remaining *int64 `json:"remaining"`
	LastError string `json:"lastError"`
}

// RuntimeStatus supplies run-time facts about katalog entries (the operator
// implements it). Entry returns false for an entry it knows nothing about;
// the /katalog API then reports the static values of `orkestra serve`.
type RuntimeStatus interface {
	Entry(name string) (EntryRuntime, bool)
}

// KatalogEntry is one entry of the /katalog API.
type KatalogEntry struct {
	Name          string           `json:"name"`
	GVK           string           `json:"gvk"`
	Workers       int              `json:"workers"`
	WorkersActive int              `json:"workersActive"`
	ResourceCount int              `json:"resourceCount"`
	Started       bool             `json:"started"`
	Healthy       bool             `json:"healthy"`
	Conversion    ConversionStatus `json:"conversion"`
	Storage       *StorageStatus   `json:"storage,omitempty"`
}

// ConversionStatus reports the conversions INTO an entry's version: an entry
// counts the objects converted to its version (group, kind and version of
// the entry), whatever their source version. Latencies are per object, in
// milliseconds; the p95 is over the last LatencyWindow conversions.
type ConversionStatus struct {
	// Enabled is true when the katalog declares conversion for the entry's CRD.
	Enabled      bool    `json:"enabled"`
	Total        uint64  `json:"total"`
	Success      uint64  `json:"success"`
	Failures     uint64  `json:"failures"`
	AvgLatencyMs float64 `json:"avgLatencyMs"`
	P95LatencyMs float64 `json:"p95LatencyMs"`
}

// KatalogList is the /katalog response.
type KatalogList struct {
	// Katalog is the katalog's metadata.name.
	Katalog string         `json:"katalog"`
	Entries []KatalogEntry `json:"entries"`
}

// katalogAPI serves GET /katalog and GET /katalog/{crd}.
type katalogAPI struct {
	plan    *engine.Plan
	metrics *Metrics
	runtime RuntimeStatus
	// serving reports whether the webhook serves (the static health).
	serving func() bool
}

func (k *katalogAPI) entry(e *engine.Entry) KatalogEntry {
	out := KatalogEntry{
		Name:    e.Name,
		GVK:     e.GVK.String(),
		Workers: e.Workers,
		Healthy: k.serving(),
	}
	if k.runtime != nil {
		if rt, ok := k.runtime.Entry(e.Name); ok {
			out.Workers, out.WorkersActive, out.ResourceCount = rt.Workers, rt.WorkersActive, rt.ResourceCount
			out.Started, out.Healthy = rt.Started, rt.Healthy
			out.Storage = rt.Storage
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

// millis converts to milliseconds, rounded to the microsecond.
func millis(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)) / 1000
}

func (k *katalogAPI) list(w http.ResponseWriter, _ *http.Request) {
	out := KatalogList{Katalog: k.plan.Katalog.Name, Entries: make([]KatalogEntry, 0, len(k.plan.Entries))}
	for _, e := range k.plan.Entries {
		out.Entries = append(out.Entries, k.entry(e))
	}
	writeJSON(w, http.StatusOK, out)
}

func (k *katalogAPI) get(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("crd")
	if e := k.plan.Entry(name); e != nil {
		writeJSON(w, http.StatusOK, k.entry(e))
		return
	}
	known := make([]string, len(k.plan.Entries))
	for i, e := range k.plan.Entries {
		known[i] = e.Name
	}
	writeJSON(w, http.StatusNotFound, map[string]any{
		"error": "no katalog entry named " + quote(name) + "; known entries: " + strings.Join(known, ", "),
		"known": known,
	})
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

package operator

import (
	"fmt"
	"sync"
	"time"

	"github.com/orkspace/orkestra-cel/katalog"
)

// entryHealth records what an entry's reconciles did, for the runtime's
// /katalog/{entry}/health (upstream: vitals.CRDHealth). A reconcile counts
// when it ran: one held back by dependsOn or the preReconcile gate does
// not (upstream never calls the reconciler then).
type entryHealth struct {
	mu            sync.Mutex
	startedAt     time.Time
	total, failed int64
	lastError     string
	lastReconcile time.Time
	// gated is true while the last custom resource the gate held back has
	// not been followed by a reconcile that ran (upstream: RecordGated,
	// cleared by RecordSuccess).
	gated       bool
	gatedReason string
}

// started records when the entry started, once.
func (h *entryHealth) started(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.startedAt.IsZero() {
		h.startedAt = now
	}
}

// succeeded records a reconcile that ran to the end.
func (h *entryHealth) succeeded(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.total++
	h.lastReconcile = now
	h.gated, h.gatedReason = false, ""
}

// failedWith records a reconcile that returned err.
func (h *entryHealth) failedWith(now time.Time, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.total++
	h.failed++
	h.lastReconcile = now
	h.lastError = err.Error()
}

// gate records a custom resource the preReconcile gate held back.
func (h *entryHealth) gate(reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gated, h.gatedReason = true, reason
}

// fill copies the record into st.
func (h *entryHealth) fill(st *EntryStatus) {
	h.mu.Lock()
	defer h.mu.Unlock()
	st.StartedAt = h.startedAt
	st.TotalReconciles, st.FailedReconciles = h.total, h.failed
	st.LastError, st.LastReconcile = h.lastError, h.lastReconcile
	st.Gated, st.GatedReason = h.gated, h.gatedReason
}

// DependencyStatus is one dependsOn entry as the dependent sees it.
type DependencyStatus struct {
	// Entry is the entry depended on; Condition "started" or "healthy".
	Entry, Condition string
	// State is the entry's: "not running" (not an entry of this operator),
	// "not started", "degraded" (its last reconcile failed: enough for
	// started, not for healthy) or "healthy".
	State     string
	Satisfied bool
	// Waiting says what the dependent waits for, when not satisfied.
	Waiting string
}

// dependencies reports the entry's dependsOn, each as it stands now.
func (e *entryController) dependencies() []DependencyStatus {
	out := make([]DependencyStatus, 0, len(e.entry.DependsOn))
	for _, dep := range e.entry.DependsOn {
		d := DependencyStatus{Entry: dep.Name, Condition: dep.Condition}
		other, ok := e.op.entries[dep.Name]
		var fails int64
		if ok {
			fails = other.consecutiveFailures.Load()
		}
		switch {
		case !ok:
			d.State = "not running"
			d.Waiting = fmt.Sprintf("entry %s to be %s (it does not run in this operator)", dep.Name, dep.Condition)
		case !other.status().Started:
			d.State = "not started"
			d.Waiting = fmt.Sprintf("entry %s to be %s (not started yet)", dep.Name, dep.Condition)
		case fails > 0:
			d.State = "degraded"
			if dep.Condition == katalog.DependencyHealthy {
				d.Waiting = fmt.Sprintf("entry %s to be healthy (its last %d reconciles failed)", dep.Name, fails)
			}
		default:
			d.State = "healthy"
		}
		d.Satisfied = d.Waiting == ""
		out = append(out, d)
	}
	return out
}

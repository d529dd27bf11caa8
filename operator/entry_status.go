package operator

import (
	"time"

	"github.com/orkspace/orkestra-cel/katalog"
)

// An entry's run-time status, as the health API and the runtime's HTTP API
// report it: workers, resources, health from recent reconciles and the
// queue's depth.

// EntryStatus is what the operator knows about one katalog entry at run time.
type EntryStatus struct {
	// Workers is the entry's worker pool (0 when it only watches);
	// WorkersActive how many reconcile right now.
	Workers       int
	WorkersActive int
	// ResourceCount is how many custom resources the entry's informer holds.
	ResourceCount int
	// Started is true once the entry's informer has synced and, for an entry
	// that reconciles, its workers run (on the leader only).
	Started bool
	// Healthy is true when the informer has synced, fewer than the entry's
	// queue.failureThreshold (default one half) of the recent reconciles
	// failed, and the queue holds no more than its queue.maxDepth (a
	// follower is healthy).
	Healthy bool
	// Pending is true while the entry has started but no reconcile has run.
	Pending bool
	// QueueDepth is how many custom resources wait in the work queue.
	QueueDepth int
	// StartedAt is when the entry started (zero: not yet).
	StartedAt time.Time
	// TotalReconciles counts the reconciles that ran (not those dependsOn
	// or the preReconcile gate held back), FailedReconciles those that
	// failed, ConsecutiveFailures the failures since the last success.
	TotalReconciles, FailedReconciles, ConsecutiveFailures int64
	// LastError is the error of the last failed reconcile ("" when none
	// failed); LastReconcile when the last reconcile ran.
	LastError     string
	LastReconcile time.Time
	// Gated is true when the preReconcile gate held a custom resource back
	// and no reconcile has run since; GatedReason says which gate.
	Gated       bool
	GatedReason string
	// Dependencies are the entry's dependsOn as they stand.
	Dependencies []DependencyStatus
}

// Entry returns the run-time status of the entry named name; false when the
// operator runs nothing for it (unknown or disabled).
func (o *Operator) Entry(name string) (EntryStatus, bool) {
	e, ok := o.entries[name]
	if !ok {
		return EntryStatus{}, false
	}
	return e.status(), true
}

// status is what the health API reports of the entry.
func (e *entryController) status() EntryStatus {
	st := EntryStatus{
		WorkersActive: int(e.active.Load()),
		ResourceCount: int(e.count()),
	}
	if e.entry.Reconciles {
		st.Workers = e.workers()
		st.Started = e.workersStarted.Load() && e.informerSynced.Load()
	} else {
		st.Started = e.informerSynced.Load()
	}
	// A follower (not the leader) is healthy too: its informer runs and
	// it is ready to take over.
	st.Healthy = e.informerSynced.Load() && e.failureRatio() < e.failureThreshold() && !e.queueOverDepth()
	st.QueueDepth = e.queueDepth()
	st.ConsecutiveFailures = e.consecutiveFailures.Load()
	e.health.fill(&st)
	st.Pending = st.Started && st.TotalReconciles == 0
	st.Dependencies = e.dependencies()
	return st
}

// failureThreshold is the share of recent failed reconciles at which the
// entry reports unhealthy: its queue.failureThreshold, else one half.
func (e *entryController) failureThreshold() float64 {
	if q := e.queueSettings(); q != nil && q.FailureThreshold > 0 {
		return q.FailureThreshold
	}
	return 0.5
}

// queueOverDepth reports a queue holding more than its queue.maxDepth. Work
// past the depth is still done (only queue.behaviour drops new events); the
// entry says it lags.
func (e *entryController) queueOverDepth() bool {
	q := e.queueSettings()
	return q != nil && q.MaxDepth > 0 && e.queueDepth() > q.MaxDepth
}

func (e *entryController) queueSettings() *katalog.Queue {
	if e.entry.Source == nil {
		return nil
	}
	return e.entry.Source.Queue
}

func (e *entryController) workers() int {
	if e.entry.Workers > 0 {
		return e.entry.Workers
	}
	return 1
}

func (e *entryController) queueDepth() int {
	e.queueMu.Lock()
	defer e.queueMu.Unlock()
	if e.queue == nil {
		return 0
	}
	return e.queue.Len()
}

func (e *entryController) observe(failed bool) {
	e.recentMu.Lock()
	e.recent[e.recentN%len(e.recent)] = failed
	e.recentN++
	e.recentMu.Unlock()
}

func (e *entryController) failureRatio() float64 {
	e.recentMu.Lock()
	defer e.recentMu.Unlock()
	n := min(e.recentN, len(e.recent))
	if n == 0 {
		return 0
	}
	failed := 0
	for i := 0; i < n; i++ {
		if e.recent[i] {
			failed++
		}
	}
	return float64(failed) / float64(n)
}

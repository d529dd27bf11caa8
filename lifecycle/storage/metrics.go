package storage

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/orkspace/orkestra-cel/metricsreg"
)

// Metric names.
const (
	MetricObjects        = "orkestra_storage_migration_objects_total"
	MetricRuns           = "orkestra_storage_migrations_total"
	MetricRunning        = "orkestra_storage_migration_running"
	MetricRemaining      = "orkestra_storage_migration_remaining"
	MetricStoredVersions = "orkestra_storage_stored_versions"
)

type metrics struct {
	objects   *prometheus.CounterVec
	runs      *prometheus.CounterVec
	running   *prometheus.GaugeVec
	remaining *prometheus.GaugeVec
	stored    *prometheus.GaugeVec
}

// newMetrics creates the collectors and registers them with reg (nil: not
// registered); collectors already registered under the same names are reused.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		objects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricObjects,
			Help: "Objects the storage migration handled, by CRD and result (migrated: rewritten; skipped: changed or deleted during the run).",
		}, []string{"crd", "result"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricRuns,
			Help: "Storage migrations finished, by CRD and result (succeeded, failed).",
		}, []string{"crd", "result"}),
		running: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricRunning,
			Help: "1 while a storage migration of the CRD runs.",
		}, []string{"crd"}),
		remaining: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricRemaining,
			Help: "Objects the running storage migration of the CRD still has to rewrite (0 when unknown or idle).",
		}, []string{"crd"}),
		stored: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricStoredVersions,
			Help: "How many versions the CRD's status.storedVersions lists (1 once every object is at the storage version).",
		}, []string{"crd"}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	if m.objects, err = metricsreg.Register(reg, m.objects); err != nil {
		return nil, err
	}
	if m.runs, err = metricsreg.Register(reg, m.runs); err != nil {
		return nil, err
	}
	if m.running, err = metricsreg.Register(reg, m.running); err != nil {
		return nil, err
	}
	if m.remaining, err = metricsreg.Register(reg, m.remaining); err != nil {
		return nil, err
	}
	if m.stored, err = metricsreg.Register(reg, m.stored); err != nil {
		return nil, err
	}
	return m, nil
}

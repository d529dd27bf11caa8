package operator

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orkspace/orkestra-cel/metricsreg"
)

// Metric names.
const (
	MetricReconcileTotal    = "orkestra_reconcile_total"
	MetricReconcileDuration = "orkestra_reconcile_duration_seconds"
	MetricQueueDepth        = "orkestra_reconcile_queue_depth"
	MetricWorkersActive     = "orkestra_reconcile_workers_active"
	MetricWorkers           = "orkestra_reconcile_workers"
	MetricResources         = "orkestra_resources"
)

// Values of the result label of orkestra_reconcile_total.
const (
	ResultSuccess = "success"
	ResultError   = "error"
	ResultRequeue = "requeue"
)

// metrics are the reconcile collectors. The counter and histogram are
// shared by every Operator registered with the same registry; the gauges are
// read at scrape time from the live entry controllers.
type metrics struct {
	total    *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

var (
	metricsMu   sync.Mutex
	metricsByRg = map[prometheus.Registerer]*metrics{}
	gaugesByRg  = map[prometheus.Registerer]*gaugeCollector{}
)

// metricsFor returns the collectors registered with reg, registering them
// the first time (a process may build several operators, e.g. in tests).
func metricsFor(reg prometheus.Registerer) (*metrics, *gaugeCollector, error) {
	metricsMu.Lock()
	defer metricsMu.Unlock()
	if m, ok := metricsByRg[reg]; ok {
		return m, gaugesByRg[reg], nil
	}
	m := &metrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricReconcileTotal,
			Help: "Reconciles of custom resources, by katalog entry (crd) and result (success, error, requeue).",
		}, []string{"crd", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    MetricReconcileDuration,
			Help:    "Time to reconcile one custom resource, by katalog entry.",
			Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		}, []string{"crd"}),
	}
	g := &gaugeCollector{entries: map[*entryController]struct{}{}}
	var err error
	if m.total, err = metricsreg.Register(reg, m.total); err != nil {
		return nil, nil, err
	}
	if m.duration, err = metricsreg.Register(reg, m.duration); err != nil {
		return nil, nil, err
	}
	if err := reg.Register(g); err != nil {
		return nil, nil, err
	}
	metricsByRg[reg], gaugesByRg[reg] = m, g
	return m, g, nil
}

var (
	descQueueDepth = prometheus.NewDesc(MetricQueueDepth,
		"Custom resources waiting in the entry's work queue.", []string{"crd"}, nil)
	descWorkersActive = prometheus.NewDesc(MetricWorkersActive,
		"Workers reconciling right now, by katalog entry.", []string{"crd"}, nil)
	descWorkers = prometheus.NewDesc(MetricWorkers,
		"Size of the entry's worker pool (0 for entries that only watch).", []string{"crd"}, nil)
	descResources = prometheus.NewDesc(MetricResources,
		"Custom resources the entry's informer holds.", []string{"crd"}, nil)
)

// gaugeCollector reports the gauges of the live entry controllers.
type gaugeCollector struct {
	mu      sync.Mutex
	entries map[*entryController]struct{}
}

func (g *gaugeCollector) add(e *entryController) {
	g.mu.Lock()
	g.entries[e] = struct{}{}
	g.mu.Unlock()
}

func (g *gaugeCollector) remove(e *entryController) {
	g.mu.Lock()
	delete(g.entries, e)
	g.mu.Unlock()
}

func (g *gaugeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descQueueDepth
	ch <- descWorkersActive
	ch <- descWorkers
	ch <- descResources
}

func (g *gaugeCollector) Collect(ch chan<- prometheus.Metric) {
	g.mu.Lock()
	defer g.mu.Unlock()
	seen := map[string]bool{}
	for e := range g.entries {
		name := e.entry.Name
		if seen[name] {
			continue // two operators with the same katalog in one process
		}
		seen[name] = true
		st := e.status()
		ch <- prometheus.MustNewConstMetric(descQueueDepth, prometheus.GaugeValue, float64(e.queueDepth()), name)
		ch <- prometheus.MustNewConstMetric(descWorkersActive, prometheus.GaugeValue, float64(st.WorkersActive), name)
		ch <- prometheus.MustNewConstMetric(descWorkers, prometheus.GaugeValue, float64(st.Workers), name)
		ch <- prometheus.MustNewConstMetric(descResources, prometheus.GaugeValue, float64(st.ResourceCount), name)
	}
}

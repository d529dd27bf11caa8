package webhook

import (
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/metricsreg"
)

// Metric names.
const (
	MetricRequests = "orkestra_conversion_requests_total"
	MetricDuration = "orkestra_conversion_duration_seconds"
	MetricActive   = "orkestra_conversion_active_requests"
	MetricLastSeen = "orkestra_conversion_last_timestamp_seconds"
	MetricRefused  = "orkestra_conversion_refused_requests_total"
)

// Values of the reason label of MetricRefused: why a /convert request was
// answered before its body was read whole.
const (
	RefusedTooLarge  = "too_large" // 413: over --max-request-bytes
	RefusedTimeout   = "timeout"   // 408: not complete within the body timeout
	RefusedEvicted   = "evicted"   // 408: stalled while other requests waited
	RefusedBusy      = "busy"      // 503: no share of the budget within the body timeout
	RefusedPreempted = "preempted" // 503: gave its share back to break a deadlock
)

// Label values of the result label.
const (
	ResultSuccess = "success"
	ResultFailure = "failure"
)

// UnknownLabel stands in metric labels for a kind or version the katalog does
// not serve, so that a client cannot grow the metrics without bound.
const UnknownLabel = "unknown"

// DurationBuckets resolve sub-millisecond conversions: 50µs … 1s.
var DurationBuckets = []float64{
	0.00005, 0.0001, 0.00025, 0.0005,
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
	0.1, 0.25, 0.5, 1,
}

// LatencyWindow is how many recent conversions per target version the p95 of
// the /katalog API is computed over.
const LatencyWindow = 1024

// Metrics records conversions: Prometheus collectors counted per object (one
// review may hold many objects of several kinds and versions), and per
// target version the totals and recent latencies the /katalog API reports.
// It is safe for concurrent use.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	active   *prometheus.GaugeVec
	lastSeen *prometheus.GaugeVec
	refused  *prometheus.CounterVec

	pairs   sync.Map // pairKey → *pairMetrics
	mu      sync.Mutex
	targets map[schema.GroupVersionKind]*targetStats
}

// NewMetrics creates the conversion collectors and registers them with reg
// (controller-runtime's metrics.Registry in the binary, so that the
// operator's metrics share it). Collectors already registered under the same
// names are reused.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricRequests,
			Help: "Objects converted by the /convert webhook, by kind, source version, target version and result (success or failure).",
		}, []string{"kind", "from_version", "to_version", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    MetricDuration,
			Help:    "Time to convert one object, by kind, source version and target version.",
			Buckets: DurationBuckets,
		}, []string{"kind", "from_version", "to_version"}),
		active: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricActive,
			Help: "Objects being converted right now, by kind.",
		}, []string{"kind"}),
		lastSeen: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricLastSeen,
			Help: "Unix time of the last object converted, by kind, source version and target version (orkestra versions reads it to tell whether clients still use a version).",
		}, []string{"kind", "from_version", "to_version"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricRefused,
			Help: "/convert requests answered before their body was read whole, by reason: too_large (413), timeout (408, body not complete in time), evicted (408, the body stalled while other requests waited for the body budget), busy (503, no share of the budget in time), preempted (503, gave its share back to bodies that could complete).",
		}, []string{"reason"}),
		targets: map[schema.GroupVersionKind]*targetStats{},
	}
	if reg != nil {
		var err error
		if m.requests, err = metricsreg.Register(reg, m.requests); err != nil {
			return nil, err
		}
		if m.duration, err = metricsreg.Register(reg, m.duration); err != nil {
			return nil, err
		}
		if m.active, err = metricsreg.Register(reg, m.active); err != nil {
			return nil, err
		}
		if m.lastSeen, err = metricsreg.Register(reg, m.lastSeen); err != nil {
			return nil, err
		}
		if m.refused, err = metricsreg.Register(reg, m.refused); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// refuse counts a request refused for reason; m may be nil.
func (m *Metrics) refuse(reason string) {
	if m != nil {
		m.refused.WithLabelValues(reason).Inc()
	}
}

type pairKey struct {
	group, kind, from, to string
}

// pairMetrics are the collectors of one (kind, from, to), resolved once.
type pairMetrics struct {
	success, failure prometheus.Counter
	duration         prometheus.Observer
	active           prometheus.Gauge
	lastSeen         prometheus.Gauge
	target           *targetStats
}

// pair returns the collectors for converting group/kind from → to. Label
// values are the bare kind and versions; the group only separates the
// /katalog statistics.
func (m *Metrics) pair(k pairKey) *pairMetrics {
	if p, ok := m.pairs.Load(k); ok {
		return p.(*pairMetrics)
	}
	p := &pairMetrics{
		success:  m.requests.WithLabelValues(k.kind, k.from, k.to, ResultSuccess),
		failure:  m.requests.WithLabelValues(k.kind, k.from, k.to, ResultFailure),
		duration: m.duration.WithLabelValues(k.kind, k.from, k.to),
		active:   m.active.WithLabelValues(k.kind),
		lastSeen: m.lastSeen.WithLabelValues(k.kind, k.from, k.to),
		target:   m.target(schema.GroupVersionKind{Group: k.group, Version: k.to, Kind: k.kind}),
	}
	actual, _ := m.pairs.LoadOrStore(k, p)
	return actual.(*pairMetrics)
}

func (m *Metrics) target(gvk schema.GroupVersionKind) *targetStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.targets[gvk]
	if t == nil {
		t = &targetStats{}
		m.targets[gvk] = t
	}
	return t
}

// observe records one object converted in d, ending at end.
func (p *pairMetrics) observe(end time.Time, d time.Duration, ok bool) {
	if ok {
		p.success.Inc()
	} else {
		p.failure.Inc()
	}
	p.duration.Observe(d.Seconds())
	p.lastSeen.Set(float64(end.UnixNano()) / 1e9)
	p.target.observe(d, ok)
}

// ConversionSummary is what the /katalog API reports about the conversions
// into one version of a kind.
type ConversionSummary struct {
	Total    uint64
	Success  uint64
	Failures uint64
	// AvgLatency is over all conversions, P95Latency over the last
	// LatencyWindow ones.
	AvgLatency time.Duration
	P95Latency time.Duration
}

// Summary returns the statistics of conversions whose target is gvk.
func (m *Metrics) Summary(gvk schema.GroupVersionKind) ConversionSummary {
	m.mu.Lock()
	t := m.targets[gvk]
	m.mu.Unlock()
	if t == nil {
		return ConversionSummary{}
	}
	return t.summary()
}

type targetStats struct {
	mu       sync.Mutex
	total    uint64
	success  uint64
	failures uint64
	sum      time.Duration
	ring     [LatencyWindow]time.Duration
	next     int // ring index of the next sample
	filled   bool
}

func (t *targetStats) observe(d time.Duration, ok bool) {
	t.mu.Lock()
	t.total++
	if ok {
		t.success++
	} else {
		t.failures++
	}
	t.sum += d
	t.ring[t.next] = d
	t.next++
	if t.next == LatencyWindow {
		t.next, t.filled = 0, true
	}
	t.mu.Unlock()
}

func (t *targetStats) summary() ConversionSummary {
	t.mu.Lock()
	s := ConversionSummary{Total: t.total, Success: t.success, Failures: t.failures}
	n := t.next
	if t.filled {
		n = LatencyWindow
	}
	recent := slices.Clone(t.ring[:n])
	sum := t.sum
	t.mu.Unlock()
	if s.Total > 0 {
		s.AvgLatency = sum / time.Duration(s.Total)
	}
	s.P95Latency = percentile(recent, 0.95)
	return s
}

// percentile returns the nearest-rank percentile q of samples (sorted in place).
func percentile(samples []time.Duration, q float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	slices.Sort(samples)
	rank := int(q*float64(len(samples))+0.999999999) - 1 // ceil(q·n) − 1
	rank = max(0, min(rank, len(samples)-1))
	return samples[rank]
}

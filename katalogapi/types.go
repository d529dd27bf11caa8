// Package katalogapi holds the response types of the runtime's HTTP API
// under /katalog (upstream Orkestra's routes and field names): the server
// (webhook) writes them, and remote cross reads (operatorBox.cross[].source)
// type what another runtime answers by them, so the two cannot drift.
package katalogapi

// KatalogSummary is the GET /katalog response.
type KatalogSummary struct {
	// Name and Description are the katalog's metadata.
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// CRDs are the enabled entries; Total counts every entry,
	// TotalEnabled the enabled ones.
	CRDs         []KatalogEntry `json:"crds"`
	Total        int            `json:"total"`
	TotalEnabled int            `json:"totalEnabled"`
	// OrkReady is /readyz's answer.
	OrkReady bool `json:"OrkReady"`
	// Healthy is false, and Status 503, while an entry is degraded.
	Healthy        bool         `json:"healthy"`
	Status         int          `json:"status"`
	DegradedReason string       `json:"degradedReason,omitempty"`
	StatusCounts   StatusCounts `json:"statusCounts"`
}

// StatusCounts counts the entries by state ("not started" counts as pending).
type StatusCounts struct {
	Healthy  int `json:"healthy"`
	Degraded int `json:"degraded"`
	Started  int `json:"started"`
	Pending  int `json:"pending"`
}

// KatalogEntry is one entry: GET /katalog/{crd}, and a row of /katalog.
type KatalogEntry struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	GVK         string   `json:"gvk"`
	GVR         string   `json:"gvr"`
	Namespaced  bool     `json:"namespaced"`
	DependsOn   []string `json:"dependsOn,omitempty"`
	Workers     int      `json:"workers"`
	// WorkersSource, ResyncSource and MaxDepthSource say whether the value
	// is the katalog's ("configured") or the default.
	WorkersSource  string `json:"workersSource"`
	WorkersActive  int    `json:"workersActive"`
	Resync         string `json:"resync"`
	ResyncSource   string `json:"resyncSource"`
	QueueDepth     int    `json:"queueDepth"`
	MaxDepth       int    `json:"maxDepth"`
	MaxDepthSource string `json:"maxDepthSource"`
	ResourceCount  int    `json:"resourceCount"`
	// TotalReconciles counts the reconciles that ran.
	TotalReconciles int64  `json:"totalReconciles"`
	State           string `json:"state"`
	Healthy         bool   `json:"healthy"`
	Started         bool   `json:"started"`
	Pending         bool   `json:"pending"`
	StartedAt       string `json:"startedAt"`
	Uptime          string `json:"uptime"`
	// ErrorRate is the percentage of the reconciles that failed.
	ErrorRate   float64          `json:"errorRate"`
	Gated       bool             `json:"gated"`
	GatedReason string           `json:"gatedReason,omitempty"`
	Endpoints   EndpointInfo     `json:"endpoints"`
	Conversion  ConversionStatus `json:"conversion"`
	// Metrics repeats the live figures under upstream's metrics object,
	// which its autoscale conditions and remote cross reads read
	// (cross.<crd>.metrics.queueDepth).
	Metrics EntryMetrics   `json:"metrics"`
	Storage *StorageStatus `json:"storage,omitempty"`
}

// EntryMetrics is the metrics object of a /katalog entry (upstream's
// AutoMetrics.AsMap, without its reconcile-duration percentile, which this
// runtime reports on /metrics instead).
type EntryMetrics struct {
	QueueDepth int `json:"queueDepth"`
	// WorkersBusyPercent is the share of the workers reconciling now,
	// WorkersIdlePercent the rest.
	WorkersBusyPercent float64 `json:"workersBusyPercent"`
	WorkersIdlePercent float64 `json:"workersIdlePercent"`
	// ErrorRatePercent is the percentage of the reconciles that failed.
	ErrorRatePercent float64 `json:"errorRatePercent"`
}

// EndpointInfo names an entry's routes and whether they are served.
type EndpointInfo struct {
	Health        string `json:"health"`
	Info          string `json:"info"`
	HealthEnabled bool   `json:"healthEnabled"`
	InfoEnabled   bool   `json:"infoEnabled"`
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

// CRList is the GET /katalog/{crd}/cr response: the entry's custom
// resources in namespace/name order.
type CRList struct {
	CRD   string      `json:"crd"`
	GVK   string      `json:"gvk"`
	Total int         `json:"total"`
	Items []CRSummary `json:"items"`
}

// CRSummary is one custom resource, as a line of kubectl get.
type CRSummary struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	// Phase is status.phase when the resource has one.
	Phase string `json:"phase,omitempty"`
	// Ready and ReadyReason are its Ready condition's.
	Ready       bool   `json:"ready"`
	ReadyReason string `json:"readyReason,omitempty"`
	Age         string `json:"age"`
	Generation  int64  `json:"generation"`
	// Value is the field ?field=a.b asked for, as text ("" when absent).
	Value string `json:"value,omitempty"`
}

// CRDetail is the GET /katalog/{crd}/cr/{namespace}/{name} response
// ({name} alone for a cluster-scoped entry).
type CRDetail struct {
	Name              string            `json:"name"`
	Namespace         string            `json:"namespace,omitempty"`
	Generation        int64             `json:"generation"`
	CreationTimestamp string            `json:"creationTimestamp"`
	Labels            map[string]string `json:"labels,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
	Ready             bool              `json:"ready"`
	ReadyReason       string            `json:"readyReason,omitempty"`
	ReadyMessage      string            `json:"readyMessage,omitempty"`
	Status            map[string]any    `json:"status,omitempty"`
	// Children holds, by kind, the child (one) or a list of them (several).
	Children       map[string]any `json:"children"`
	EventsEndpoint string         `json:"eventsEndpoint"`
}

// ChildSummary is one child of a custom resource.
type ChildSummary struct {
	Name      string         `json:"name"`
	Namespace string         `json:"namespace,omitempty"`
	Kind      string         `json:"kind"`
	Status    map[string]any `json:"status,omitempty"`
	Ready     bool           `json:"ready"`
}

// CREvents is the GET …/cr/{namespace}/{name}/events response: the
// custom resource's events, newest first, at most maxEvents.
type CREvents struct {
	Name      string    `json:"name"`
	Namespace string    `json:"namespace,omitempty"`
	Total     int       `json:"total"`
	Events    []CREvent `json:"events"`
}

// CREvent is one event.
type CREvent struct {
	Type      string `json:"type"`
	Reason    string `json:"reason"`
	Message   string `json:"message"`
	Source    string `json:"source"`
	Object    string `json:"object"`
	Count     int32  `json:"count"`
	FirstSeen string `json:"firstSeen"`
	LastSeen  string `json:"lastSeen"`
	Age       string `json:"age"`
}

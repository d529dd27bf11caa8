package scale

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof" // /debug/pprof on the stats port (ORKESTRA_SCALE_PROFILE)
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	celgo "github.com/google/cel-go/cel"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orkspace/orkestra-cel/engine"
	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/gotmpl"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/operator"
)

// The runtime under measurement runs in a process of its own — this test
// binary started again with envRuntime set — so that its heap and resident
// memory are its own: the API server, etcd and the benchmark's client live in
// other processes.
const (
	envRuntime    = "ORKESTRA_SCALE_RUNTIME" // the kubeconfig file
	envSyncPeriod = "ORKESTRA_SCALE_SYNC_PERIOD"
	// envWhole=1 runs the runtime with whole objects in its caches, as
	// before it trimmed them (the transforms off).
	envWhole = "ORKESTRA_SCALE_WHOLE"
)

// runtimeStats is what the runtime process reports on /stats.
type runtimeStats struct {
	Synced bool `json:"synced"`
	// Reconciles counts every reconcile, whatever its result; Queued and
	// Active are the work queue's depth and the workers busy now.
	Reconciles float64 `json:"reconciles"`
	Queued     float64 `json:"queued"`
	Active     float64 `json:"active"`
	// Writes counts the runtime's API requests that write (every method but
	// GET); Reads the GETs (lists included, watches not).
	Writes int64 `json:"writes"`
	Reads  int64 `json:"reads"`
	// RSS is the process's resident memory now; HeapLive the heap in use
	// after a full collection (only when asked with ?gc=1).
	RSS      uint64 `json:"rss"`
	HeapLive uint64 `json:"heapLive"`
}

// runRuntime is the runtime process: the katalog's operator against the
// cluster of the kubeconfig, /stats on a local port printed to stdout.
func runRuntime(kubeconfig string) error {
	if os.Getenv(envProfile) != "" {
		runtime.MemProfileRate = 512 // a heap profile fine enough to count bytes per object
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	// Unthrottled, as in a pod (controller-runtime's config loader): the
	// API server's priority and fairness is the limit.
	cfg.QPS = -1
	var writes, reads atomic.Int64
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			switch {
			case req.URL.Query().Get("watch") == "true":
			case req.Method == http.MethodGet:
				reads.Add(1)
			default:
				writes.Add(1)
			}
			return rt.RoundTrip(req)
		})
	})
	plan, err := loadPlan()
	if err != nil {
		return err
	}
	whole := os.Getenv(envWhole) == "1"
	mo := operator.ManagerOptions{WholeObjects: whole}
	if s := os.Getenv(envSyncPeriod); s != "" {
		if mo.SyncPeriod, err = time.ParseDuration(s); err != nil {
			return fmt.Errorf("%s: %w", envSyncPeriod, err)
		}
	}
	mgr, err := operator.NewManager(cfg, plan, mo)
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	op := operator.New(plan, operator.Options{Registry: reg, WholeObjects: whole})
	if err := op.SetupWithManager(mgr); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	http.HandleFunc("/stats", func(w http.ResponseWriter, r *http.Request) {
		st := runtimeStats{Synced: op.Ready() == nil, Writes: writes.Load(), Reads: reads.Load()}
		st.Reconciles, st.Queued, st.Active = gathered(reg)
		if r.URL.Query().Get("gc") == "1" {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			st.HeapLive = ms.HeapAlloc
			debug.FreeOSMemory()
		}
		st.RSS = residentBytes()
		_ = json.NewEncoder(w).Encode(st)
	})
	go func() { _ = http.Serve(ln, nil) }()
	fmt.Printf("stats %s\n", ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return mgr.Start(ctx)
}

// loadPlan compiles the benchmark's katalog as orkestra run does.
func loadPlan() (*engine.Plan, error) {
	k, diags := katalog.Load("testdata/katalog.yaml")
	if diags.HasErrors() {
		return nil, fmt.Errorf("loading the katalog: %v", diags.Errors())
	}
	cel, err := celengine.New(celengine.Options{Libraries: []celgo.EnvOption{gotmpl.CELLibrary()}})
	if err != nil {
		return nil, err
	}
	plan, cdiags := engine.Compile(k, engine.Backends{CEL: cel, Legacy: gotmpl.New(cel)}, engine.CompileOptions{})
	if cdiags.HasErrors() {
		return nil, fmt.Errorf("compiling the katalog: %v", cdiags.Errors())
	}
	return plan, nil
}

// gathered sums the reconcile metrics of every entry.
func gathered(reg *prometheus.Registry) (reconciles, queued, active float64) {
	mfs, err := reg.Gather()
	if err != nil {
		return 0, 0, 0
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			switch mf.GetName() {
			case operator.MetricReconcileTotal:
				reconciles += m.GetCounter().GetValue()
			case operator.MetricQueueDepth:
				queued += m.GetGauge().GetValue()
			case operator.MetricWorkersActive:
				active += m.GetGauge().GetValue()
			}
		}
	}
	return reconciles, queued, active
}

// residentBytes is the process's resident set size (VmRSS), 0 where
// /proc is not available.
func residentBytes() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

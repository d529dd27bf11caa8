package scale

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/operator/render"
)

// envProfile names a directory: each run saves its runtime's heap profile
// at rest there (heap-N-whole.pprof, heap-N-trimmed.pprof), for go tool pprof.
const envProfile = "ORKESTRA_SCALE_PROFILE"

// envSizes lists the numbers of custom resources to measure, comma-separated
// (default 1000): ORKESTRA_SCALE_N=1000,10000 adds the long run.
const envSizes = "ORKESTRA_SCALE_N"

// envRuns lists the runs to make, comma-separated (default all three):
// baseline (the plain client), whole (the runtime keeping whole objects) and
// trimmed (the runtime as it is). ORKESTRA_SCALE_RUNS=trimmed measures the
// runtime alone, in a third of the time.
const envRuns = "ORKESTRA_SCALE_RUNS"

// workers is the reconciling entry's workers (testdata/katalog.yaml), and the
// parallelism of the benchmark's own clients.
const workers = 4

// measurement is one run of the runtime over n custom resources.
type measurement struct {
	converge time.Duration
	// writes are the runtime's API writes until convergence.
	writes int64
	// rss0/heap0 at rest before any custom resource exists; rss/heap at
	// rest after convergence and an idle resync (rss the lowest sampled at
	// rest, heap live after a collection); rssConverged just after
	// convergence. rssFreed0 and rssFreed are the RSS once the Go runtime
	// returned the memory it holds free (debug.FreeOSMemory): the floor.
	rss0, heap0, rss, heap, rssConverged, rssFreed0, rssFreed uint64
	// idleWrites are the API writes of an idle resync (want 0), resynced
	// the reconciles it made.
	idleWrites int64
	resynced   float64
}

// BenchmarkScale creates N custom resources of a two-child katalog
// (testdata/katalog.yaml: a Deployment and a Service each, two status
// fields, served at two versions) through the API and measures, each on a
// fresh API server: the time until every one is Ready with its children; the
// runtime's resident memory and live heap at rest, and per custom resource;
// its API writes during an idle resync (must be 0). Two baselines: a plain
// client doing the API work convergence needs at the least (create each
// custom resource and its two children, write its status once), and the
// same runtime with whole objects in its caches (the transforms off, as
// before: operator.ManagerOptions.WholeObjects).
//
//	KUBEBUILDER_ASSETS=… go test -run '^$' -bench Scale -benchtime 1x ./operator/scale/
//	ORKESTRA_SCALE_N=1000,10000 …   (the 10 000 run took 32 minutes on 2 shared cores)
func BenchmarkScale(b *testing.B) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		b.Fatal("KUBEBUILDER_ASSETS is not set: the benchmark runs a real kube-apiserver and etcd (export KUBEBUILDER_ASSETS=\"$(hack/envtest-assets.sh)\")")
	}
	runs := runsOf(b)
	for _, n := range sizes(b) {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.Logf("load average before: %s", loadAverage())
				var r results
				if runs["baseline"] {
					r.base = baseline(b, n)
				}
				if runs["whole"] {
					m := measure(b, n, true)
					r.off = &m
				}
				if runs["trimmed"] {
					m := measure(b, n, false)
					r.on = &m
				}
				b.Logf("load average after: %s", loadAverage())
				report(b, n, r)
			}
		})
	}
}

func sizes(b *testing.B) []int {
	spec := os.Getenv(envSizes)
	if spec == "" {
		return []int{1000}
	}
	var out []int
	for _, s := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			b.Fatalf("%s=%q: want positive numbers separated by commas, e.g. 1000,10000", envSizes, spec)
		}
		out = append(out, n)
	}
	return out
}

func runsOf(b *testing.B) map[string]bool {
	spec := os.Getenv(envRuns)
	if spec == "" {
		return map[string]bool{"baseline": true, "whole": true, "trimmed": true}
	}
	runs := map[string]bool{}
	for _, s := range strings.Split(spec, ",") {
		s = strings.TrimSpace(s)
		if s != "baseline" && s != "whole" && s != "trimmed" {
			b.Fatalf("%s=%q: want runs among baseline, whole and trimmed, separated by commas", envRuns, spec)
		}
		runs[s] = true
	}
	return runs
}

// measure runs the runtime over n new custom resources on a fresh API
// server; whole: with whole objects in its caches.
func measure(b *testing.B, n int, whole bool) measurement {
	b.Helper()
	cp := startControlPlane(b)
	// The informers resync (replay their objects to the controllers) every
	// syncPeriod: after convergence the benchmark waits for one.
	syncPeriod := max(time.Minute, time.Duration(n)*30*time.Millisecond)
	env := []string{envSyncPeriod + "=" + syncPeriod.String()}
	if whole {
		env = append(env, envWhole+"=1")
	}
	p := startRuntime(b, cp, env...)
	var m measurement
	p.idle(2*time.Second, time.Minute)
	m.rss0 = p.restingRSS(10 * time.Second)
	freed := p.stats(true)
	m.heap0, m.rssFreed0 = freed.HeapLive, freed.RSS
	w := watchReady(b, cp)
	before := p.stats(false)
	ctx := context.Background()
	start := time.Now()
	if err := parallel(n, func(i int) error { return cp.client.Create(ctx, site(i)) }); err != nil {
		b.Fatal(err)
	}
	w.waitAll(b, n, 5*time.Minute+time.Duration(n)*100*time.Millisecond)
	m.converge = time.Since(start)
	m.writes = p.stats(false).Writes - before.Writes
	checkChildren(b, cp, n)

	converged := p.idle(5*time.Second, 5*time.Minute)
	m.rssConverged = converged.RSS

	// An idle resync: every custom resource reconciled again, no write.
	p.waitFor("an informer resync", 2*syncPeriod+time.Duration(n)*10*time.Millisecond, func(st runtimeStats) bool {
		return st.Reconciles >= converged.Reconciles+float64(n)
	})
	rest := p.idle(5*time.Second, 5*time.Minute)
	m.idleWrites = rest.Writes - converged.Writes
	m.resynced = rest.Reconciles - converged.Reconciles
	// At rest: a minute or more after convergence, when the Go runtime has
	// returned most of what convergence's garbage took — the lowest of 20 s
	// of samples, as RSS moves with each collection.
	m.rss = p.restingRSS(20 * time.Second)
	freed = p.stats(true)
	m.heap, m.rssFreed = freed.HeapLive, freed.RSS
	if dir := os.Getenv(envProfile); dir != "" {
		name := fmt.Sprintf("heap-%d-trimmed.pprof", n)
		if whole {
			name = fmt.Sprintf("heap-%d-whole.pprof", n)
		}
		p.saveProfile(filepath.Join(dir, name))
	}
	p.stop()
	return m
}

// checkChildren fails unless each custom resource has its Deployment and
// Service.
func checkChildren(b *testing.B, cp *controlPlane, n int) {
	b.Helper()
	ctx := context.Background()
	deps, svcs := &appsv1.DeploymentList{}, &corev1.ServiceList{}
	for _, l := range []client.ObjectList{deps, svcs} {
		if err := cp.client.List(ctx, l, client.InNamespace(namespace), client.MatchingLabels{render.LabelManaged: "true"}); err != nil {
			b.Fatal(err)
		}
	}
	if len(deps.Items) != n || len(svcs.Items) != n {
		b.Fatalf("%d custom resources Ready, but %d Deployments and %d Services exist", n, len(deps.Items), len(svcs.Items))
	}
}

// baseline does with a plain client, on a fresh API server and with the
// reconciler's parallelism, the API work convergence needs at the least:
// each custom resource created, its two children created, its status
// written once.
func baseline(b *testing.B, n int) time.Duration {
	b.Helper()
	cp := startControlPlane(b)
	plan, err := loadPlan()
	if err != nil {
		b.Fatal(err)
	}
	entry := plan.Entry("site-v1")
	ctx := context.Background()
	start := time.Now()
	err = parallel(n, func(i int) error {
		cr := site(i)
		if err := cp.client.Create(ctx, cr); err != nil {
			return err
		}
		res, err := render.RenderWith(entry, cr, render.Options{Hooks: render.ApplyHooks})
		if err != nil {
			return err
		}
		for _, c := range res.Hooks[katalog.OnReconcile] {
			if err := cp.client.Create(ctx, c.Typed.DeepCopyObject().(client.Object)); err != nil {
				return err
			}
		}
		orig := cr.DeepCopy()
		cr.Object["status"] = map[string]any{"phase": "Running", "observedGeneration": cr.GetGeneration()}
		return cp.client.Status().Patch(ctx, cr, client.MergeFrom(orig))
	})
	if err != nil {
		b.Fatalf("baseline: %v", err)
	}
	return time.Since(start)
}

// results are the runs made: base is 0, off and on nil when not made.
type results struct {
	base    time.Duration
	off, on *measurement
}

func report(b *testing.B, n int, r results) {
	b.Helper()
	if r.base > 0 {
		b.ReportMetric(r.base.Seconds(), "s/baseline")
	}
	for _, x := range []struct {
		m      *measurement
		suffix string
	}{{r.on, ""}, {r.off, "-whole"}} {
		if m := x.m; m != nil {
			b.ReportMetric(m.converge.Seconds(), "s/converge"+x.suffix)
			b.ReportMetric(mb(m.rss), "MB-rss"+x.suffix)
			b.ReportMetric(mb(m.heap), "MB-heap"+x.suffix)
			b.ReportMetric(m.rssPerCR(n), "KB-rss/CR"+x.suffix)
			b.ReportMetric(m.freedPerCR(n), "KB-rss-freed/CR"+x.suffix)
			b.ReportMetric(m.heapPerCR(n), "KB-heap/CR"+x.suffix)
		}
	}
	if on := r.on; on != nil {
		b.ReportMetric(float64(on.writes)/float64(n), "writes/CR")
		b.ReportMetric(float64(on.idleWrites), "writes/idle-resync")
		if r.base > 0 {
			b.ReportMetric(on.converge.Seconds()/r.base.Seconds(), "x-baseline")
		}
		if off := r.off; off != nil {
			b.ReportMetric(on.converge.Seconds()/off.converge.Seconds(), "x-whole-converge")
			b.ReportMetric(on.rssPerCR(n)/off.rssPerCR(n), "x-whole-rss/CR")
			b.ReportMetric(on.heapPerCR(n)/off.heapPerCR(n), "x-whole-heap/CR")
		}
	}
	for _, x := range []struct {
		name string
		m    *measurement
	}{{"trimmed caches", r.on}, {"whole objects", r.off}} {
		m := x.m
		if m == nil {
			continue
		}
		plain := "plain client not run"
		if r.base > 0 {
			plain = fmt.Sprintf("plain client %.1fs", r.base.Seconds())
		}
		b.Logf("N=%d, %s: converged in %.1fs (%s), %.2f writes/CR, RSS then %.0f MB; at rest RSS %.0f MB (%.0f before any CR: %.1f KB/CR), with free memory returned %.0f MB (%.0f: %.1f KB/CR), live heap %.1f MB (%.1f: %.1f KB/CR); idle resync: %.0f reconciles, %d writes",
			n, x.name, m.converge.Seconds(), plain, float64(m.writes)/float64(n), mb(m.rssConverged), mb(m.rss), mb(m.rss0), m.rssPerCR(n), mb(m.rssFreed), mb(m.rssFreed0), m.freedPerCR(n), mb(m.heap), mb(m.heap0), m.heapPerCR(n), m.resynced, m.idleWrites)
		if m.idleWrites != 0 {
			b.Errorf("%s: an idle resync wrote %d times to the API server; want 0", x.name, m.idleWrites)
		}
		if m.resynced < float64(n) {
			b.Errorf("%s: the idle resync reconciled %.0f custom resources; want at least %d", x.name, m.resynced, n)
		}
	}
}

func mb(v uint64) float64 { return float64(v) / (1 << 20) }

func (m measurement) rssPerCR(n int) float64 {
	return (float64(m.rss) - float64(m.rss0)) / 1024 / float64(n)
}

func (m measurement) freedPerCR(n int) float64 {
	return (float64(m.rssFreed) - float64(m.rssFreed0)) / 1024 / float64(n)
}

func (m measurement) heapPerCR(n int) float64 {
	return (float64(m.heap) - float64(m.heap0)) / 1024 / float64(n)
}

// parallel runs f(0..n-1) on `workers` goroutines; the first error stops it.
func parallel(n int, f func(i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { first = err })
					next.Store(int64(n))
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

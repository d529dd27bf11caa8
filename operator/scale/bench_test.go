package scale

import (
	"context"
	"fmt"
	"os"
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

// envSizes lists the numbers of custom resources to measure, comma-separated
// (default 1000): ORKESTRA_SCALE_N=1000,10000 adds the long run.
const envSizes = "ORKESTRA_SCALE_N"

// workers is the reconciling entry's workers (testdata/katalog.yaml), and the
// parallelism of the benchmark's own clients.
const workers = 4

// measurement is one run of the runtime over n custom resources.
type measurement struct {
	converge time.Duration
	// writes are the runtime's API writes until convergence.
	writes int64
	// rss0/heap0 at rest before any custom resource exists; rss/heap at
	// rest once all converged (rss as found; heap live after a collection).
	rss0, heap0, rss, heap uint64
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
// its API writes during an idle resync (must be 0). The baseline is a plain
// client doing the API work convergence needs at the least: create each
// custom resource and its two children, write its status once.
//
//	KUBEBUILDER_ASSETS=… go test -run '^$' -bench Scale -benchtime 1x ./operator/scale/
//	ORKESTRA_SCALE_N=1000,10000 …   (the 10 000 run takes about 15 minutes on 2 cores)
func BenchmarkScale(b *testing.B) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		b.Fatal("KUBEBUILDER_ASSETS is not set: the benchmark runs a real kube-apiserver and etcd (export KUBEBUILDER_ASSETS=\"$(hack/envtest-assets.sh)\")")
	}
	for _, n := range sizes(b) {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.Logf("load average before: %s", loadAverage())
				base := baseline(b, n)
				on := measure(b, n)
				b.Logf("load average after: %s", loadAverage())
				report(b, n, base, on)
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

// measure runs the runtime over n new custom resources on a fresh API
// server.
func measure(b *testing.B, n int, env ...string) measurement {
	b.Helper()
	cp := startControlPlane(b)
	// The informers resync (replay their objects to the controllers) every
	// syncPeriod: after convergence the benchmark waits for one.
	syncPeriod := max(time.Minute, time.Duration(n)*30*time.Millisecond)
	p := startRuntime(b, cp, append(env, envSyncPeriod+"="+syncPeriod.String())...)
	var m measurement
	p.idle(2*time.Second, time.Minute)
	m.rss0, m.heap0 = p.stats(false).RSS, p.stats(true).HeapLive
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

	rest := p.idle(5*time.Second, 5*time.Minute)
	m.rss = rest.RSS
	m.heap = p.stats(true).HeapLive

	// An idle resync: every custom resource reconciled again, no write.
	p.waitFor("an informer resync", 2*syncPeriod+time.Duration(n)*10*time.Millisecond, func(st runtimeStats) bool {
		return st.Reconciles >= rest.Reconciles+float64(n)
	})
	after := p.idle(5*time.Second, 5*time.Minute)
	m.idleWrites = after.Writes - rest.Writes
	m.resynced = after.Reconciles - rest.Reconciles
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

func report(b *testing.B, n int, base time.Duration, on measurement) {
	b.Helper()
	kb := func(v uint64) float64 { return float64(v) / 1024 }
	perCR := func(at, zero uint64) float64 { return (kb(at) - kb(zero)) / float64(n) }
	b.ReportMetric(on.converge.Seconds(), "s/converge")
	b.ReportMetric(base.Seconds(), "s/baseline")
	b.ReportMetric(on.converge.Seconds()/base.Seconds(), "x-baseline")
	b.ReportMetric(float64(on.writes)/float64(n), "writes/CR")
	b.ReportMetric(kb(on.rss)/1024, "MB-rss")
	b.ReportMetric(kb(on.heap)/1024, "MB-heap")
	b.ReportMetric(perCR(on.rss, on.rss0), "KB-rss/CR")
	b.ReportMetric(perCR(on.heap, on.heap0), "KB-heap/CR")
	b.ReportMetric(float64(on.idleWrites), "writes/idle-resync")
	b.Logf("N=%d: converged in %.1fs (baseline %.1fs), %.2f writes/CR; at rest RSS %.0f MB (%.0f before any CR), live heap %.0f MB (%.0f); idle resync: %.0f reconciles, %d writes",
		n, on.converge.Seconds(), base.Seconds(), float64(on.writes)/float64(n), kb(on.rss)/1024, kb(on.rss0)/1024, kb(on.heap)/1024, kb(on.heap0)/1024, on.resynced, on.idleWrites)
	if on.idleWrites != 0 {
		b.Errorf("an idle resync wrote %d times to the API server; want 0", on.idleWrites)
	}
	if on.resynced < float64(n) {
		b.Errorf("the idle resync reconciled %.0f custom resources; want at least %d", on.resynced, n)
	}
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

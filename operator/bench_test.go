package operator

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/operator/render"
)

// benchBox is a typical web app: a Deployment, a Service, a ConfigMap and a
// typed status.
const benchBox = `
status:
  fields:
    - path: phase
      value: Running
    - path: replicas
      value: "${self.spec.replicas}"
onReconcile:
  deployments:
    - name: "${self.metadata.name}"
      image: "${self.spec.image}"
      replicas: "${self.spec.replicas}"
      port: 8080
  services:
    - name: "${self.metadata.name}"
      port: 80
  configMaps:
    - name: "${self.metadata.name}-config"
      data:
        message: "${self.spec.message}"
`

// benchWorkers is the entry's worker count in the benchmarks, and the
// parallelism of the baseline.
const benchWorkers = 4

func benchPlan(b *testing.B) *engine.Plan {
	plan := widgetPlan(b, benchBox)
	for _, e := range plan.Entries {
		e.Workers = benchWorkers
	}
	return plan
}

func benchWidget(ns string, i int) *unstructured.Unstructured {
	return widget(ns, fmt.Sprintf("w%04d", i), map[string]any{"image": "nginx:1.27", "replicas": int64(1), "message": "hello"})
}

// parallel runs f(0..n-1) on k goroutines.
func parallel(n, k int, f func(i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, k)
	for w := 0; w < k; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// readyCount counts the widgets of ns that are Ready at their generation.
func readyCount(ctx context.Context, ns string) (int, error) {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("test.orkestra.io/v1")
	list.SetKind("WidgetList")
	if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
		return 0, err
	}
	n := 0
	for i := range list.Items {
		u := &list.Items[i]
		c, ok := readyCondition(u)
		og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		if ok && c["status"] == "True" && og == u.GetGeneration() {
			n++
		}
	}
	return n, nil
}

// baseline does by hand, with a plain client and the same parallelism, the
// API work convergence needs at the least: create each custom resource, its
// three children and write its status once.
func baseline(b *testing.B, n int) time.Duration {
	ns := newNamespace(b)
	plan := benchPlan(b)
	e := plan.Entries[0]
	ctx := context.Background()
	start := time.Now()
	err := parallel(n, benchWorkers, func(i int) error {
		cr := benchWidget(ns, i)
		if err := k8s.Create(ctx, cr); err != nil {
			return err
		}
		res, err := render.RenderWith(e, cr, render.Options{Hooks: render.ApplyHooks})
		if err != nil {
			return err
		}
		for _, c := range res.Hooks[katalog.OnReconcile] {
			if err := k8s.Create(ctx, c.Typed.DeepCopyObject().(client.Object)); err != nil {
				return err
			}
		}
		orig := cr.DeepCopy()
		cr.Object["status"] = map[string]any{"phase": "Running", "replicas": int64(1), "observedGeneration": cr.GetGeneration()}
		return k8s.Status().Patch(ctx, cr, client.MergeFrom(orig))
	})
	if err != nil {
		b.Fatalf("baseline: %v", err)
	}
	return time.Since(start)
}

// BenchmarkConverge measures the time for N new custom resources to
// converge (every one Ready at its generation, children created) against a
// real API server, as a ratio to the baseline of doing the same writes with a
// plain client; and the API requests of a no-op reconcile.
func BenchmarkConverge(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			var total, base time.Duration
			var calls, noopCalls, noopWrites, reconciles float64
			for it := 0; it < b.N; it++ {
				b.StopTimer()
				h := startOperator(b, benchPlan(b))
				ctx := context.Background()
				before := apiCalls.total()
				b.StartTimer()
				start := time.Now()
				if err := parallel(n, benchWorkers, func(i int) error { return k8s.Create(ctx, benchWidget(h.ns, i)) }); err != nil {
					b.Fatal(err)
				}
				eventuallyWithin(b, 10*time.Minute, "convergence", func() error {
					ready, err := readyCount(ctx, h.ns)
					if err != nil {
						return err
					}
					if ready < n {
						time.Sleep(100 * time.Millisecond)
						return fmt.Errorf("%d of %d ready", ready, n)
					}
					return nil
				})
				total += time.Since(start)
				b.StopTimer()
				calls += float64(apiCalls.total() - before)
				h.idle("widget")
				reconciles += metricValue(b, h, MetricReconcileTotal, map[string]string{"crd": "widget"}) / float64(n)

				// A no-op reconcile of every resource.
				h.client.takeWrites()
				before = apiCalls.total()
				for i := 0; i < n; i++ {
					h.reconcileNow("widget", benchWidget(h.ns, i).GetName())
				}
				noopCalls += float64(apiCalls.total()-before) / float64(n)
				noopWrites += float64(len(h.client.takeWrites())) / float64(n)
				h.stop()
				base += baseline(b, n)
				b.StartTimer()
			}
			runs := float64(b.N)
			b.ReportMetric(total.Seconds()/runs, "s/converge")
			b.ReportMetric(base.Seconds()/runs, "s/baseline")
			b.ReportMetric(total.Seconds()/base.Seconds(), "x-baseline")
			b.ReportMetric(calls/runs/float64(n), "apicalls/CR")
			b.ReportMetric(reconciles/runs, "reconciles/CR")
			b.ReportMetric(noopCalls/runs, "apicalls/noop-reconcile")
			b.ReportMetric(noopWrites/runs, "writes/noop-reconcile")
		})
	}
}

// BenchmarkNoopReconcile measures one reconcile of a converged custom
// resource (render, drift comparison of three children, status comparison),
// with the API requests and write calls it makes (both must be 0), against
// the baseline of reading the same four objects from the cache.
func BenchmarkNoopReconcile(b *testing.B) {
	const n = 20
	h := startOperator(b, benchPlan(b))
	ctx := context.Background()
	if err := parallel(n, benchWorkers, func(i int) error { return k8s.Create(ctx, benchWidget(h.ns, i)) }); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		converged(b, h.ns, benchWidget(h.ns, i).GetName())
	}
	h.idle("widget")
	e := h.controller("widget")
	c := h.mgr.GetClient()

	b.Run("baseline-cache-reads", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			name := benchWidget(h.ns, i%n).GetName()
			key := types.NamespacedName{Namespace: h.ns, Name: name}
			cr := e.crObject()
			if err := c.Get(ctx, key, cr); err != nil {
				b.Fatal(err)
			}
			if err := c.Get(ctx, key, &appsv1.Deployment{}); err != nil {
				b.Fatal(err)
			}
			if err := c.Get(ctx, key, &corev1.Service{}); err != nil {
				b.Fatal(err)
			}
			if err := c.Get(ctx, types.NamespacedName{Namespace: h.ns, Name: name + "-config"}, &corev1.ConfigMap{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reconcile", func(b *testing.B) {
		h.client.takeWrites()
		before := apiCalls.total()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			h.reconcileNow("widget", benchWidget(h.ns, i%n).GetName())
		}
		b.StopTimer()
		b.ReportMetric(float64(apiCalls.total()-before)/float64(b.N), "apicalls/op")
		b.ReportMetric(float64(len(h.client.takeWrites()))/float64(b.N), "writes/op")
	})
}

package operator

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// forEachBenchBox makes one Deployment per region (50 items) and reads the
// children back into the status.
const forEachBenchBox = `
status:
  fields:
    - path: replicas
      value: "${children.deployments.size()}"
    - path: phase
      value: "${children.deployments[?self.metadata.name + '-r00'].?status.?readyReplicas.orValue(0) > 0 ? 'Serving' : 'Starting'}"
onReconcile:
  deployments:
    - name: "${self.metadata.name}-${each.name}"
      image: nginx:1.27
      replicas: "${each.replicas}"
      forEach: {field: spec.regions}
`

// BenchmarkForEachReadBack measures a no-op reconcile of a custom resource
// with a 50-item forEach whose status reads the 50 children back (render,
// children from the cache, 50 drift comparisons, status comparison): the API
// requests and write calls it makes (both must be 0), against the baseline
// of reading the custom resource and its 50 Deployments from the cache.
func BenchmarkForEachReadBack(b *testing.B) {
	const items = 50
	h := startOperator(b, widgetPlan(b, forEachBenchBox))
	ctx := context.Background()
	regions := make([]any, items)
	for i := range regions {
		regions[i] = map[string]any{"name": fmt.Sprintf("r%02d", i), "replicas": int64(1)}
	}
	create(b, widget(h.ns, "shop", map[string]any{"regions": regions}))
	eventuallyWithin(b, 2*time.Minute, "the 50 children and the status", func() error {
		u := getWidget(b, h.ns, "shop")
		c, ok := readyCondition(u)
		st, _ := u.Object["status"].(map[string]any)
		if !ok || c["status"] != "True" || st["replicas"] != int64(items) {
			return fmt.Errorf("Ready %v, status %v", c, st)
		}
		return nil
	})
	h.idle("widget")
	e := h.controller("widget")
	c := h.mgr.GetClient()

	b.Run("baseline-cache-reads", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := c.Get(ctx, types.NamespacedName{Namespace: h.ns, Name: "shop"}, e.crObject()); err != nil {
				b.Fatal(err)
			}
			var list appsv1.DeploymentList
			if err := c.List(ctx, &list, client.InNamespace(h.ns)); err != nil || len(list.Items) != items {
				b.Fatalf("%d deployments, %v", len(list.Items), err)
			}
		}
	})
	b.Run("reconcile", func(b *testing.B) {
		h.client.takeWrites()
		before := apiCalls.total()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			h.reconcileNow("widget", "shop")
		}
		b.StopTimer()
		b.ReportMetric(float64(apiCalls.total()-before)/float64(b.N), "apicalls/op")
		b.ReportMetric(float64(len(h.client.takeWrites()))/float64(b.N), "writes/op")
	})
}

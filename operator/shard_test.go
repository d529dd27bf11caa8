package operator

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestShardsReconcileEachObjectOnce runs the partitioning README's "Beyond
// one replica" describes, on one API server: two runtimes of one katalog,
// each the elected leader of its own lease and watching its own namespace
// (`orkestra run --namespace`, an install per partition). Every custom
// resource converges; each is reconciled — its children created, its
// status written — by the runtime of its namespace only, and each
// runtime's caches hold its own partition's objects only.
func TestShardsReconcileEachObjectOnce(t *testing.T) {
	const perShard = 15
	plan := widgetPlan(t, benchBox)
	shards := map[string]*harness{}
	for _, name := range []string{"a", "b"} {
		shards[name] = startOperator(t, plan, func(o *harnessOptions) {
			o.leaderElection, o.leaseID = true, "orkestra-test-shard-"+name
		})
	}
	ctx := context.Background()
	for name, h := range shards {
		if err := parallel(perShard, 4, func(i int) error {
			return k8s.Create(ctx, widget(h.ns, fmt.Sprintf("%s-%02d", name, i), map[string]any{"image": "nginx:1.27", "replicas": int64(1), "message": "hi"}))
		}); err != nil {
			t.Fatal(err)
		}
	}
	for name, h := range shards {
		for i := 0; i < perShard; i++ {
			converged(t, h.ns, fmt.Sprintf("%s-%02d", name, i))
		}
	}

	statusWritten := map[string]string{} // widget → the shard that wrote its status
	for name, h := range shards {
		for _, w := range h.client.takeWrites() {
			f := strings.Fields(w) // verb kind name
			if len(f) != 3 {
				continue
			}
			if !strings.HasPrefix(f[2], name+"-") {
				t.Errorf("shard %s wrote %q, an object of another shard", name, w)
			}
			if f[0] == "status-patch" && f[1] == "Widget" {
				if other, ok := statusWritten[f[2]]; ok && other != name {
					t.Errorf("%s reconciled by shards %s and %s", f[2], other, name)
				}
				statusWritten[f[2]] = name
			}
		}
		// The caches of a shard hold its partition only.
		crs := &unstructured.UnstructuredList{}
		crs.SetAPIVersion("test.orkestra.io/v1")
		crs.SetKind("WidgetList")
		deps := &appsv1.DeploymentList{}
		for _, l := range []client.ObjectList{crs, deps} {
			if err := h.mgr.GetCache().List(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
		if len(crs.Items) != perShard || len(deps.Items) != perShard {
			t.Errorf("shard %s caches %d widgets and %d deployments; want %d of each, its own", name, len(crs.Items), len(deps.Items), perShard)
		}
		for _, u := range crs.Items {
			if u.GetNamespace() != h.ns {
				t.Errorf("shard %s caches %s/%s", name, u.GetNamespace(), u.GetName())
			}
		}
	}
	if len(statusWritten) != 2*perShard {
		t.Errorf("%d widgets had their status written; want %d", len(statusWritten), 2*perShard)
	}
}

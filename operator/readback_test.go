package operator

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

// A status field reading a child's status back: children.deployments['web']
// is the Deployment the informer cache holds (upstream's .children,
// pkg/runtime/reconciler/run_status.go layer 3), typed by Kubernetes'
// published schema; a change of the child's status recomputes the status.
func TestStatusReadsAChildBack(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
status:
  fields:
    - path: replicas
      value: "${children.deployments['web'].status.readyReplicas}"
    - path: phase
      value: Waiting
    - path: phase
      value: Serving
      when: "children.deployments[?'web'].?status.?readyReplicas.orValue(0) >= self.spec.replicas"
onReconcile:
  deployments:
    - name: web
      image: nginx
      replicas: "${self.spec.replicas}"
`))
	create(t, widget(h.ns, "shop", map[string]any{"replicas": int64(2)}))
	u := converged(t, h.ns, "shop")
	st := u.Object["status"].(map[string]any)
	if _, has := st["replicas"]; has || st["phase"] != "Waiting" {
		t.Fatalf("before the Deployment is ready: status %v", st)
	}
	// The Deployment controller does not run here: the test writes the
	// child's status as it would.
	var d appsv1.Deployment
	mustGet(t, h.ns, "web", &d)
	d.Status.Replicas, d.Status.ReadyReplicas = 2, 2
	if err := k8s.Status().Update(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the status to follow the child", func() error {
		u := getWidget(t, h.ns, "shop")
		st, _ := u.Object["status"].(map[string]any)
		if st["replicas"] != int64(2) || st["phase"] != "Serving" {
			return fmt.Errorf("status %v", st)
		}
		return nil
	})
	cond, _ := readyCondition(getWidget(t, h.ns, "shop"))
	if cond["status"] != "True" || cond["message"] != "1 children applied" {
		t.Errorf("Ready %v", cond)
	}
}

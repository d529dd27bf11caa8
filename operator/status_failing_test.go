package operator

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

// A status field whose template calls a function with the wrong number of
// arguments (upstream's registry-guide web-service motif:
// {{ containerImage .children.deployment }}) failed on every reconcile
// upstream and was skipped while the others were written and the reconcile
// succeeded (orkspace/orkestra pkg/runtime/reconciler/run_status.go). Here
// it is left out at load: the reconcile succeeds, the other fields are
// written, that one never is.
func TestStatusFieldThatAlwaysFailsIsNotWritten(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
onReconcile:
  deployments:
    - name: "{{ .metadata.name }}"
      image: nginx
status:
  fields:
    - path: phase
      value: Running
    - path: replicas
      value: "{{ containerImage .children.deployment }}"
`))
	create(t, widget(h.ns, "w", map[string]any{}))
	u := converged(t, h.ns, "w")
	var d appsv1.Deployment
	mustGet(t, h.ns, "w", &d)
	st := u.Object["status"].(map[string]any)
	if st["phase"] != "Running" {
		t.Errorf("status.phase = %v, want Running", st["phase"])
	}
	if r, ok := st["replicas"]; ok {
		t.Errorf("status.replicas = %v, want it never written", r)
	}
}

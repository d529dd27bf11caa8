package operator

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// forceConflict (upstream v0.7.17, per resource over the entry's, default
// true: orkspace/orkestra pkg/resources/shared.ResolveForceConflict): a
// child whose field another manager took over is taken back by a forced
// apply; with forceConflict: false the apply fails on the conflict and the
// other manager keeps the field.
func TestForceConflictPerResource(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
onReconcile:
  configMaps:
    - name: forced
      data: {a: ours}
    - name: polite
      forceConflict: false
      data: {a: ours}
`))
	create(t, widget(h.ns, "w", map[string]any{}))
	converged(t, h.ns, "w")
	h.idle("widget")
	for _, name := range []string{"forced", "polite"} {
		cm := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": h.ns},
			"data":     map[string]any{"a": "theirs"},
		}}
		if err := k8s.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(cm), client.FieldOwner("intruder"), client.ForceOwnership); err != nil {
			t.Fatal(err)
		}
	}
	dataA := func(name string) string {
		var cm corev1.ConfigMap
		mustGet(t, h.ns, name, &cm)
		return cm.Data["a"]
	}
	eventually(t, "the forced child taken back", func() error {
		if got := dataA("forced"); got != "ours" {
			return fmt.Errorf("forced has a=%q", got)
		}
		return nil
	})
	msg := readyIs(t, h.ns, "w", "False", ReasonApplyFailed)
	if !strings.Contains(msg, "polite") || !strings.Contains(strings.ToLower(msg), "conflict") {
		t.Errorf("Ready message %q does not name the conflict on polite", msg)
	}
	if got := dataA("polite"); got != "theirs" {
		t.Errorf("polite has a=%q: a child with forceConflict: false took the field over", got)
	}
}

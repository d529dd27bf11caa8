package operator

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/operator/render"
)

// regions is the spec.regions list of the forEach tests.
func regions(names ...string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = map[string]any{"name": n, "replicas": int64(i + 1)}
	}
	return out
}

// names lists the objects of a kind in ns labelled as children of shop's
// forEach declaration decl.
func forEachNames(t *testing.T, ns, decl string, list client.ObjectList) []string {
	t.Helper()
	if err := k8s.List(t.Context(), list, client.InNamespace(ns), client.MatchingLabels{render.LabelDeclaration: decl}); err != nil {
		t.Fatal(err)
	}
	var out []string
	switch l := list.(type) {
	case *appsv1.DeploymentList:
		for _, d := range l.Items {
			if d.DeletionTimestamp == nil {
				out = append(out, fmt.Sprintf("%s:%d", d.Name, *d.Spec.Replicas))
			}
		}
	case *corev1.ConfigMapList:
		for _, c := range l.Items {
			if c.DeletionTimestamp == nil {
				out = append(out, c.Name+":"+c.Data["region"])
			}
		}
	}
	sort.Strings(out)
	return out
}

// forEach over a list field grows and shrinks with the list: a child per
// item (CEL each, legacy .region alias). The children of items that are gone
// stay by default — upstream's forEach only expands the current items and
// nothing removes the others (iAlexeze/orkestra
// pkg/reconciler/docs/05-foreach.md) — and are deleted with prune: true; the
// others are left as they are.
func TestForEachGrowsAndShrinks(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
onReconcile:
  deployments:
    - name: "${self.metadata.name}-${each.name}"
      image: nginx
      replicas: "${each.replicas}"
      forEach: {field: spec.regions}
      prune: true
  configMaps:
    - name: "{{ .metadata.name }}-{{ .region.name }}-config"
      data: {region: "{{ .region.name }}"}
      forEach: {field: spec.regions, as: region}
`))
	create(t, widget(h.ns, "shop", map[string]any{"regions": regions("eu", "us")}))
	u := converged(t, h.ns, "shop")
	if c, _ := readyCondition(u); c["message"] != "4 children applied" {
		t.Errorf("Ready %v", c)
	}
	check := func(wantD, wantC string) {
		t.Helper()
		eventually(t, "the children to follow spec.regions", func() error {
			d := strings.Join(forEachNames(t, h.ns, "onReconcile.deployments.0", &appsv1.DeploymentList{}), " ")
			c := strings.Join(forEachNames(t, h.ns, "onReconcile.configMaps.0", &corev1.ConfigMapList{}), " ")
			if d != wantD || c != wantC {
				return fmt.Errorf("deployments %q, configmaps %q", d, c)
			}
			return nil
		})
	}
	check("shop-eu:1 shop-us:2", "shop-eu-config:eu shop-us-config:us")
	var eu appsv1.Deployment
	mustGet(t, h.ns, "shop-eu", &eu)

	updateWidget(t, h.ns, "shop", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedSlice(u.Object, regions("eu", "ap", "sa"), "spec", "regions")
	})
	check("shop-ap:2 shop-eu:1 shop-sa:3", "shop-ap-config:ap shop-eu-config:eu shop-sa-config:sa shop-us-config:us")
	updateWidget(t, h.ns, "shop", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedSlice(u.Object, regions("eu"), "spec", "regions")
	})
	check("shop-eu:1", "shop-ap-config:ap shop-eu-config:eu shop-sa-config:sa shop-us-config:us")
	var still appsv1.Deployment
	mustGet(t, h.ns, "shop-eu", &still)
	if still.UID != eu.UID {
		t.Error("the child of an item that stayed was recreated")
	}
	eventually(t, "a Deleted event naming the items gone", func() error {
		var evs eventsv1.EventList
		if err := k8s.List(t.Context(), &evs, client.InNamespace(h.ns)); err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Reason == "Deleted" && strings.Contains(e.Note, "Deployment "+h.ns+"/shop-ap: its item of spec.regions is gone (operatorBox.onReconcile.deployments[0].prune: true)") {
				return nil
			}
		}
		return fmt.Errorf("no such event among %d", len(evs.Items))
	})
}

package operator

import (
	"fmt"
	"slices"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/operator/render"
)

// Several iterators make one child per combination (kro's collections:
// website/docs/docs/concepts/rgd/02-resource-definitions/04-collections.md):
// growing either list adds combinations, shrinking one removes them (prune),
// the others are left as they are.
func TestForEachProductGrowsAndShrinks(t *testing.T) {
	h := startOperator(t, widgetPlan(t, `
onReconcile:
  configMaps:
    - name: "${self.metadata.name}-${region.name}-${tier}"
      data: {region: "${region.name}", tier: "${tier}", index: "${string(index)}"}
      forEach:
        - region: spec.regions
        - {field: spec.tiers, as: tier}
      prune: true
`))
	tiers := func(ts ...string) []any {
		out := make([]any, len(ts))
		for i, s := range ts {
			out[i] = s
		}
		return out
	}
	create(t, widget(h.ns, "shop", map[string]any{"regions": regions("eu", "us"), "tiers": tiers("web", "api")}))
	decl := "onReconcile.configMaps.0"
	combinations := func() ([]string, map[string]string) {
		var l corev1.ConfigMapList
		if err := k8s.List(t.Context(), &l, client.InNamespace(h.ns), client.MatchingLabels{render.LabelDeclaration: decl}); err != nil {
			t.Fatal(err)
		}
		var out []string
		uids := map[string]string{}
		for _, c := range l.Items {
			if c.DeletionTimestamp == nil {
				out = append(out, c.Name+":"+c.Data["region"]+"/"+c.Data["tier"]+"#"+c.Data["index"])
				uids[c.Name] = string(c.UID)
			}
		}
		sort.Strings(out)
		return out, uids
	}
	want := func(w ...string) map[string]string {
		t.Helper()
		var uids map[string]string
		eventually(t, "the combinations", func() error {
			var got []string
			got, uids = combinations()
			if !slices.Equal(got, w) {
				return fmt.Errorf("children %v, want %v", got, w)
			}
			return nil
		})
		return uids
	}
	// First iterator outermost: index counts eu-web, eu-api, us-web, us-api.
	before := want("shop-eu-api:eu/api#1", "shop-eu-web:eu/web#0", "shop-us-api:us/api#3", "shop-us-web:us/web#2")

	updateWidget(t, h.ns, "shop", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedSlice(u.Object, tiers("web", "api", "db"), "spec", "tiers")
	})
	grown := want("shop-eu-api:eu/api#1", "shop-eu-db:eu/db#2", "shop-eu-web:eu/web#0", "shop-us-api:us/api#4", "shop-us-db:us/db#5", "shop-us-web:us/web#3")
	if grown["shop-eu-web"] != before["shop-eu-web"] {
		t.Error("a combination that stayed was made again")
	}

	updateWidget(t, h.ns, "shop", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedSlice(u.Object, regions("us"), "spec", "regions")
		_ = unstructured.SetNestedSlice(u.Object, tiers("db"), "spec", "tiers")
	})
	shrunk := want("shop-us-db:us/db#0")
	if shrunk["shop-us-db"] != grown["shop-us-db"] {
		t.Error("a combination that stayed was made again")
	}
	readyAs(t, h.ns, "shop", "True", ReasonSucceeded, "1 children applied")
}

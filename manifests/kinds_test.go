package manifests

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/operator/render"
)

// kindSamples give every field some kind requires a value, so that one
// child of each kind can be declared.
var kindSamples = map[string]string{
	"image":          "nginx:1",
	"schedule":       `"*/5 * * * *"`,
	"serviceName":    "web",
	"storage":        "1Gi",
	"capacity":       "1Gi",
	"apiVersion":     "example.io/v1",
	"kind":           "Thing",
	"roleRef":        "{name: r}",
	"scaleTargetRef": "{name: web}",
	"maxReplicas":    "3",
}

// Every kind of the table gets its RBAC derived: the install may get,
// list, watch, create and (drift-corrected) update objects of each, and
// the grants of the kinds that need more (escalate for roles, bind for
// bindings). A kind added to the table without a sample here fails.
func TestRulesCoverEveryKind(t *testing.T) {
	var keys []string
	for k := range katalog.ResourceKinds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var box strings.Builder
	box.WriteString("onReconcile:\n")
	for _, key := range keys {
		spec := katalog.ResourceKinds[key]
		fmt.Fprintf(&box, "  %s:\n    - name: \"${self.metadata.name}-%s\"\n", key, strings.ToLower(key))
		for _, req := range spec.Required {
			v, ok := kindSamples[req]
			if !ok {
				t.Fatalf("%s requires %q, which has no sample in kindSamples", key, req)
			}
			fmt.Fprintf(&box, "      %s: %s\n", req, v)
		}
		if key == "persistentVolumes" {
			box.WriteString("      hostPath: /data\n")
		}
	}
	plan := compile(t, writeKatalog(t, box.String()))
	a := Rules(plan)
	verbs := map[schema.GroupResource]string{}
	for _, r := range a.Cluster {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				gr := schema.GroupResource{Group: g, Resource: res}
				verbs[gr] = strings.Trim(verbs[gr]+","+strings.Join(r.Verbs, ","), ",")
			}
		}
	}
	for _, key := range keys {
		spec := katalog.ResourceKinds[key]
		gvk := schema.FromAPIVersionAndKind(spec.APIVersion, spec.Kind)
		if spec.Open {
			gvk = schema.FromAPIVersionAndKind("example.io/v1", "Thing")
		}
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		got := verbs[plural.GroupResource()]
		want := []string{"get", "list", "watch", "create"}
		if render.KindOf(key).Lifecycle == render.UpdateInPlace {
			want = append(want, "update")
		}
		for _, v := range want {
			if !strings.Contains(","+got+",", ","+v+",") {
				t.Errorf("%s (%s): verbs %q, missing %s", key, plural.GroupResource(), got, v)
			}
		}
	}
	rbac := func(res string) string {
		return verbs[schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: res}]
	}
	if !strings.Contains(rbac("roles"), "escalate") || !strings.Contains(rbac("clusterroles"), "escalate") {
		t.Errorf("roles %q, clusterroles %q: want escalate to write their rules", rbac("roles"), rbac("clusterroles"))
	}
	if !strings.Contains(rbac("roles"), "bind") || !strings.Contains(rbac("clusterroles"), "bind") {
		t.Errorf("roles %q, clusterroles %q: want bind for the bindings", rbac("roles"), rbac("clusterroles"))
	}
}

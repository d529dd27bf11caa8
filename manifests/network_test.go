package manifests_test

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/orkestra-cel/manifests"
)

func object(t *testing.T, us []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, u := range us {
		if u.GetKind() == kind && (name == "" || u.GetName() == name) {
			return u
		}
	}
	t.Fatalf("no %s %s", kind, name)
	return nil
}

// Issue 15 item 6: the install admitted any pod to any port. A
// NetworkPolicy admits the webhook and metrics ports only.
func TestNetworkPolicy(t *testing.T) {
	plan := websitePlan(t)
	_, us := generate(t, plan, manifests.Options{})
	np := object(t, us, "NetworkPolicy", "orkestra")
	spec := np.Object["spec"].(map[string]any)
	wantIngress := []any{map[string]any{"ports": []any{
		map[string]any{"port": "webhook", "protocol": "TCP"},
		map[string]any{"port": "http", "protocol": "TCP"},
	}}}
	if !reflect.DeepEqual(spec["ingress"], wantIngress) || !reflect.DeepEqual(spec["policyTypes"], []any{"Ingress"}) {
		t.Errorf("NetworkPolicy spec %v", spec)
	}
	if sel := spec["podSelector"].(map[string]any)["matchLabels"]; !reflect.DeepEqual(sel, map[string]any{"app.kubernetes.io/instance": "orkestra", "app.kubernetes.io/name": "orkestra"}) {
		t.Errorf("podSelector %v", sel)
	}
}

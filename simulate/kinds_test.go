package simulate

import (
	"context"
	"testing"

	"github.com/orkspace/orkestra-cel/katalog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Every built-in kind a katalog declares is created and re-applied by
// server-side apply in the in-memory cluster, as the operator writes it.
func TestEveryKindAppliesInMemory(t *testing.T) {
	c := memoryCluster(nil, nil)
	for key, spec := range katalog.ResourceKinds {
		if spec.Open {
			continue
		}
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetAPIVersion(spec.APIVersion)
		u.SetKind(spec.Kind)
		u.SetName("x")
		if !spec.ClusterScoped {
			u.SetNamespace("default")
		}
		u.SetLabels(map[string]string{"a": "b"})
		for i := 0; i < 2; i++ {
			if err := c.client.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(u.DeepCopy()), client.FieldOwner("orkestra"), client.ForceOwnership); err != nil {
				t.Errorf("%s (%s): apply %d: %v", key, spec.Kind, i+1, err)
			}
		}
	}
}

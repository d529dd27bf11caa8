package simulate

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// statusless types objects of kinds whose schema declares no status.
// controller-runtime's fake client still lists NetworkPolicy among the
// kinds with a status subresource (Kubernetes removed it in 1.27) and adds
// a null status to what it applies; the schema then refuses the object,
// the deduced converter types it instead, and merging values typed by two
// schemas fails ("expected objects with types from the same schema"). The
// API server serves no such field, so it is dropped and the object typed
// again.
type statusless struct{ managedfields.TypeConverter }

func (s statusless) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	tv, err := s.TypeConverter.ObjectToTyped(obj, opts...)
	if err == nil {
		return tv, nil
	}
	u, cerr := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if cerr != nil {
		return nil, err
	}
	status, ok := u["status"]
	if m, isMap := status.(map[string]any); !ok || (status != nil && (!isMap || len(m) > 0)) {
		return nil, err
	}
	delete(u, "status")
	if tv, err2 := s.TypeConverter.ObjectToTyped(&unstructured.Unstructured{Object: u}, opts...); err2 == nil {
		return tv, nil
	}
	return nil, err
}

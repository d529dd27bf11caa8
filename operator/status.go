package operator

import (
	"context"
	"encoding/json"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// writeStatus sets the status fields, observedGeneration and the Ready
// condition on a copy of cr (cr may be the cache's object) and writes them —
// through the status subresource when the CRD version has one — only when
// they differ from what is stored. What the status schema cannot hold (a CRD
// without conditions in its status) is left out, as the API server would
// prune it. Conditions from the katalog (extra) are set beside Ready, each
// following Kubernetes' conventions as Ready does: lastTransitionTime moves
// only when the status changes, observedGeneration is the custom resource's
// generation.
func (e *entryController) writeStatus(ctx context.Context, cr *unstructured.Unstructured, fields map[string]any, ready metav1.Condition, extra ...metav1.Condition) error {
	statusSchema := e.statusSchema()
	if statusSchema == nil {
		return nil
	}
	cur, _ := cr.Object["status"].(map[string]any)
	next := map[string]any{}
	if cur != nil {
		next = runtime.DeepCopyJSONValue(cur).(map[string]any)
	}
	mergeInto(next, fields)
	next["observedGeneration"] = cr.GetGeneration()
	conds := readConditions(next["conditions"])
	now := metav1.NewTime(e.op.opts.Now().UTC().Truncate(1e9))
	for _, c := range append([]metav1.Condition{ready}, extra...) {
		c.ObservedGeneration, c.LastTransitionTime = cr.GetGeneration(), now
		meta.SetStatusCondition(&conds, c)
	}
	next["conditions"] = writeConditions(conds)
	pruning.Prune(next, statusSchema, false)
	if jsonval.Equal(cur, next) {
		return nil
	}
	w := cr.DeepCopy()
	w.Object["status"] = next
	if e.hasStatusSubresource() {
		return e.client.Status().Patch(ctx, w, client.MergeFrom(cr))
	}
	return e.client.Patch(ctx, w, client.MergeFrom(cr))
}

func (e *entryController) statusSchema() *structuralschema.Structural {
	if e.entry.Schema == nil {
		return nil
	}
	s, ok := e.entry.Schema.Properties["status"]
	if !ok {
		if e.entry.Schema.XPreserveUnknownFields {
			// An untyped entry: write the status and let the API server
			// prune what its CRD does not hold.
			return &structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Extensions: structuralschema.Extensions{XPreserveUnknownFields: true}}
		}
		return nil
	}
	return &s
}

func (e *entryController) hasStatusSubresource() bool {
	src := e.entry.Source
	if src == nil || src.CRD == nil || src.CRD.Object == nil {
		return true
	}
	for _, v := range src.CRD.Object.Spec.Versions {
		if v.Name == e.entry.GVK.Version {
			return v.Subresources != nil && v.Subresources.Status != nil
		}
	}
	return true
}

// mergeInto sets every leaf of src into dst, merging nested objects; a nil
// leaf (a field cleared by clearOnFalse) removes it.
func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		if v == nil {
			delete(dst, k)
			continue
		}
		if sm, ok := v.(map[string]any); ok {
			dm, ok := dst[k].(map[string]any)
			if !ok {
				dm = map[string]any{}
				dst[k] = dm
			}
			mergeInto(dm, sm)
			continue
		}
		nv, err := jsonNormalize(v)
		if err != nil {
			dst[k] = v
			continue
		}
		dst[k] = nv
	}
}

func jsonNormalize(v any) (any, error) {
	switch v.(type) {
	case nil, string, int64, float64, bool:
		return v, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := utiljson.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func readConditions(v any) []metav1.Condition {
	list, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]metav1.Condition, 0, len(list))
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		var c metav1.Condition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c); err != nil {
			continue
		}
		out = append(out, c)
	}
	return out
}

func writeConditions(conds []metav1.Condition) []any {
	out := make([]any, 0, len(conds))
	for i := range conds {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&conds[i])
		if err != nil {
			continue
		}
		out = append(out, m)
	}
	return out
}

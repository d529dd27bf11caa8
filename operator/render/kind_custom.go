package render

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// custom: any apiVersion and kind, written as the whole object.

func init() {
	register("custom", &Kind{Build: buildCustom, Drift: driftCustom})
}

// customIdentity are the fields of a custom declaration that are not copied
// into the object as they stand: metadata is built from them.
var customIdentity = map[string]bool{"name": true, "namespace": true, "labels": true, "annotations": true, "metadata": true, "status": true}

// buildCustom builds a whole manifest: apiVersion, kind, the declared metadata
// and every other top-level field as evaluated. status is not part of the
// object: it is written through the status subresource (see Child.Status).
func buildCustom(b *builder) (client.Object, error) {
	obj := map[string]any{}
	for k, v := range b.c.Fields {
		if customIdentity[k] {
			continue
		}
		n, err := jsonValue(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.f.path(k), err)
		}
		obj[k] = n
	}
	u := &unstructured.Unstructured{Object: obj}
	if md, ok := b.c.Fields["metadata"]; ok && md != nil {
		m, ok := md.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: expects an object, got %s", b.f.path("metadata"), describe(md))
		}
		n, err := jsonValue(m)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.f.path("metadata"), err)
		}
		obj["metadata"] = n
	}
	meta := b.meta()
	// metadata.labels and metadata.annotations written inside metadata:
	// merge under the top-level ones.
	labels := mergeStrings(u.GetLabels(), meta.Labels)
	annotations := mergeStrings(u.GetAnnotations(), meta.Annotations)
	u.SetName(meta.Name)
	u.SetNamespace(meta.Namespace)
	u.SetLabels(labels)
	if len(annotations) > 0 {
		u.SetAnnotations(annotations)
	}
	if len(meta.OwnerReferences) > 0 {
		u.SetOwnerReferences(meta.OwnerReferences)
	}
	u.SetAPIVersion(b.c.GVK.GroupVersion().String())
	u.SetKind(b.c.GVK.Kind)
	if st, ok := b.c.Fields["status"]; ok && st != nil && b.c.Resource.Source.WritesStatus() {
		s, err := jsonValue(st)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.f.path("status"), err)
		}
		sm, ok := s.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: expects an object, got %s", b.f.path("status"), describe(st))
		}
		b.c.Status = sm
	}
	return u, nil
}

func mergeStrings(base, over map[string]string) map[string]string {
	if len(base) == 0 && len(over) == 0 {
		return nil
	}
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// driftCustom compares every top-level field of a custom manifest (besides
// apiVersion, kind, metadata and status) as a subset; differing fields are
// merged into the live object.
func driftCustom(d *Drift, _ Managed, want, live client.Object) {
	w, g := want.(*unstructured.Unstructured), live.(*unstructured.Unstructured)
	for k, wv := range w.Object {
		switch k {
		case "apiVersion", "kind", "metadata", "status":
			continue
		}
		if !subsetPlain(wv, g.Object[k]) {
			g.Object[k] = mergePlain(g.Object[k], wv)
			d.add(k)
		}
	}
}

package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// openWatches watches sel at every version, before anything is written.
func (vr *versionRun) openWatches(ctx context.Context, sel string) map[string]*watcher {
	watchers := map[string]*watcher{}
	for _, b := range vr.ci.versions {
		w, err := vr.res(vr.ci, b).Watch(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			vr.readCheck(b).failf("WATCH at %s: %v", b, err)
			continue
		}
		watchers[b] = newWatcher(w)
	}
	return watchers
}

// createStep creates objs through v and checks each response, its read
// back through v and what is stored; it returns the names created, sorted.
func (vr *versionRun) createStep(ctx context.Context, objs []map[string]any) []string {
	a, ci, v := vr.apiRun, vr.ci, vr.v
	var names []string
	for _, o := range objs {
		name := nestedString(o, "metadata", "name")
		got, err := a.res(ci, v).Create(ctx, u(o), metav1.CreateOptions{FieldValidation: "Strict"})
		if err != nil {
			vr.write.fail(Failure{Object: o, Message: fmt.Sprintf("CREATE %s via %s: %v", name, v, err)})
			continue
		}
		names = append(names, name)
		// The API server handles a request at its version: with a status
		// subresource, CREATE drops status; then the object converts to
		// the storage version.
		in := deepCopyMap(o)
		if ci.statusSub(v) {
			delete(in, "status")
		}
		want, err := a.model(ci, in, ci.storage)
		if err != nil {
			vr.write.fail(Failure{Object: o, Message: fmt.Sprintf("the offline converter fails on %s: %v", name, err)})
			continue
		}
		if exp, err := a.model(ci, want, v); err == nil {
			if ds := sameAs(got.Object, exp); len(ds) > 0 {
				vr.write.fail(Failure{Object: o, Field: ds[0].path, Message: fmt.Sprintf("CREATE %s via %s: the response differs from the offline conversion: %s", name, v, describeDiffs(ds))})
			} else {
				vr.write.pass()
			}
		}
		// Through the server, what is written via v reads back the same
		// via v (the round-trip annotation aside).
		sent := settle(deepCopyMap(o), ci.schemas[v])
		back := deepCopyMap(got.Object)
		if ci.statusSub(v) {
			delete(sent, "status")
		}
		if ds := sameAs(withoutStash(back), withoutStash(sent)); len(ds) > 0 {
			vr.write.fail(Failure{Object: o, Field: ds[0].path, Message: fmt.Sprintf("CREATE %s via %s (stored at %s) does not read back the same via %s: %s", name, v, ci.storage, v, describeDiffs(ds))})
		} else {
			vr.write.pass()
		}
		vr.expectStored(ctx, "CREATE via "+v, name, o, want)
	}
	sort.Strings(names)
	return names
}

// specOf returns the spec of the i-th object, or of the next one that has a
// spec (nil when none has).
func specOf(objs []map[string]any, i int) any {
	for k := range objs {
		if sp, ok := objs[(i+k)%len(objs)]["spec"]; ok && sp != nil {
			return sp
		}
	}
	return nil
}

// updateStep updates name through v with another spec and an annotation.
func (vr *versionRun) updateStep(ctx context.Context, name string, spec any) {
	cur, err := vr.res(vr.ci, vr.v).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		vr.write.failf("GET %s at %s: %v", name, vr.v, err)
		return
	}
	upd := deepCopyMap(cur.Object)
	setSpec(upd, spec)
	setNested(upd, vr.v, "metadata", "annotations", AnnotationUpdated)
	got, err := vr.res(vr.ci, vr.v).Update(ctx, u(upd), metav1.UpdateOptions{FieldValidation: "Strict"})
	if err != nil {
		vr.write.fail(Failure{Object: upd, Message: fmt.Sprintf("UPDATE %s via %s: %v", name, vr.v, err)})
		return
	}
	vr.afterWrite(ctx, "UPDATE via "+vr.v, name, upd, got.Object, cur.Object)
}

// patchStep patches name through v: a JSON patch replacing spec, then a
// merge patch of labels and annotations.
func (vr *versionRun) patchStep(ctx context.Context, name string, spec any) {
	a, ci, v := vr.apiRun, vr.ci, vr.v
	cur, err := a.res(ci, v).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		vr.write.failf("GET %s at %s: %v", name, v, err)
		return
	}
	ops := []map[string]any{}
	_, hasSpec := cur.Object["spec"]
	switch {
	case spec != nil && hasSpec:
		ops = append(ops, map[string]any{"op": "replace", "path": "/spec", "value": spec})
	case spec != nil:
		ops = append(ops, map[string]any{"op": "add", "path": "/spec", "value": spec})
	case hasSpec:
		ops = append(ops, map[string]any{"op": "remove", "path": "/spec"})
	}
	jp, _ := json.Marshal(ops)
	patched := deepCopyMap(cur.Object)
	setSpec(patched, spec)
	got, err := a.res(ci, v).Patch(ctx, name, types.JSONPatchType, jp, metav1.PatchOptions{FieldValidation: "Strict"})
	if err != nil {
		vr.write.fail(Failure{Object: patched, Message: fmt.Sprintf("PATCH (json) %s via %s: %v", name, v, err)})
	} else {
		vr.afterWrite(ctx, "PATCH (json) via "+v, name, patched, got.Object, cur.Object)
	}
	if cur, err = a.res(ci, v).Get(ctx, name, metav1.GetOptions{}); err != nil {
		return
	}
	mp, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"labels":      map[string]any{AnnotationPatched: v},
		"annotations": map[string]any{AnnotationPatched: v},
	}})
	patched = deepCopyMap(cur.Object)
	setNested(patched, v, "metadata", "labels", AnnotationPatched)
	setNested(patched, v, "metadata", "annotations", AnnotationPatched)
	got, err = a.res(ci, v).Patch(ctx, name, types.MergePatchType, mp, metav1.PatchOptions{FieldValidation: "Strict"})
	if err != nil {
		vr.write.fail(Failure{Object: patched, Message: fmt.Sprintf("PATCH (merge) %s via %s: %v", name, v, err)})
		return
	}
	vr.afterWrite(ctx, "PATCH (merge) via "+v, name, patched, got.Object, cur.Object)
}

// metadataStep checks that labels and annotations written through v are
// seen through every version.
func (vr *versionRun) metadataStep(ctx context.Context, name string) {
	v, meta := vr.v, vr.meta
	for _, b := range vr.ci.versions {
		got, err := vr.res(vr.ci, b).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			meta.failf("GET %s at %s: %v", name, b, err)
			continue
		}
		labels, annots := got.GetLabels(), got.GetAnnotations()
		switch {
		case labels[LabelWritten] != v:
			meta.fail(Failure{Field: join("metadata.labels", LabelWritten), Message: fmt.Sprintf("label %s=%s set at CREATE via %s reads %q at %s", LabelWritten, v, v, labels[LabelWritten], b)})
		case labels[AnnotationPatched] != v:
			meta.fail(Failure{Field: join("metadata.labels", AnnotationPatched), Message: fmt.Sprintf("label %s=%s set by PATCH via %s reads %q at %s", AnnotationPatched, v, v, labels[AnnotationPatched], b)})
		case annots[AnnotationPatched] != v || annots[AnnotationUpdated] != v:
			meta.fail(fieldFailure(join("metadata.annotations", AnnotationPatched), "annotations %s and %s set via %s read %q and %q at %s", AnnotationUpdated, AnnotationPatched, v, annots[AnnotationUpdated], annots[AnnotationPatched], b))
		default:
			meta.pass()
		}
	}
	meta.Note = fmt.Sprintf("written via %s, read via %d versions", v, len(vr.ci.versions))
}

// deleteStep deletes name through v: gone at every version.
func (vr *versionRun) deleteStep(ctx context.Context, name string) {
	if err := vr.res(vr.ci, vr.v).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		vr.write.failf("DELETE %s via %s: %v", name, vr.v, err)
		return
	}
	for _, b := range vr.ci.versions {
		_, err := vr.res(vr.ci, b).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			vr.readCheck(b).pass()
		} else {
			vr.readCheck(b).failf("after DELETE via %s, GET %s at %s: %v (want NotFound)", vr.v, name, b, err)
		}
	}
}

// deleteCollectionStep deletes what sel selects through v: nothing left at
// any version.
func (vr *versionRun) deleteCollectionStep(ctx context.Context, sel string) {
	if err := vr.res(vr.ci, vr.v).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: sel}); err != nil {
		vr.write.failf("DELETECOLLECTION via %s: %v", vr.v, err)
		return
	}
	for _, b := range vr.ci.versions {
		l, err := vr.res(vr.ci, b).List(ctx, metav1.ListOptions{LabelSelector: sel})
		switch {
		case err != nil:
			vr.readCheck(b).failf("LIST at %s after DELETECOLLECTION: %v", b, err)
		case len(l.Items) != 0:
			vr.readCheck(b).failf("LIST at %s after DELETECOLLECTION via %s: %d objects left", b, vr.v, len(l.Items))
		default:
			vr.readCheck(b).pass()
		}
	}
}

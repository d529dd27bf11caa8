package conformance

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/orkestra-cel/engine/conversion"
	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// statusCheck writes status through v's /status and checks it at every
// version; an UPDATE of the main resource must leave status alone.
func (vr *versionRun) statusCheck(ctx context.Context, c *checker, name string) {
	ci, v := vr.ci, vr.v
	var status any = map[string]any{}
	for _, o := range ci.objects[v] {
		if st, ok := o["status"].(map[string]any); ok && len(st) > 0 {
			status = st
			break
		}
	}
	cur, err := vr.res(ci, v).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		c.failf("GET %s at %s: %v", name, v, err)
		return
	}
	sent := deepCopyMap(cur.Object)
	sent["status"] = runtimeCopy(status)
	got, err := vr.res(ci, v).UpdateStatus(ctx, u(sent), metav1.UpdateOptions{FieldValidation: "Strict"})
	if err != nil {
		c.fail(Failure{Object: sent, Message: fmt.Sprintf("UPDATE %s/status via %s: %v", name, v, err)})
		return
	}
	// The API server takes the object it holds at v, sets the status
	// written, and converts the whole to the storage version.
	want, err := vr.model(ci, sent, ci.storage)
	if err != nil {
		c.fail(Failure{Object: sent, Message: fmt.Sprintf("the offline converter fails on the status write: %v", err)})
		return
	}
	exp, _ := vr.model(ci, want, v)
	if ds := sameAs(got.Object, exp); len(ds) > 0 {
		c.fail(Failure{Object: sent, Field: ds[0].path, Message: fmt.Sprintf("UPDATE %s/status via %s: the response differs from the offline conversion: %s", name, v, describeDiffs(ds))})
	} else {
		c.pass()
	}
	// What was written comes back, and spec is untouched.
	settled := settle(deepCopyMap(sent), ci.schemas[v])
	var ds []difference
	diffAt(&ds, "status", got.Object["status"], settled["status"], hasKey(got.Object, "status"), hasKey(settled, "status"))
	if len(ds) > 0 {
		c.fail(Failure{Object: sent, Field: ds[0].path, Message: fmt.Sprintf("status written via %s/status reads back differently at %s (stored at %s): %s", v, v, ci.storage, describeDiffs(ds))})
	} else {
		c.pass()
	}
	ds = nil
	diffAt(&ds, "spec", got.Object["spec"], cur.Object["spec"], hasKey(got.Object, "spec"), hasKey(cur.Object, "spec"))
	if len(ds) > 0 {
		c.fail(Failure{Object: sent, Field: ds[0].path, Message: "a /status write changed spec: " + describeDiffs(ds)})
	} else {
		c.pass()
	}
	gotS := vr.expectStored(ctx, "UPDATE /status via "+v, name, sent, want)
	if gotS == nil {
		return
	}
	// An UPDATE of the main resource ignores status.
	cur2, err := vr.res(ci, v).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		c.failf("GET %s at %s: %v", name, v, err)
		return
	}
	upd := deepCopyMap(cur2.Object)
	upd["status"] = map[string]any{}
	if _, err := vr.res(ci, v).Update(ctx, u(upd), metav1.UpdateOptions{}); err != nil {
		c.failf("UPDATE %s via %s: %v", name, v, err)
		return
	}
	after, err := vr.storedNow(ctx, name)
	if err != nil {
		c.failf("GET %s at %s: %v", name, ci.storage, err)
		return
	}
	ds = nil
	diffAt(&ds, "status", after["status"], gotS["status"], hasKey(after, "status"), hasKey(gotS, "status"))
	if len(ds) > 0 {
		c.fail(Failure{Object: upd, Field: ds[0].path, Message: fmt.Sprintf("an UPDATE of the main resource via %s changed status: %s", v, describeDiffs(ds))})
	} else {
		c.pass()
	}
	c.Note = fmt.Sprintf("status written via %s/status, read via %d versions", v, len(ci.versions))
}

func hasKey(m map[string]any, k string) bool { _, ok := m[k]; return ok }

// withoutStash drops the round-trip annotation (and annotations, when it
// was the only one).
func withoutStash(obj map[string]any) map[string]any {
	meta, _ := obj["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	if _, ok := ann[conversion.StashAnnotation]; !ok {
		return obj
	}
	delete(ann, conversion.StashAnnotation)
	if len(ann) == 0 {
		delete(meta, "annotations")
	}
	return obj
}

// scaleCheck reads the scale subresource at v and compares its replicas
// with the object's.
func (vr *versionRun) scaleCheck(ctx context.Context, c *checker, name string) {
	ci, v := vr.ci, vr.v
	path, _ := ci.scaleSpecPath(v)
	obj, err := vr.res(ci, v).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		c.failf("GET %s at %s: %v", name, v, err)
		return
	}
	sc, err := vr.res(ci, v).Get(ctx, name, metav1.GetOptions{}, "scale")
	if err != nil {
		c.failf("GET %s/scale via %s: %v", name, v, err)
		return
	}
	var want int64
	var cur any = obj.Object
	for _, k := range splitJSONPath(path) {
		m, _ := cur.(map[string]any)
		cur = m[k]
	}
	if n, ok := jsonval.Number(cur); ok {
		want = int64(n)
	}
	got, _, _ := unstructured.NestedInt64(sc.Object, "spec", "replicas")
	if got != want {
		c.fail(fieldFailure(path, "%s/scale via %s: spec.replicas is %d, the object's %s is %d", name, v, got, path, want))
		return
	}
	c.pass()
	c.Note = fmt.Sprintf("replicas from %s", path)
}

func splitJSONPath(p string) []string {
	var out []string
	cur := ""
	for _, r := range p {
		if r == '.' {
			if cur != "" {
				out = append(out, cur)
			}
			cur = ""
			continue
		}
		cur += string(r)
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

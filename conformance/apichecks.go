package conformance

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// Annotations the apiserver checks write.
const (
	AnnotationUpdated = "conformance.orkestra.io/updated-through"
	AnnotationPatched = "conformance.orkestra.io/patched-through"
)

const opTimeout = 30 * time.Second

func u(obj map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: deepCopyMap(obj)}
}

// statusSub and scaleSub tell whether version v has the subresource.
func (ci *crdInfo) statusSub(v string) bool {
	vs := ci.versionSpec(v)
	return vs != nil && vs.Subresources != nil && vs.Subresources.Status != nil
}

func (ci *crdInfo) scaleSpecPath(v string) (string, bool) {
	vs := ci.versionSpec(v)
	if vs == nil || vs.Subresources == nil || vs.Subresources.Scale == nil {
		return "", false
	}
	return vs.Subresources.Scale.SpecReplicasPath, true
}

// model is what the offline converter says the API server holds: obj
// (at its version) settled, then converted through versions in turn.
func (a *apiRun) model(ci *crdInfo, obj map[string]any, versions ...string) (map[string]any, error) {
	return a.through(ci, obj, append([]string{versionOf(obj)}, versions...)...)
}

// sameAs compares an object the API server returned with the expected one,
// ignoring the metadata the server sets.
func sameAs(got, want map[string]any) []difference {
	return diff(withoutServerMetadata(got), withoutServerMetadata(want))
}

// writeObjects are the objects written through version v in a round: the
// samples at v and APIServerCount generated ones.
func (a *apiRun) writeObjects(ci *crdInfo, v, group string, labels map[string]string) []map[string]any {
	gen := ci.pool[v]
	src := append([]map[string]any(nil), ci.samples[v]...)
	if f := ci.failing[v]; len(f) > 0 {
		src = append(src, f[0]) // what failed offline, to show it here too
	}
	if len(gen) > a.opts.APIServerCount {
		gen = gen[:a.opts.APIServerCount]
	}
	src = append(src, gen...)
	if len(src) == 0 && len(ci.pool[v]) > 0 {
		src = ci.pool[v][:1]
	}
	out := make([]map[string]any, len(src))
	for i, o := range src {
		out[i] = deepCopyMap(o)
		a.prepare(out[i], fmt.Sprintf("%s-%d", group, i), labels)
	}
	return out
}

// watcher collects the events of one watch.
type watcher struct {
	w      watch.Interface
	mu     sync.Mutex
	events []watch.Event
	done   chan struct{}
}

func newWatcher(w watch.Interface) *watcher {
	wt := &watcher{w: w, done: make(chan struct{})}
	go func() {
		defer close(wt.done)
		for ev := range w.ResultChan() {
			wt.mu.Lock()
			wt.events = append(wt.events, ev)
			wt.mu.Unlock()
		}
	}()
	return wt
}

func (wt *watcher) snapshot() []watch.Event {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	return append([]watch.Event(nil), wt.events...)
}

// waitFor waits until an event satisfies f (or the timeout), stops the
// watch and returns the events received until then.
func (wt *watcher) waitFor(ctx context.Context, f func(watch.Event) bool) []watch.Event {
	var events []watch.Event
	_ = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 15*time.Second, true, func(context.Context) (bool, error) {
		events = wt.snapshot()
		for _, ev := range events {
			if f(ev) {
				return true, nil
			}
		}
		return false, nil
	})
	wt.w.Stop()
	<-wt.done
	return events
}

// versionRun is one version's checks in one round.
type versionRun struct {
	*apiRun
	ci    *crdInfo
	v     string
	tag   string
	write *checker
	reads map[string]*checker // by version read at (v itself: write)
	// meta checks labels and annotations; status and scale their
	// subresources (nil where v does not serve them).
	meta, status, scale *checker
	// stored holds, by resourceVersion, the object as stored, for watch
	// events.
	stored map[string]map[string]any
}

func (vr *versionRun) readCheck(b string) *checker {
	if b == vr.v {
		return vr.write
	}
	return vr.reads[b]
}

// storedNow reads name at the storage version (the stored object, settled)
// and records it.
func (vr *versionRun) storedNow(ctx context.Context, name string) (map[string]any, error) {
	got, err := vr.res(vr.ci, vr.ci.storage).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	vr.stored[got.GetResourceVersion()] = got.Object
	return got.Object, nil
}

// expectStored checks the stored object against want, and every other
// version's view against the offline conversion of the stored object.
func (vr *versionRun) expectStored(ctx context.Context, what, name string, sent, want map[string]any) map[string]any {
	ci := vr.ci
	gotS, err := vr.storedNow(ctx, name)
	if err != nil {
		vr.write.fail(Failure{Object: sent, Message: fmt.Sprintf("%s: reading %s back at the storage version %s: %v", what, name, ci.storage, err)})
		return nil
	}
	if ds := sameAs(gotS, want); len(ds) > 0 {
		vr.write.fail(Failure{Object: sent, Field: ds[0].path, Message: fmt.Sprintf("%s: %s as stored (read at %s) differs from the offline conversion: %s", what, name, ci.storage, describeDiffs(ds))})
	} else {
		vr.write.pass()
	}
	for _, b := range ci.versions {
		if b == ci.storage {
			continue
		}
		c := vr.readCheck(b)
		got, err := vr.res(ci, b).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			c.fail(Failure{Object: sent, Message: fmt.Sprintf("%s: GET %s at %s: %v", what, name, b, err)})
			continue
		}
		exp, err := vr.model(ci, gotS, b)
		if err != nil {
			c.fail(Failure{Object: sent, Message: fmt.Sprintf("%s: the offline converter fails on the stored %s to %s: %v", what, name, b, err)})
			continue
		}
		if got.GetAPIVersion() != ci.gv(b) {
			c.fail(Failure{Object: sent, Field: "apiVersion", Message: fmt.Sprintf("%s: GET %s at %s returned apiVersion %s", what, name, b, got.GetAPIVersion())})
			continue
		}
		if ds := sameAs(got.Object, exp); len(ds) > 0 {
			c.fail(Failure{Object: sent, Field: ds[0].path, Message: fmt.Sprintf("%s: %s read at %s differs from the offline conversion of the stored object: %s", what, name, b, describeDiffs(ds))})
			continue
		}
		c.pass()
	}
	return gotS
}

// round runs one round's checks on one CRD.
func (a *apiRun) round(ctx context.Context, ci *crdInfo, round int, tag string) {
	for _, v := range ci.versions {
		if ctx.Err() != nil {
			return
		}
		a.versionChecks(ctx, ci, round, tag, v)
	}
	for _, v := range ci.versions {
		if v != ci.storage && ctx.Err() == nil {
			a.storageCheck(ctx, ci, round, tag, v)
		}
	}
}

// versionChecks writes objects through version v with every verb and reads
// them back at every version: one step per verb.
func (a *apiRun) versionChecks(ctx context.Context, ci *crdInfo, round int, tag, v string) {
	vr := a.beginVersion(ci, tag, v)
	defer vr.endChecks()

	group := fmt.Sprintf("r%d-%s", round, v)
	sel := LabelGroup + "=" + group
	objs := a.writeObjects(ci, v, group, map[string]string{LabelRound: fmt.Sprint(round), LabelWritten: v, LabelGroup: group})
	if len(objs) == 0 {
		vr.write.failf("no objects to write through %s", v)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()

	watchers := vr.openWatches(ctx, sel)
	names := vr.createStep(ctx, objs)
	if len(names) == 0 {
		for _, w := range watchers {
			w.w.Stop()
		}
		return
	}
	a.listCheck(ctx, vr, sel, names)
	first := names[0]
	vr.updateStep(ctx, first, specOf(objs, 1))
	vr.patchStep(ctx, first, specOf(objs, 2))
	vr.metadataStep(ctx, first)
	if vr.status != nil {
		vr.statusCheck(ctx, vr.status, first)
	}
	if vr.scale != nil {
		vr.scaleCheck(ctx, vr.scale, first)
	}
	vr.deleteStep(ctx, first)
	// Watch events at every version: converted, and as stored.
	for _, b := range ci.versions {
		if w := watchers[b]; w != nil {
			vr.watchCheck(ctx, w, b, first, len(names))
		}
	}
	vr.deleteCollectionStep(ctx, sel)
	vr.write.Note = fmt.Sprintf("%d objects: create, get, list, watch, update, patch, delete, deletecollection", len(objs))
	for b, c := range vr.reads {
		c.Note = fmt.Sprintf("%d objects written via %s read via %s: get, list, watch", len(objs), v, b)
	}
}

// beginVersion starts the checks of one version's run: writes, reads at
// every other version, metadata, and status and scale where served.
func (a *apiRun) beginVersion(ci *crdInfo, tag, v string) *versionRun {
	vr := &versionRun{apiRun: a, ci: ci, v: v, tag: tag, reads: map[string]*checker{}, stored: map[string]map[string]any{}}
	vr.write = a.begin(GroupAPIServer, fmt.Sprintf("%s write via %s %s", ci.name, v, tag))
	for _, b := range ci.versions {
		if b != v {
			vr.reads[b] = a.begin(GroupAPIServer, fmt.Sprintf("%s read %s→%s %s", ci.name, v, b, tag))
		}
	}
	vr.meta = a.begin(GroupAPIServer, fmt.Sprintf("%s labels/annotations via %s %s", ci.name, v, tag))
	if ci.statusSub(v) {
		vr.status = a.begin(GroupAPIServer, fmt.Sprintf("%s status via %s %s", ci.name, v, tag))
	}
	if _, ok := ci.scaleSpecPath(v); ok {
		vr.scale = a.begin(GroupAPIServer, fmt.Sprintf("%s scale via %s %s", ci.name, v, tag))
	}
	return vr
}

// endChecks ends every check beginVersion started.
func (vr *versionRun) endChecks() {
	vr.end(vr.write)
	for _, b := range vr.ci.versions {
		if b != vr.v {
			vr.end(vr.reads[b])
		}
	}
	vr.end(vr.meta)
	for _, c := range []*checker{vr.status, vr.scale} {
		if c != nil {
			vr.end(c)
		}
	}
}

// fieldFailure is a Failure at a field.
func fieldFailure(field, format string, args ...any) Failure {
	return Failure{Field: field, Message: fmt.Sprintf(format, args...)}
}

func setSpec(obj map[string]any, spec any) {
	if spec == nil {
		delete(obj, "spec")
		return
	}
	obj["spec"] = runtimeCopy(spec)
}

func runtimeCopy(v any) any {
	if m, ok := v.(map[string]any); ok {
		return deepCopyMap(m)
	}
	return normalizeCopy(v)
}

// latestRV returns the resourceVersion of the newest stored state of name.
func latestRV(stored map[string]map[string]any, name string) string {
	best, bestN := "", int64(-1)
	for rv, o := range stored {
		if nestedString(o, "metadata", "name") != name {
			continue
		}
		var n int64
		if _, err := fmt.Sscan(rv, &n); err == nil && n > bestN {
			best, bestN = rv, n
		}
	}
	return best
}

// afterWrite checks an UPDATE or PATCH: the response and the stored object
// against the offline conversion of what was sent — with the status it had
// (cur, read at the request's version) when the version has a status
// subresource.
func (vr *versionRun) afterWrite(ctx context.Context, what, name string, sent, resp, cur map[string]any) {
	ci := vr.ci
	in := deepCopyMap(sent)
	if ci.statusSub(vr.v) {
		if st, ok := cur["status"]; ok {
			in["status"] = runtimeCopy(st)
		} else {
			delete(in, "status")
		}
	}
	want, err := vr.model(ci, in, ci.storage)
	if err != nil {
		vr.write.fail(Failure{Object: sent, Message: fmt.Sprintf("%s: the offline converter fails: %v", what, err)})
		return
	}
	if exp, err := vr.model(ci, want, vr.v); err == nil {
		if ds := sameAs(resp, exp); len(ds) > 0 {
			vr.write.fail(Failure{Object: sent, Field: ds[0].path, Message: fmt.Sprintf("%s %s: the response differs from the offline conversion: %s", what, name, describeDiffs(ds))})
		} else {
			vr.write.pass()
		}
	}
	vr.expectStored(ctx, what, name, sent, want)
}

// listCheck lists at every version and compares each item with the
// offline conversion of the stored object.
func (a *apiRun) listCheck(ctx context.Context, vr *versionRun, sel string, names []string) {
	ci := vr.ci
	for _, b := range ci.versions {
		c := vr.readCheck(b)
		l, err := a.res(ci, b).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			c.failf("LIST at %s: %v", b, err)
			continue
		}
		if len(l.Items) != len(names) {
			c.failf("LIST at %s returned %d objects, want %d", b, len(l.Items), len(names))
			continue
		}
		bad := false
		for _, it := range l.Items {
			stored := vr.stored[latestRV(vr.stored, it.GetName())]
			if it.GetAPIVersion() != ci.gv(b) && it.GetAPIVersion() != "" {
				c.failf("LIST at %s: item %s has apiVersion %s", b, it.GetName(), it.GetAPIVersion())
				bad = true
				continue
			}
			it.SetAPIVersion(ci.gv(b))
			it.SetKind(ci.gk.Kind)
			exp, err := a.model(ci, stored, b)
			if err != nil {
				c.failf("LIST at %s: the offline converter fails on %s: %v", b, it.GetName(), err)
				bad = true
				continue
			}
			if ds := sameAs(it.Object, exp); len(ds) > 0 {
				c.fail(Failure{Object: stored, Field: ds[0].path, Message: fmt.Sprintf("LIST at %s: item %s differs from the offline conversion of the stored object: %s", b, it.GetName(), describeDiffs(ds))})
				bad = true
			}
		}
		if !bad {
			c.pass()
		}
	}
}

// watchCheck checks the events a watch at version b received: ADDED for
// every object, MODIFIED and DELETED for the first, each object at b and
// equal to the offline conversion of the state stored at its
// resourceVersion.
func (vr *versionRun) watchCheck(ctx context.Context, w *watcher, b, first string, n int) {
	c := vr.readCheck(b)
	events := w.waitFor(ctx, func(ev watch.Event) bool {
		o, ok := ev.Object.(*unstructured.Unstructured)
		return ok && ev.Type == watch.Deleted && o.GetName() == first
	})
	added := map[string]bool{}
	modified, deleted := 0, false
	bad := false
	for _, ev := range events {
		o, ok := ev.Object.(*unstructured.Unstructured)
		if !ok {
			c.failf("WATCH at %s: a %s event without an object: %v", b, ev.Type, ev.Object)
			bad = true
			continue
		}
		switch ev.Type {
		case watch.Added:
			added[o.GetName()] = true
		case watch.Modified:
			if o.GetName() == first {
				modified++
			}
		case watch.Deleted:
			deleted = deleted || o.GetName() == first
			continue // the deleted state carries a new resourceVersion
		case watch.Error:
			c.failf("WATCH at %s: error event: %v", b, o.Object)
			bad = true
			continue
		}
		if o.GetAPIVersion() != vr.ci.gv(b) {
			c.failf("WATCH at %s: %s event of %s has apiVersion %s", b, ev.Type, o.GetName(), o.GetAPIVersion())
			bad = true
			continue
		}
		stored, ok := vr.stored[o.GetResourceVersion()]
		if !ok {
			continue
		}
		exp, err := vr.model(vr.ci, stored, b)
		if err != nil {
			continue
		}
		if ds := sameAs(o.Object, exp); len(ds) > 0 {
			c.fail(Failure{Object: stored, Field: ds[0].path, Message: fmt.Sprintf("WATCH at %s: the %s event of %s differs from the offline conversion of the stored object: %s", b, ev.Type, o.GetName(), describeDiffs(ds))})
			bad = true
		}
	}
	switch {
	case len(added) != n:
		c.failf("WATCH at %s: ADDED events for %d objects, want %d", b, len(added), n)
	case modified == 0:
		c.failf("WATCH at %s: no MODIFIED event for %s after UPDATE and PATCH", b, first)
	case !deleted:
		c.failf("WATCH at %s: no DELETED event for %s", b, first)
	case !bad:
		c.pass()
	}
}

// storageCheck is the upstream e2e "non-homogeneous list": an object stored
// at the storage version S, the storage version switched to v, another
// object stored at v; LIST and GET at every version must give each object
// converted from where it is stored.
func (a *apiRun) storageCheck(ctx context.Context, ci *crdInfo, round int, tag, v string) {
	c := a.begin(GroupAPIServer, fmt.Sprintf("%s storage %s→%s, mixed list %s", ci.name, ci.storage, v, tag))
	defer a.end(c)
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	group := fmt.Sprintf("r%d-flip-%s", round, v)
	sel := LabelGroup + "=" + group
	defer func() {
		_ = a.res(ci, ci.storage).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: LabelRun + "=" + a.runID + "," + LabelGroup + " in (" + group + ",probe-storage)"})
	}()
	objs := a.writeObjects(ci, ci.storage, group, map[string]string{LabelGroup: group, LabelRound: fmt.Sprint(round)})
	if len(objs) == 0 {
		c.failf("no objects at %s", ci.storage)
		return
	}
	o1 := objs[0]
	o2 := deepCopyMap(objs[len(objs)-1])
	n1, n2 := group+"-old", group+"-new"
	setNested(o1, n1, "metadata", "name")
	setNested(o2, n2, "metadata", "name")
	if _, err := a.res(ci, ci.storage).Create(ctx, u(o1), metav1.CreateOptions{}); err != nil {
		c.fail(Failure{Object: o1, Message: fmt.Sprintf("CREATE %s via %s: %v", n1, ci.storage, err)})
		return
	}
	s1, err := a.res(ci, ci.storage).Get(ctx, n1, metav1.GetOptions{})
	if err != nil {
		c.failf("GET %s at %s: %v", n1, ci.storage, err)
		return
	}
	if err := a.setStorage(ctx, ci, v); err != nil {
		c.failf("%v", err)
		return
	}
	defer func() {
		if err := a.setStorage(context.Background(), ci, ci.storage); err != nil {
			c.failf("restoring the storage version %s: %v", ci.storage, err)
		}
	}()
	if _, err := a.res(ci, ci.storage).Create(ctx, u(o2), metav1.CreateOptions{}); err != nil {
		c.fail(Failure{Object: o2, Message: fmt.Sprintf("CREATE %s via %s with storage at %s: %v", n2, ci.storage, v, err)})
		return
	}
	s2, err := a.res(ci, v).Get(ctx, n2, metav1.GetOptions{})
	if err != nil {
		c.failf("GET %s at %s: %v", n2, v, err)
		return
	}
	// Each version's storage decodes what etcd holds straight into its
	// own version: n1 converts from S, n2 from v.
	expect := func(name, b string) (map[string]any, error) {
		if name == n1 {
			return a.model(ci, s1.Object, b)
		}
		return a.model(ci, s2.Object, b)
	}
	for _, b := range ci.versions {
		l, err := a.res(ci, b).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			c.failf("LIST at %s: %v", b, err)
			continue
		}
		if len(l.Items) != 2 {
			c.failf("LIST at %s returned %d objects, want 2 (one stored at %s, one at %s)", b, len(l.Items), ci.storage, v)
			continue
		}
		for _, it := range l.Items {
			it.SetAPIVersion(ci.gv(b))
			it.SetKind(ci.gk.Kind)
			exp, err := expect(it.GetName(), b)
			if err != nil {
				c.failf("the offline converter fails on %s to %s: %v", it.GetName(), b, err)
				continue
			}
			if ds := sameAs(it.Object, exp); len(ds) > 0 {
				c.fail(Failure{Field: ds[0].path, Message: fmt.Sprintf("LIST at %s: %s differs from the offline conversion: %s", b, it.GetName(), describeDiffs(ds))})
				continue
			}
			c.pass()
		}
		for _, name := range []string{n1, n2} {
			got, err := a.res(ci, b).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				c.failf("GET %s at %s: %v", name, b, err)
				continue
			}
			exp, err := expect(name, b)
			if err != nil {
				continue
			}
			if ds := sameAs(got.Object, exp); len(ds) > 0 {
				c.fail(Failure{Field: ds[0].path, Message: fmt.Sprintf("GET %s at %s differs from the offline conversion: %s", name, b, describeDiffs(ds))})
				continue
			}
			c.pass()
		}
	}
	c.Note = fmt.Sprintf("objects stored at %s and %s, listed and read via %d versions", ci.storage, v, len(ci.versions))
}

// goldenRound checks the expected conversions through the API server.
func (a *apiRun) goldenRound(ctx context.Context, round int, tag string) {
	for i, g := range a.opts.Golden {
		name := g.Name
		if name == "" {
			name = fmt.Sprintf("golden %d", i+1)
		}
		c := a.begin(GroupAPIServer, fmt.Sprintf("golden %s %s", name, tag))
		ci, src, dst, err := a.goldenTarget(g)
		if err != nil {
			c.failf("%v", err)
			a.end(c)
			continue
		}
		obj := jsonval.Normalize(deepCopyMap(g.Object.Object)).(map[string]any)
		oname := fmt.Sprintf("r%d-golden-%d", round, i)
		a.prepare(obj, oname, map[string]string{LabelGroup: fmt.Sprintf("r%d-golden", round)})
		if _, err := a.res(ci, src).Create(ctx, u(obj), metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
			c.fail(Failure{Object: obj, Message: fmt.Sprintf("CREATE %s via %s: %v", oname, src, err)})
			a.end(c)
			continue
		}
		got, err := a.res(ci, dst).Get(ctx, oname, metav1.GetOptions{})
		switch {
		case err != nil:
			c.failf("GET %s at %s: %v", oname, dst, err)
		default:
			if f := compareGolden(got.Object, g.Want); f != nil {
				f.Message = fmt.Sprintf("written via %s, read via %s: %s", src, dst, f.Message)
				f.Object = obj
				c.fail(*f)
			} else {
				c.pass()
			}
		}
		_ = a.res(ci, src).Delete(ctx, oname, metav1.DeleteOptions{})
		c.Note = fmt.Sprintf("%s written via %s, read via %s", ci.gk.Kind, src, dst)
		a.end(c)
	}
}

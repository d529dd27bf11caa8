package operator

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/operator/render"
)

// Ordered deletion, as kro deletes an instance's resources (kro:
// website/docs/docs/advanced/06-instance-deletion.md): when an entry's
// children wait for one another (dependsOn), a custom resource being
// deleted keeps its finalizer until they are gone, deleted in the reverse
// of the waves they were made in — dependents first — each wave waited for
// (its objects gone, their own finalizers done) before the next, within a
// bound per wave (Options.DeletionWaveTimeout), with an event per wave.
// Only children Kubernetes' garbage collector would delete are deleted: those
// whose controller reference is the custom resource. Objects no declaration
// names any more (a forEach item gone) go last, and onDelete children are
// left to the collector.

// Reasons of the events of an ordered deletion.
const (
	ReasonDeletingChildren   = "DeletingChildren"
	ReasonDeletionTimedOut   = "DeletionWaveTimedOut"
	ReasonDeletionUnordered  = "OrderedDeletionSkipped"
	defaultDeletionWaveBound = 5 * time.Minute
)

// waveObject is a child to delete, with its kind (typed objects from the
// cache carry none).
type waveObject struct {
	obj  client.Object
	kind string
}

// unmatchedWave is the wave of owned objects no declaration names: last.
const unmatchedWave = -1

// deleteInOrder deletes the custom resource's children wave by wave; done
// is true once none is left (or the waves left timed out).
func (e *entryController) deleteInOrder(ctx context.Context, cr *unstructured.Unstructured, kids map[string]any, onDelete *render.Result) (done bool, err error) {
	waves, err := e.waveOf(ctx, cr, kids)
	if err != nil {
		e.recorder.Eventf(cr, nil, corev1.EventTypeWarning, ReasonDeletionUnordered, "Finalize", "%s", truncate("cannot tell the order the children were made in, so Kubernetes' garbage collector deletes them all at once: "+err.Error(), 1024))
		return true, nil
	}
	skip := map[string]bool{}
	for _, c := range onDelete.Hooks[katalog.OnDelete] {
		skip[objectKey(c.GVK.Kind, c.Namespace, c.Name)] = true
	}
	byWave := map[int][]waveObject{}
	for _, k := range childKinds(e.entry) {
		objs, err := e.ownedObjects(ctx, cr, k)
		if err != nil {
			return false, err
		}
		for _, obj := range objs {
			ref := metav1.GetControllerOf(obj)
			key := objectKey(k.gvk.Kind, obj.GetNamespace(), obj.GetName())
			if ref == nil || ref.UID != cr.GetUID() || skip[key] {
				continue
			}
			w, ok := waves.byKey[key]
			if !ok {
				w, ok = waves.byDeclaration[obj.GetLabels()[render.LabelDeclaration]]
			}
			if !ok {
				w = unmatchedWave
			}
			byWave[w] = append(byWave[w], waveObject{obj: obj, kind: k.gvk.Kind})
		}
	}
	order := make([]int, 0, len(byWave))
	for w := range byWave {
		order = append(order, w)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(order)))
	for _, w := range order {
		left, err := e.deleteWave(ctx, cr, w, byWave[w], waves.max)
		if err != nil || left {
			return false, err
		}
	}
	return true, nil
}

// deleteWave deletes the objects of one wave not being deleted yet; left is
// true while some remain within the wave's bound.
func (e *entryController) deleteWave(ctx context.Context, cr *unstructured.Unstructured, wave int, objs []waveObject, last int) (left bool, err error) {
	var issued, names []string
	var oldest time.Time
	// The event names the wave's first object as related: events of one
	// reason about one object are merged into a series keeping the first
	// note, so each wave needs its own.
	related := objs[0].obj
	for _, o := range objs {
		obj := o.obj
		name := o.kind + " " + objectName(obj)
		names = append(names, name)
		if ts := obj.GetDeletionTimestamp(); ts != nil {
			if oldest.IsZero() || ts.Time.Before(oldest) {
				oldest = ts.Time
			}
			continue
		}
		uid := obj.GetUID()
		if err := e.client.Delete(ctx, obj, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return false, fmt.Errorf("deleting %s: %w", name, err)
		}
		issued = append(issued, name)
	}
	what := describeWave(wave, last)
	if len(issued) > 0 {
		e.recorder.Eventf(cr, related, corev1.EventTypeNormal, ReasonDeletingChildren, "Finalize", "%s", truncate(fmt.Sprintf("deleting %s: %s", what, strings.Join(issued, ", ")), 1024))
		return true, nil
	}
	bound := e.op.opts.DeletionWaveTimeout
	if !oldest.IsZero() && e.op.opts.Now().Sub(oldest) > bound {
		e.recorder.Eventf(cr, related, corev1.EventTypeWarning, ReasonDeletionTimedOut, "Finalize", "%s", truncate(fmt.Sprintf("%s is still being deleted after %s (%s); going on with the next (their own finalizers hold them: see their events)", what, bound, strings.Join(names, ", ")), 1024))
		return false, nil
	}
	return true, nil
}

func describeWave(wave, last int) string {
	if wave == unmatchedWave {
		return "the children no declaration names any more"
	}
	return fmt.Sprintf("wave %d of %d (dependents first)", last-wave+1, last+1)
}

func objectName(obj client.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

func objectKey(kind, ns, name string) string {
	return kind + "/" + types.NamespacedName{Namespace: ns, Name: name}.String()
}

// childWaves maps the custom resource's children to their declaration's
// wave.
type childWaves struct {
	byKey         map[string]int
	byDeclaration map[string]int
	max           int
}

// waveOf renders the entry's onCreate and onReconcile declarations for the
// custom resource being deleted — names only matter — to tell which object
// belongs to which wave.
func (e *entryController) waveOf(ctx context.Context, cr *unstructured.Unstructured, kids map[string]any) (*childWaves, error) {
	opts := e.renderOptions(ctx, render.ApplyHooks)
	opts.SkipStatus, opts.Children = true, kids
	res, err := render.RenderWith(e.entry, cr, opts)
	if err != nil {
		return nil, err
	}
	w := &childWaves{byKey: map[string]int{}, byDeclaration: map[string]int{}}
	for _, h := range render.ApplyHooks {
		for _, rs := range e.entry.Hooks[h] {
			w.max = max(w.max, rs.Wave)
			if rs.ForEach != nil {
				w.byDeclaration[render.DeclarationOf(rs)] = rs.Wave
			}
		}
		for _, c := range res.Hooks[h] {
			w.byKey[objectKey(c.GVK.Kind, c.Namespace, c.Name)] = c.Resource.Wave
		}
	}
	return w, nil
}

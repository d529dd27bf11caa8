package operator

import (
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/operator/render"
)

// Children are written with server-side apply under one field manager, as
// upstream's runtime does (pkg/resources/*: ApplyPatchType, Force from
// shared.ResolveForceConflict, default true): creation and drift correction
// alike send the object the katalog declares, and Orkestra owns exactly the
// fields it sends. Fields other managers set are theirs and stay; on a field
// both set, Orkestra's value wins (force). The comparison that decides
// whether to write (render.Diff) reads the cached object only, never its
// managedFields.

// FieldManager is the field manager of every child write.
const FieldManager = "orkestra"

// desired returns the child's object as the configuration to apply: what
// the katalog declares and Orkestra's labels, nothing the server fills in.
func (a *applier) desired(c *render.Child) *unstructured.Unstructured {
	obj := c.Object.DeepCopy()
	dropNulls(obj.Object)
	if c.Resource.Once {
		ann := obj.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[render.AnnotationGeneratedAt] = a.now.UTC().Format(time.RFC3339)
		obj.SetAnnotations(ann)
		a.scheduleRotation(c, a.now)
	}
	return obj
}

// dropNulls removes null values (an unset creationTimestamp): in an apply
// configuration they would read as fields Orkestra sets.
func dropNulls(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			dropNulls(e)
		}
	case []any:
		for _, e := range x {
			dropNulls(e)
		}
	}
}

// serverApply applies the child's object obj as Orkestra's field manager,
// forcing ownership of fields another manager set unless the declaration
// (else the entry) says forceConflict: false (upstream's
// pkg/resources/shared.ResolveForceConflict: resource, then CRD, then
// true); obj then holds the object the API server returned.
func (a *applier) serverApply(c *render.Child, obj *unstructured.Unstructured) error {
	opts := []client.ApplyOption{client.FieldOwner(FieldManager)}
	if forceConflict(c, a.e.entry) {
		opts = append(opts, client.ForceOwnership)
	}
	return a.e.client.Apply(a.ctx, client.ApplyConfigurationFromUnstructured(obj), opts...)
}

func forceConflict(c *render.Child, e *engine.Entry) bool {
	if c.Resource != nil && c.Resource.Source.ForceConflict != nil {
		return *c.Resource.Source.ForceConflict
	}
	if fc := e.Source.ForceConflict; fc != nil {
		return *fc
	}
	return true
}

// create brings an absent child into existence.
func (a *applier) create(c *render.Child) error {
	obj, err := a.applyNew(c)
	if err != nil || obj == nil {
		return err
	}
	a.change("Created", "created %s", c)
	return nil
}

// applyNew applies the child's object once its name is known to be free;
// nil when it is not (someone else's object, or ours still being deleted
// or not in the cache yet). The cache holds only Orkestra's objects, so the
// name is checked on the API server first: an apply onto someone else's
// object of that name would take it over.
func (a *applier) applyNew(c *render.Child) (*unstructured.Unstructured, error) {
	if free, err := a.nameFree(c); err != nil || !free {
		return nil, err
	}
	obj := a.desired(c)
	if err := a.serverApply(c, obj); err != nil {
		return nil, fmt.Errorf("creating: %w", err)
	}
	if c.Kind == "jobs" {
		a.jobsCreated = append(a.jobsCreated, c.Namespace+"/"+c.Name)
	}
	if err := a.initialStatus(c, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// nameFree reads the child's name from the API server. An object of ours
// there means the cache is behind or it is being deleted: look again soon.
// Someone else's fails a drift-corrected child; an onCreate child leaves it
// alone and remembers it, so that later reconciles do not look again.
func (a *applier) nameFree(c *render.Child) (bool, error) {
	live, err := a.newLive(c)
	if err != nil {
		return false, err
	}
	err = a.e.reader.Get(a.ctx, a.key(c), live)
	switch {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, err
	case render.IsOwnedBy(live, a.cr):
		a.retry = true
		return false, nil
	case c.Reconciled:
		return false, fmt.Errorf("it exists and is not managed by %s (orkestra-owner label %q); delete it or give the child another name", a.cr.GetName(), live.GetLabels()[render.LabelOwner])
	}
	a.e.foreign.Store(a.foreignKey(c), struct{}{})
	return false, nil
}

// initialStatus writes a custom child's declared status through its status
// subresource once it was created (the API server ignores status on create);
// afterwards the child's own controller owns its status.
func (a *applier) initialStatus(c *render.Child, created *unstructured.Unstructured) error {
	if c.Status == nil {
		return nil
	}
	orig := created.DeepCopy()
	created.Object["status"] = c.Status
	if err := a.e.client.Status().Patch(a.ctx, created, client.MergeFrom(orig)); err != nil {
		return fmt.Errorf("writing its initial status (hasStatus: false skips it): %w", err)
	}
	return nil
}

// correct writes a drifted child back with an apply of its declared object.
// The apply merges list items by key and keeps what other managers own:
// when an item or key someone else added still leaves a compared field
// different (a data key of a ConfigMap, an env var of the container), the
// object the apply returned, corrected, is written with an update carrying
// its resourceVersion.
func (a *applier) correct(c *render.Child, d render.Drift) error {
	obj := a.desired(c)
	if err := a.serverApply(c, obj); err != nil {
		return fmt.Errorf("applying %s: %w", strings.Join(d.Fields, ", "), err)
	}
	a.change("Updated", "updated %s: %s drifted", c, strings.Join(d.Fields, ", "))
	live, err := a.asLive(c, obj)
	if err != nil {
		return err
	}
	rest, err := render.Diff(c, live)
	if err != nil || rest.None() || rest.Recreate {
		return err
	}
	if err := a.e.client.Update(a.ctx, live, client.FieldOwner(FieldManager)); err != nil {
		if apierrors.IsConflict(err) {
			a.retry = true
			return nil
		}
		return fmt.Errorf("removing what other managers added to %s: %w", strings.Join(rest.Fields, ", "), err)
	}
	return nil
}

// asLive returns the object an apply returned in the form render.Diff
// compares: typed for built-in kinds.
func (a *applier) asLive(c *render.Child, u *unstructured.Unstructured) (client.Object, error) {
	if c.Typed == nil {
		return u, nil
	}
	obj, err := newObject(a.e.scheme, c.GVK)
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return nil, fmt.Errorf("reading the applied %s: %w", c, err)
	}
	return obj, nil
}

// recreate deletes a child whose drift cannot be corrected in place and
// applies it anew (on a later reconcile while the old one terminates).
func (a *applier) recreate(c *render.Child, live client.Object, d render.Drift) error {
	uid := live.GetUID()
	if err := a.e.client.Delete(a.ctx, live, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) {
		if apierrors.IsConflict(err) {
			a.retry = true
			return nil
		}
		return fmt.Errorf("deleting to recreate (%s changed): %w", strings.Join(d.Fields, ", "), err)
	}
	obj, err := a.applyNew(c)
	if err != nil {
		return fmt.Errorf("recreating (%s changed): %w", strings.Join(d.Fields, ", "), err)
	}
	if obj != nil {
		a.change("Recreated", "recreated %s: %s changed", c, strings.Join(d.Fields, ", "))
	}
	return nil
}

// foreignKey identifies an onCreate child whose name someone else's object
// holds (the cache, which only holds managed objects, does not see it).
func (a *applier) foreignKey(c *render.Child) string {
	return string(a.cr.GetUID()) + "/" + c.GVK.String() + "/" + c.Namespace + "/" + c.Name
}

// stillForeign reports whether the child's name is held by someone else's
// object seen before, reading it from the API server (no write).
func (a *applier) stillForeign(c *render.Child) bool {
	key := a.foreignKey(c)
	if _, ok := a.e.foreign.Load(key); !ok {
		return false
	}
	live, err := a.newLive(c)
	if err == nil {
		err = a.e.reader.Get(a.ctx, a.key(c), live)
	}
	if err == nil && !render.IsOwnedBy(live, a.cr) {
		return true
	}
	a.e.foreign.Delete(key)
	return false
}

// rotate regenerates a `once: true` secret older than its rotateAfter; a
// secret without rotateAfter is never touched again.
func (a *applier) rotate(c *render.Child, live client.Object) error {
	ra := c.Resource.RotateAfter
	if ra <= 0 {
		return nil
	}
	generated := live.GetCreationTimestamp().Time
	if s := live.GetAnnotations()[render.AnnotationGeneratedAt]; s != "" {
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			generated = t
		}
	}
	if a.now.Before(generated.Add(ra)) {
		a.scheduleRotation(c, generated)
		return nil
	}
	if err := a.serverApply(c, a.desired(c)); err != nil {
		return fmt.Errorf("rotating: %w", err)
	}
	a.change("Rotated", "rotated %s: older than rotateAfter %s", c, ra)
	return nil
}

// scheduleRotation makes the reconcile come back when the secret generated
// at generated is due.
func (a *applier) scheduleRotation(c *render.Child, generated time.Time) {
	ra := c.Resource.RotateAfter
	if ra <= 0 {
		return
	}
	wait := generated.Add(ra).Sub(a.now)
	if wait < time.Second {
		wait = time.Second
	}
	if a.requeueAfter == 0 || wait < a.requeueAfter {
		a.requeueAfter = wait
	}
}

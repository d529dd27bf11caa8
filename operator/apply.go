package operator

import (
	"context"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/operator/render"
)

// applier applies the rendered children of one custom resource.
type applier struct {
	e   *entryController
	ctx context.Context
	cr  *unstructured.Unstructured
	now time.Time

	// applied counts the children that passed their condition.
	applied int
	// skipped names the children not applied because their namespace is
	// outside the entry's allowedNamespaces or in its restrictedNamespaces.
	skipped []string
	// absent names the copies skipped because their source does not exist
	// (Options.AbsentCopySource).
	absent []string
	// retry asks for a reconcile soon (stale cache, conflict).
	retry bool
	// requeueAfter is the time until the next secret rotation (0: none).
	requeueAfter time.Duration
	jobsCreated  []string
	jobsDeleted  []string
	changes      []change
	// ready is the children's readiness (readiness.go).
	ready readiness
}

// applyAll applies onCreate and onReconcile children in order.
//
// When several declarations of one kind name the same object, the one that
// passes its condition is applied (a drift-corrected one before an onCreate
// one); a declaration whose condition fails deletes the object only when it
// prunes (Modes.Prune), no passing declaration covers the name, and the
// object is ours.
func (a *applier) applyAll(res *render.Result) error {
	var children []*render.Child
	for _, h := range render.ApplyHooks {
		children = append(children, res.Hooks[h]...)
	}
	children = byWave(children)
	a.ready.states = map[string]childState{}
	chosen := map[string]*render.Child{}
	for _, c := range children {
		if !c.When {
			continue
		}
		if cur := chosen[c.Key()]; cur == nil || (!cur.Reconciled && c.Reconciled) {
			chosen[c.Key()] = c
		}
	}
	deleted := map[string]bool{}
	for _, c := range children {
		if !a.e.entry.Namespaces.Permits(c.Namespace) {
			// Upstream's namespace guard: skipped, not an error.
			if c.When && chosen[c.Key()] == c {
				a.skipped = append(a.skipped, c.String())
			}
			continue
		}
		if !c.When {
			if c.Resource.Modes.Prune && chosen[c.Key()] == nil && !deleted[c.Key()] {
				deleted[c.Key()] = true
				if err := a.deleteIfOwned(c); err != nil {
					return err
				}
			}
			continue
		}
		if chosen[c.Key()] != c {
			continue
		}
		if c.Skipped != "" {
			a.absentSource(c)
			a.ready.states[c.Key()] = childState{ready: true}
			continue
		}
		if why := a.waits(c, res); why != "" {
			a.holdBack(c, why)
			continue
		}
		a.applied++
		if err := a.apply(c); err != nil {
			return fmt.Errorf("%s (%s): %w", c, c.Resource.Fields.Field, err)
		}
		a.observeReady(c)
	}
	return nil
}

// summary is the Ready condition's message: how many children were applied,
// and which were skipped for their namespace.
func (a *applier) summary() string {
	msg := fmt.Sprintf("%d children applied", a.applied)
	if len(a.skipped) > 0 {
		msg += fmt.Sprintf("; %d skipped, their namespace is not allowed (allowedNamespaces, restrictedNamespaces): %s", len(a.skipped), strings.Join(a.skipped, ", "))
	}
	if len(a.absent) > 0 {
		msg += fmt.Sprintf("; %d copies skipped, their source does not exist: %s", len(a.absent), strings.Join(a.absent, ", "))
	}
	return msg
}

// absentSource reports a copy skipped because its source does not exist
// (Options.AbsentCopySource).
func (a *applier) absentSource(c *render.Child) {
	note := c.String() + ": " + c.Skipped
	a.absent = append(a.absent, note)
	a.e.op.opts.AbsentCopySource(a.e.entry.Name, client.ObjectKeyFromObject(a.cr), note)
}

// pruneItems deletes the children of forEach declarations that prune their
// items (Modes.PruneItems) whose item is gone: objects the custom resource
// owns, labelled with the declaration, that no item names any more.
func (a *applier) pruneItems(res *render.Result) error {
	for _, h := range render.ApplyHooks {
		for _, rs := range a.e.entry.Hooks[h] {
			if rs.ForEach == nil || rs.GVK == nil || !rs.Modes.PruneItems {
				continue
			}
			if err := a.pruneDeclaration(res, rs); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a *applier) pruneDeclaration(res *render.Result, rs *engine.Resource) error {
	decl := render.DeclarationOf(rs)
	current := map[types.NamespacedName]bool{}
	for _, h := range render.ApplyHooks {
		for _, c := range res.Hooks[h] {
			if c.Resource == rs && c.When {
				current[a.key(c)] = true
			}
		}
	}
	objs, err := a.e.ownedObjects(a.ctx, a.cr, childKind{gvk: *rs.GVK, custom: rs.Kind.Open})
	if err != nil {
		return err
	}
	for _, obj := range objs {
		key := types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
		if obj.GetLabels()[render.LabelDeclaration] != decl || current[key] || obj.GetDeletionTimestamp() != nil {
			continue
		}
		uid := obj.GetUID()
		if err := a.e.client.Delete(a.ctx, obj, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("deleting %s %s, whose forEach item is gone: %w", rs.GVK.Kind, key, err)
		}
		a.change("Deleted", "deleted %s %s: its item of %s is gone (%s: true)", rs.GVK.Kind, key, rs.ForEach.Field, rs.Modes.PruneFrom.Field)
	}
	return nil
}

func (a *applier) key(c *render.Child) types.NamespacedName {
	return types.NamespacedName{Namespace: c.Namespace, Name: c.Name}
}

// newLive returns an empty object to read the child into: typed for the
// built-in kinds, unstructured for custom children.
func (a *applier) newLive(c *render.Child) (client.Object, error) {
	if c.Typed == nil && c.Kind == "custom" {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(c.GVK)
		return u, nil
	}
	return newObject(a.e.scheme, c.GVK)
}

// get reads the child from the cache: the cache's own object, not a copy —
// copy it before changing it.
func (a *applier) get(c *render.Child) (client.Object, error) {
	live, err := a.newLive(c)
	if err != nil {
		return nil, err
	}
	if err := a.e.client.Get(a.ctx, a.key(c), live, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	return live, nil
}

// change records what the reconcile did to a child; flushEvents reports
// all of a reconcile's changes in one event (fewer writes than one event per
// child).
func (a *applier) change(reason, format string, args ...any) {
	a.changes = append(a.changes, change{reason: reason, note: fmt.Sprintf(format, args...)})
}

type change struct{ reason, note string }

// flushEvents emits one Normal event for the changes of this reconcile:
// reason Created, Updated, Recreated, Deleted or Rotated when all changes
// are of one sort, else Applied.
func (a *applier) flushEvents(action string) {
	if len(a.changes) == 0 {
		return
	}
	reason := a.changes[0].reason
	notes := make([]string, len(a.changes))
	for i, c := range a.changes {
		if c.reason != reason {
			reason = "Applied"
		}
		notes[i] = c.note
	}
	a.e.recorder.Eventf(a.cr, nil, corev1.EventTypeNormal, reason, action, "%s", truncate(strings.Join(notes, "; "), 1024))
	a.changes = nil
}

// apply brings one passing child to its declared state.
func (a *applier) apply(c *render.Child) error {
	live, err := a.get(c)
	if apierrors.IsNotFound(err) {
		if c.Kind == "jobs" && jobSet(a.cr)[c.Namespace+"/"+c.Name] {
			return nil // it ran already; Jobs are created once
		}
		if a.stillForeign(c) {
			return nil
		}
		scaled := a.autoscale(c, nil)
		if err := a.create(c); err != nil || scaled == "" {
			return err
		}
		a.change("Scaled", "%s", scaled)
		return nil
	}
	if err != nil {
		return err
	}
	if live.GetDeletionTimestamp() != nil && render.IsOwnedBy(live, a.cr) {
		// Being deleted (a pod's grace period, a finalizer): look again.
		a.retry = true
		return nil
	}
	if !render.IsOwnedBy(live, a.cr) {
		if c.Reconciled {
			return fmt.Errorf("it exists and is not managed by %s (orkestra-owner label %q); delete it or give the child another name", a.cr.GetName(), live.GetLabels()[render.LabelOwner])
		}
		return nil // onCreate leaves existing objects alone
	}
	switch {
	case c.Resource.Once:
		return a.rotate(c, live)
	case c.Kind == "jobs", !c.Reconciled:
		return nil
	}
	cached := live
	live = cached.DeepCopyObject().(client.Object)
	keepReplicas(c, live)
	scaled := a.autoscale(c, live)
	d, err := render.Diff(c, live)
	if err != nil {
		return err
	}
	if d.None() {
		return nil
	}
	if d.Recreate {
		return a.recreate(c, live, d)
	}
	n := len(a.changes)
	if err := a.correct(c, d); err != nil || scaled == "" {
		return err
	}
	if len(a.changes) > n && len(d.Fields) == 2 && d.Fields[0] == "annotations" && d.Fields[1] == "replicas" {
		// The scale event is the whole change (the count and its time).
		a.changes = a.changes[:n]
	}
	a.change("Scaled", "%s", scaled)
	return nil
}

// deleteIfOwned deletes the child's object when it exists and is ours.
func (a *applier) deleteIfOwned(c *render.Child) error {
	live, err := a.get(c)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", c, err)
	}
	if !render.IsOwnedBy(live, a.cr) || live.GetDeletionTimestamp() != nil {
		return nil
	}
	uid := live.GetUID()
	if err := a.e.client.Delete(a.ctx, live, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return fmt.Errorf("deleting %s: %w", c, err)
	}
	if c.Kind == "jobs" {
		a.jobsDeleted = append(a.jobsDeleted, c.Namespace+"/"+c.Name)
	}
	why := "drift-corrected children are pruned by default"
	if p := c.Resource.Modes.PruneFrom; p != nil {
		why = p.Field + ": true"
	}
	a.change("Deleted", "deleted %s: its condition %s does not hold (%s)", c, c.Resource.When.Source(), why)
	return nil
}

// runOnDelete creates an onDelete child when absent; done is false while an
// onDelete Job has not completed.
func (a *applier) runOnDelete(c *render.Child) (done bool, err error) {
	live, err := a.get(c)
	if apierrors.IsNotFound(err) {
		if err := a.create(c); err != nil {
			return false, fmt.Errorf("onDelete %s: %w", c, err)
		}
		return c.Kind != "jobs", nil
	}
	if err != nil {
		return false, err
	}
	job, ok := live.(*batchv1.Job)
	if !ok {
		return true, nil
	}
	for _, cond := range job.Status.Conditions {
		if cond.Status != corev1.ConditionTrue {
			continue
		}
		switch cond.Type {
		case batchv1.JobComplete:
			return true, nil
		case batchv1.JobFailed:
			return false, fmt.Errorf("onDelete Job %s failed (%s: %s); the finalizer %s stays until it succeeds: fix the cause and delete the Job to run it again, or remove the finalizer by hand", c, cond.Reason, cond.Message, Finalizer)
		}
	}
	return false, nil
}

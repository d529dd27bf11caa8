package operator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/operator/render"
)

// Reasons of the Ready condition and of events.
const (
	ReasonSucceeded      = "ReconcileSucceeded"
	ReasonRenderFailed   = "RenderFailed"
	ReasonApplyFailed    = "ApplyFailed"
	ReasonOnDeleteFailed = "OnDeleteFailed"
	// ReasonStatusFieldFailed: a status field failed to evaluate and was
	// left out; the reconcile still succeeded.
	ReasonStatusFieldFailed = "StatusFieldFailed"
	ConditionReady          = "Ready"
)

// retryAfter is how soon a reconcile that met a transient condition (a
// stale cache, a conflict) runs again.
const retryAfter = time.Second

// Reconcile reconciles one custom resource of the entry.
func (e *entryController) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	e.active.Add(1)
	defer e.active.Add(-1)
	start := time.Now()
	// The sentinels of the changes this reconcile answers; one that fails
	// or asks to run again soon answers them on its next run.
	vals := e.sentinels.take(req.NamespacedName)
	res, retry, err := e.reconcile(ctx, req, vals)
	if err != nil || retry {
		e.sentinels.add(req.NamespacedName, vals)
	}
	e.duration.Observe(time.Since(start).Seconds())
	if err != nil {
		e.consecutiveFailures.Add(1)
		e.health.failedWith(e.op.opts.Now(), err)
	} else {
		e.consecutiveFailures.Store(0)
	}
	switch {
	case err != nil:
		e.total[ResultError].Inc()
		e.observe(true) // controller-runtime logs the error
	case retry:
		e.total[ResultRequeue].Inc()
		e.observe(false)
	default:
		e.total[ResultSuccess].Inc()
		e.observe(false)
	}
	return res, err
}

// reconcile returns retry=true when it asks to run again soon for a
// transient reason.
//
// The custom resource is the cache's own object, not a copy: evaluations
// only read it (CEL and template values never alias their input), and every
// write patches a copy (patchCopy).
func (e *entryController) reconcile(ctx context.Context, req reconcile.Request, vals map[string]bool) (_ reconcile.Result, _ bool, err error) {
	cr := e.crObject()
	if err := e.client.Get(ctx, req.NamespacedName, cr, client.UnsafeDisableDeepCopy); err != nil {
		if apierrors.IsNotFound(err) {
			e.readIndex.set(req.NamespacedName, nil)
			return reconcile.Result{}, false, nil
		}
		return reconcile.Result{}, false, err
	}
	if Suspended(cr) && e.entry.Namespaces.Reconciles(cr.GetNamespace()) && (cr.GetDeletionTimestamp() == nil || hasAny(cr.GetFinalizers(), e.finalizers())) {
		return e.holdSuspended(ctx, cr)
	}
	if cr.GetDeletionTimestamp() != nil {
		return e.finalize(ctx, cr)
	}
	if !e.entry.Namespaces.Reconciles(cr.GetNamespace()) {
		// Not this entry's (allowedNamespaces, restrictedNamespaces,
		// namespace:); the watch filter keeps most of these away.
		return reconcile.Result{}, false, nil
	}
	if len(e.entry.EnqueueGateSentinels) == 0 && !e.enqueues(cr, vals) {
		// Kept out by preReconcile's enqueue gate, and brought here by a
		// child's change or an earlier requeue: as upstream, nothing is
		// done (no status, no children). A sentinels list judges the custom
		// resource's own changes only (admission).
		return reconcile.Result{}, false, nil
	}
	if waits := e.waitingFor(); waits != "" {
		return e.hold(ctx, cr, ReasonWaiting, "waiting for "+waits, dependencyRetry)
	}
	// The declared events follow the reconcile's outcome: a failure, or
	// success (set at the end); a reconcile held back is neither.
	var kids map[string]any
	var live *engine.Live
	succeeded := false
	defer func() {
		if err != nil || succeeded {
			e.emitEvents(cr, kids, live, succeeded)
		}
	}()
	kids, err = e.observedChildren(ctx, cr)
	if err != nil {
		return reconcile.Result{}, false, e.fail(ctx, cr, ReasonRenderFailed, err)
	}
	var failedCalls []liveFailure
	live, failedCalls, err = e.live(ctx, cr, kids, render.ApplyHooks)
	if err != nil {
		return reconcile.Result{}, false, e.fail(ctx, cr, reasonOf(err, ReasonRenderFailed), err)
	}
	cr, deleted, cleanupWait, err := e.cleanup(ctx, cr, kids, live)
	if err != nil {
		return reconcile.Result{}, false, e.fail(ctx, cr, ReasonRenderFailed, err)
	}
	if deleted {
		return reconcile.Result{}, false, nil
	}
	if ok, err := e.gateHolds(cr, kids, live, vals); err != nil {
		var closed *gateClosedError
		if errors.As(err, &closed) {
			msg := fmt.Sprintf("not reconciled: the preReconcile gate could not be evaluated and its failPolicy is closed: %v", closed.err)
			e.health.gate(msg)
			return e.hold(ctx, cr, ReasonGated, msg, cleanupWait)
		}
		return reconcile.Result{}, false, e.fail(ctx, cr, ReasonRenderFailed, err)
	} else if !ok && e.heldByChange(cr, kids, live) {
		return reconcile.Result{RequeueAfter: cleanupWait}, false, nil
	} else if !ok {
		// As upstream's kordinator: the reconcile does not run, and what
		// it created stays as it is (nothing is updated or deleted).
		msg := fmt.Sprintf("not reconciled: the preReconcile gate %s does not hold", e.entry.Gate.Source())
		e.health.gate(msg)
		return e.hold(ctx, cr, ReasonGated, msg, cleanupWait)
	}
	if fins := e.finalizers(); len(fins) > 0 && !hasAll(cr.GetFinalizers(), fins) {
		written, err := e.patchCopy(ctx, cr, true, func(w *unstructured.Unstructured) {
			w.SetFinalizers(union(w.GetFinalizers(), fins))
		})
		if err != nil {
			if apierrors.IsConflict(err) {
				return reconcile.Result{RequeueAfter: retryAfter}, true, nil
			}
			return reconcile.Result{}, false, fmt.Errorf("adding the finalizer: %w", err)
		}
		cr = written
	}
	a := &applier{e: e, ctx: ctx, cr: cr, now: e.op.opts.Now()}
	opts := e.renderOptions(ctx, render.ApplyHooks)
	opts.Children, opts.Live = kids, live
	res, err := render.RenderWith(e.entry, cr, opts)
	if err != nil {
		return reconcile.Result{}, false, e.fail(ctx, cr, ReasonRenderFailed, err)
	}
	err = a.applyAll(res)
	if err == nil {
		err = a.pruneItems(res)
	}
	a.flushEvents("Reconcile")
	if err != nil {
		return reconcile.Result{}, false, e.fail(ctx, cr, ReasonApplyFailed, err)
	}
	if err := a.recordJobs(); err != nil {
		return reconcile.Result{}, false, e.fail(ctx, cr, ReasonApplyFailed, err)
	}
	ready := a.readyCondition()
	if len(res.StatusErrors) > 0 {
		ready.Message += "; " + e.statusFieldsFailed(cr, res.StatusErrors)
	}
	if len(failedCalls) > 0 {
		ready.Message += "; " + e.liveFailed(cr, failedCalls)
	}
	if len(res.ConditionErrors) > 0 {
		ready.Message += "; " + e.conditionsFailed(cr, res.ConditionErrors)
	}
	ready.Message = truncate(ready.Message, 32768)
	if err := e.writeStatus(ctx, cr, res.Status, ready, res.Conditions...); err != nil {
		if apierrors.IsConflict(err) {
			return reconcile.Result{RequeueAfter: retryAfter}, true, nil
		}
		return reconcile.Result{}, false, fmt.Errorf("writing the status: %w", err)
	}
	out := reconcile.Result{RequeueAfter: a.requeueAfter}
	if r := e.entry.Resync; r > 0 && (out.RequeueAfter == 0 || r < out.RequeueAfter) {
		out.RequeueAfter = r
	}
	// A value or condition that reads the clock (a time window, a weekday)
	// changes with time alone: reconcile again when it may.
	if now := engine.Now(); len(e.entry.Timed) > 0 {
		if next := engine.NextChange(now, e.entry.Timed); !next.IsZero() {
			if d := next.Sub(now); out.RequeueAfter == 0 || d < out.RequeueAfter {
				out.RequeueAfter = d
			}
		}
	}
	if cleanupWait > 0 && (out.RequeueAfter == 0 || cleanupWait < out.RequeueAfter) {
		out.RequeueAfter = cleanupWait
	}
	if len(a.ready.notReady) > 0 && (out.RequeueAfter == 0 || readinessRetry < out.RequeueAfter) {
		out.RequeueAfter = readinessRetry
	}
	if a.retry {
		out.RequeueAfter = retryAfter
	}
	e.health.succeeded(e.op.opts.Now())
	succeeded = !a.retry
	return out, a.retry, nil
}

// statusFieldsFailed reports status fields that failed (left out, the
// others written, as the original engine did): one Warning event each, and
// the text for the Ready condition's message.
func (e *entryController) statusFieldsFailed(cr *unstructured.Unstructured, errs []error) string {
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = err.Error()
		e.recorder.Eventf(cr, nil, corev1.EventTypeWarning, ReasonStatusFieldFailed, "Reconcile", "%s", truncate(msgs[i], 1024))
	}
	return fmt.Sprintf("%d status field(s) not written: %s", len(errs), truncate(strings.Join(msgs, "; "), 4096))
}

// fail reports err on the custom resource (event, Ready=False) and returns
// it, so that the work queue retries with backoff.
func (e *entryController) fail(ctx context.Context, cr *unstructured.Unstructured, reason string, err error) error {
	msg := err.Error()
	e.recorder.Eventf(cr, nil, corev1.EventTypeWarning, reason, "Reconcile", "%s", truncate(msg, 1024))
	cond := metav1.Condition{Type: ConditionReady, Status: metav1.ConditionFalse, Reason: reason, Message: truncate(msg, 32768)}
	if serr := e.writeStatus(ctx, cr, nil, cond); serr != nil && !apierrors.IsConflict(serr) {
		e.log.Error(serr, "writing the Ready condition", "object", client.ObjectKeyFromObject(cr).String())
	}
	return err
}

// reasonOf is the Ready reason of err: a live input's own, else def.
func reasonOf(err error, def string) string {
	var le *liveError
	if errors.As(err, &le) {
		return le.reason
	}
	return def
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// finalizers are the finalizers the entry puts on its custom resources.
func (e *entryController) finalizers() []string { return Finalizers(e.entry) }

// Finalizers are the finalizers an entry puts on its custom resources: the
// runtime's when it has onDelete children, lists finalizers or deletes its
// children in order (engine.Entry.Ordered), with those listed.
func Finalizers(e *engine.Entry) []string {
	if len(e.Hooks[katalog.OnDelete]) == 0 && len(e.Finalizers) == 0 && !e.Ordered {
		return nil
	}
	return union([]string{Finalizer}, e.Finalizers)
}

// finalize runs the onDelete children of a custom resource being deleted,
// then removes the finalizers. onDelete Jobs must complete first.
func (e *entryController) finalize(ctx context.Context, cr *unstructured.Unstructured) (reconcile.Result, bool, error) {
	fins := e.finalizers()
	if len(fins) == 0 || !hasAny(cr.GetFinalizers(), fins) {
		return reconcile.Result{}, false, nil
	}
	opts := e.renderOptions(ctx, render.DeleteHooks)
	kids, err := e.observedChildren(ctx, cr)
	if err != nil {
		return reconcile.Result{}, false, err
	}
	live, failedCalls, err := e.live(ctx, cr, kids, render.DeleteHooks)
	if err != nil {
		e.recorder.Eventf(cr, nil, corev1.EventTypeWarning, reasonOf(err, ReasonOnDeleteFailed), "Finalize", "%s", truncate(err.Error(), 1024))
		return reconcile.Result{}, false, err
	}
	if len(failedCalls) > 0 {
		e.liveFailed(cr, failedCalls)
	}
	opts.Children, opts.Live = kids, live
	res, err := render.RenderWith(e.entry, cr, opts)
	if err != nil {
		e.recorder.Eventf(cr, nil, corev1.EventTypeWarning, ReasonOnDeleteFailed, "Finalize", "%s", truncate(err.Error(), 1024))
		return reconcile.Result{}, false, err
	}
	a := &applier{e: e, ctx: ctx, cr: cr, now: e.op.opts.Now()}
	pending := false
	seen := map[string]bool{}
	for _, c := range res.Hooks[katalog.OnDelete] {
		if !c.When || seen[c.Key()] || !e.entry.Namespaces.Permits(c.Namespace) {
			continue
		}
		seen[c.Key()] = true
		if c.Skipped != "" {
			a.absentSource(c)
			continue
		}
		done, err := a.runOnDelete(c)
		a.flushEvents("Finalize")
		if err != nil {
			e.recorder.Eventf(cr, nil, corev1.EventTypeWarning, ReasonOnDeleteFailed, "Finalize", "%s", truncate(err.Error(), 1024))
			return reconcile.Result{}, false, err
		}
		if !done {
			pending = true
		}
	}
	if pending || a.retry {
		return reconcile.Result{RequeueAfter: e.op.opts.RequeueOnDeleteJob}, true, nil
	}
	if e.entry.Ordered {
		done, err := e.deleteInOrder(ctx, cr, kids, res)
		if err != nil {
			return reconcile.Result{}, false, err
		}
		if !done {
			return reconcile.Result{RequeueAfter: e.op.opts.RequeueOnDeleteJob}, true, nil
		}
	}
	var keep []string
	for _, f := range cr.GetFinalizers() {
		if !slices.Contains(fins, f) {
			keep = append(keep, f)
		}
	}
	if _, err := e.patchCopy(ctx, cr, true, func(w *unstructured.Unstructured) { w.SetFinalizers(keep) }); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, false, nil
		}
		if apierrors.IsConflict(err) {
			return reconcile.Result{RequeueAfter: retryAfter}, true, nil
		}
		return reconcile.Result{}, false, fmt.Errorf("removing the finalizer: %w", err)
	}
	how := ""
	if e.entry.Ordered {
		how = "; children deleted in reverse order"
	}
	e.recorder.Eventf(cr, nil, corev1.EventTypeNormal, "Finalized", "Finalize", "onDelete ran (%d children)%s; finalizer removed", len(seen), how)
	return reconcile.Result{}, false, nil
}

// renderOptions are the options the reconciler renders hooks with: scopes
// from the REST mapper, copy sources read from the API server (a get by name,
// not a cache: the source is not Orkestra's and need not carry its label).
func (e *entryController) renderOptions(ctx context.Context, hooks []string) render.Options {
	return render.Options{
		Hooks:             hooks,
		SkipStatus:        hooks[0] == katalog.OnDelete,
		IsNamespaced:      e.isNamespaced,
		SkipAbsentSources: e.op.opts.AbsentCopySource != nil,
		ReadSource: func(gvk schema.GroupVersionKind, key types.NamespacedName) (client.Object, error) {
			obj, err := newObject(e.scheme, gvk)
			if err != nil {
				return nil, err
			}
			if err := e.reader.Get(ctx, key, obj); err != nil {
				return nil, err
			}
			return obj, nil
		},
	}
}

// isNamespaced reports a kind's scope from the REST mapper, remembered once
// known (a kind's scope never changes; the mapper's lookup is not free).
func (e *entryController) isNamespaced(gvk schema.GroupVersionKind) (bool, error) {
	if v, ok := e.scopes.Load(gvk); ok {
		return v.(bool), nil
	}
	m, err := e.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return false, err
	}
	namespaced := m.Scope.Name() == meta.RESTScopeNameNamespace
	e.scopes.Store(gvk, namespaced)
	return namespaced, nil
}

// recordJobs records the Jobs created by this reconcile on the custom
// resource (and forgets those deleted because their condition failed).
func (a *applier) recordJobs() error {
	if len(a.jobsCreated) == 0 && len(a.jobsDeleted) == 0 {
		return nil
	}
	cur := jobSet(a.cr)
	for _, j := range a.jobsCreated {
		cur[j] = true
	}
	for _, j := range a.jobsDeleted {
		delete(cur, j)
	}
	list := make([]string, 0, len(cur))
	for j := range cur {
		list = append(list, j)
	}
	sort.Strings(list)
	written, err := a.e.patchCopy(a.ctx, a.cr, false, func(w *unstructured.Unstructured) {
		ann := w.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		if len(list) == 0 {
			delete(ann, AnnotationJobs)
		} else {
			ann[AnnotationJobs] = strings.Join(list, ",")
		}
		w.SetAnnotations(ann)
	})
	if err != nil {
		return err
	}
	a.cr = written
	return nil
}

// patchCopy writes change to the custom resource cr with a merge patch of a
// copy (cr may be the cache's object, never changed), optimistically locked
// when asked, and returns the copy as written.
func (e *entryController) patchCopy(ctx context.Context, cr *unstructured.Unstructured, lock bool, change func(*unstructured.Unstructured)) (*unstructured.Unstructured, error) {
	w := cr.DeepCopy()
	change(w)
	patch := client.MergeFrom(cr)
	if lock {
		patch = client.MergeFromWithOptions(cr, client.MergeFromWithOptimisticLock{})
	}
	if err := e.client.Patch(ctx, w, patch); err != nil {
		return nil, err
	}
	return w, nil
}

func jobSet(cr *unstructured.Unstructured) map[string]bool {
	out := map[string]bool{}
	for _, j := range strings.Split(cr.GetAnnotations()[AnnotationJobs], ",") {
		if j != "" {
			out[j] = true
		}
	}
	return out
}

func hasAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

func hasAny(have, want []string) bool {
	for _, w := range want {
		if slices.Contains(have, w) {
			return true
		}
	}
	return false
}

func union(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

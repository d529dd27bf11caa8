package operator

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// operatorBox.runtime.cleanup (upstream v0.7.18): a custom resource whose
// condition has held for deleteAfter is deleted (its finalizer then runs
// onDelete as for any deletion).

// DeletionProtectionLabel is upstream's deletion-protection label (see
// katalog.DeletionProtectionLabel): cleanup never deletes a custom resource
// carrying it with "true".
const DeletionProtectionLabel = katalog.DeletionProtectionLabel

// Reasons of cleanup's events.
const (
	ReasonCleanedUp        = "CleanedUp"
	ReasonCleanupProtected = "CleanupProtected"
)

// AnnotationCleanupSince records, on a custom resource, when the operator
// first saw its cleanup condition hold (RFC 3339, the operator's clock).
// Kept on the object rather than in memory, a restart or a new leader goes
// on counting from there: deleteAfter is not postponed.
const AnnotationCleanupSince = "orkestra.orkspace.io/cleanup-since"

// cleanup evaluates the entry's cleanup on cr. It returns deleted when it
// deleted cr, and wait > 0 when the condition holds but not yet for
// deleteAfter (the reconcile then comes back after wait); cr is returned
// as written when the annotation that holds the clock was written.
func (e *entryController) cleanup(ctx context.Context, cr *unstructured.Unstructured, kids map[string]any, live *engine.Live) (_ *unstructured.Unstructured, deleted bool, wait time.Duration, err error) {
	c := e.entry.Cleanup
	if c == nil {
		return cr, false, 0, nil
	}
	self, err := e.entry.Normalize.Apply(cr.Object)
	if err != nil {
		return cr, false, 0, fmt.Errorf("operatorBox.runtime.cleanup: %w", err)
	}
	holds, err := c.When.Eval(e.entry.Scope(self, kids, live))
	if err != nil {
		return cr, false, 0, fmt.Errorf("operatorBox.runtime.cleanup: evaluating %s: %w", c.When.Source(), err)
	}
	recorded, hasSince := cr.GetAnnotations()[AnnotationCleanupSince]
	if !holds {
		if hasSince {
			// The clock starts again when the condition holds again.
			cr, err = e.setCleanupSince(ctx, cr, "")
		}
		return cr, false, 0, err
	}
	now := e.op.opts.Now()
	since, perr := time.Parse(time.RFC3339Nano, recorded)
	if !hasSince || perr != nil {
		// First seen holding (or the annotation was damaged: the clock
		// starts now, so the resource is deleted later, never earlier).
		if cr, err = e.setCleanupSince(ctx, cr, now.UTC().Format(time.RFC3339Nano)); err != nil {
			return cr, false, 0, err
		}
		since = now
	}
	if left := c.Source.DeleteAfter - now.Sub(since); left > 0 {
		return cr, false, min(left, c.Source.DeleteAfter), nil
	}
	if cr.GetLabels()[DeletionProtectionLabel] == "true" {
		e.recorder.Eventf(cr, nil, corev1.EventTypeWarning, ReasonCleanupProtected, "Cleanup",
			"%s holds, but the custom resource carries %s=true: it is not deleted; remove the label to let cleanup delete it", c.Source, DeletionProtectionLabel)
		return cr, false, 0, nil
	}
	e.recorder.Eventf(cr, nil, corev1.EventTypeNormal, ReasonCleanedUp, "Cleanup",
		"deleting the custom resource: %s held since %s", c.Source, since.UTC().Format(time.RFC3339))
	uid := cr.GetUID()
	err = e.client.Delete(ctx, cr, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil && !apierrors.IsNotFound(err) {
		return cr, false, 0, fmt.Errorf("operatorBox.runtime.cleanup: deleting the custom resource: %w", err)
	}
	return cr, true, 0, nil
}

// setCleanupSince writes (or, with "", removes) the cleanup clock's
// annotation and returns the custom resource as written.
func (e *entryController) setCleanupSince(ctx context.Context, cr *unstructured.Unstructured, since string) (*unstructured.Unstructured, error) {
	// A merge patch of the one annotation: no lock, nothing else is touched.
	w, err := e.patchCopy(ctx, cr, false, func(w *unstructured.Unstructured) {
		a := w.GetAnnotations()
		if since == "" {
			delete(a, AnnotationCleanupSince)
		} else {
			if a == nil {
				a = map[string]string{}
			}
			a[AnnotationCleanupSince] = since
		}
		w.SetAnnotations(a)
	})
	if err != nil {
		return cr, fmt.Errorf("operatorBox.runtime.cleanup: recording %s: %w", AnnotationCleanupSince, err)
	}
	return w, nil
}

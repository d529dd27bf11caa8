package operator

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/engine"
)

// operatorBox.runtime.cleanup (upstream v0.7.18): a custom resource whose
// condition has held for deleteAfter is deleted (its finalizer then runs
// onDelete as for any deletion).

// DeletionProtectionLabel is upstream's deletion-protection label: upstream
// labels the custom resources it protects with it and refuses to delete
// them. Cleanup never deletes a custom resource carrying it with "true".
const DeletionProtectionLabel = "orkestra.io/deletion-protection"

// Reasons of cleanup's events.
const (
	ReasonCleanedUp        = "CleanedUp"
	ReasonCleanupProtected = "CleanupProtected"
)

// cleanupStart is when this process first saw an object's cleanup
// condition hold (uid: the object it saw, not a later one of the same
// name).
type cleanupStart struct {
	uid types.UID
	at  time.Time
}

// cleanup evaluates the entry's cleanup on cr. It returns deleted when it
// deleted cr, and wait > 0 when the condition holds but not yet for
// deleteAfter (the reconcile then comes back after wait). The clock starts
// when this process first sees the condition hold: after a restart it
// starts again, so a resource is deleted later, never earlier.
func (e *entryController) cleanup(ctx context.Context, cr *unstructured.Unstructured, kids map[string]any, live *engine.Live) (deleted bool, wait time.Duration, err error) {
	c := e.entry.Cleanup
	if c == nil {
		return false, 0, nil
	}
	key := client.ObjectKeyFromObject(cr)
	self, err := e.entry.Normalize.Apply(cr.Object)
	if err != nil {
		return false, 0, fmt.Errorf("operatorBox.runtime.cleanup: %w", err)
	}
	holds, err := c.When.Eval(e.entry.Scope(self, kids, live))
	if err != nil {
		return false, 0, fmt.Errorf("operatorBox.runtime.cleanup: evaluating %s: %w", c.When.Source(), err)
	}
	if !holds {
		e.cleanupSince.Delete(key)
		return false, 0, nil
	}
	now := e.op.opts.Now()
	start := cleanupStart{uid: cr.GetUID(), at: now}
	if v, ok := e.cleanupSince.Load(key); ok && v.(cleanupStart).uid == start.uid {
		start = v.(cleanupStart)
	} else {
		e.cleanupSince.Store(key, start)
	}
	if left := c.Source.DeleteAfter - now.Sub(start.at); left > 0 {
		return false, left, nil
	}
	if cr.GetLabels()[DeletionProtectionLabel] == "true" {
		e.recorder.Eventf(cr, nil, corev1.EventTypeWarning, ReasonCleanupProtected, "Cleanup",
			"%s holds, but the custom resource carries %s=true: it is not deleted; remove the label to let cleanup delete it", c.Source, DeletionProtectionLabel)
		return false, 0, nil
	}
	e.recorder.Eventf(cr, nil, corev1.EventTypeNormal, ReasonCleanedUp, "Cleanup",
		"deleting the custom resource: %s held since %s", c.Source, start.at.UTC().Format(time.RFC3339))
	uid := cr.GetUID()
	err = e.client.Delete(ctx, cr, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil && !apierrors.IsNotFound(err) {
		return false, 0, fmt.Errorf("operatorBox.runtime.cleanup: deleting the custom resource: %w", err)
	}
	e.cleanupSince.Delete(key)
	return true, 0, nil
}

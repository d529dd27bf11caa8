package operator

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Suspending a custom resource, as kro's `kro.run/reconcile: suspended`:
// with the annotation below set to "true" the runtime makes no write for it
// — no child is created, corrected or deleted, no finalizer added or
// removed, onDelete does not run — and only says so in its Ready
// condition (reason Suspended, with an event). Removing the annotation (or
// setting it to anything else) resumes: the change reconciles it at once.

// AnnotationSuspend suspends the reconciling of the custom resource that
// carries it with the value "true".
const AnnotationSuspend = "orkestra.orkspace.io/suspend"

// ReasonSuspended is the Ready condition's reason while suspended.
const ReasonSuspended = "Suspended"

// Suspended reports whether a custom resource is suspended.
func Suspended(cr *unstructured.Unstructured) bool {
	return cr.GetAnnotations()[AnnotationSuspend] == "true"
}

// holdSuspended writes the Ready condition of a suspended custom resource.
func (e *entryController) holdSuspended(ctx context.Context, cr *unstructured.Unstructured) (reconcile.Result, bool, error) {
	msg := "reconciling is suspended by the annotation " + AnnotationSuspend + `: "true"; no child is created, corrected or deleted; remove the annotation to resume`
	if cr.GetDeletionTimestamp() != nil {
		msg = "being deleted, but reconciling is suspended by the annotation " + AnnotationSuspend + `: "true", so onDelete and the finalizer wait; remove the annotation to let the deletion finish`
	}
	return e.hold(ctx, cr, ReasonSuspended, msg, 0)
}

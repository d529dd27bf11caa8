package operator

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// What holds a custom resource's reconcile back, each said in its Ready
// condition: the entries its entry depends on (dependsOn; upstream starts a
// dependent entry once they are started or healthy), and preReconcile's
// reconcile gate (upstream: pkg/katalog/pre_reconcile.go).

// Reasons of a Ready condition that holds a reconcile back.
const (
	ReasonWaiting = "WaitingForDependency"
	ReasonGated   = "Gated"
)

// dependencyRetry is how often a dependent looks at its dependencies again.
const dependencyRetry = 2 * time.Second

// waitingFor says what the entry's dependsOn still waits for; "" when
// nothing.
func (e *entryController) waitingFor() string {
	var waits []string
	for _, d := range e.dependencies() {
		if !d.Satisfied {
			waits = append(waits, d.Waiting)
		}
	}
	return strings.Join(waits, "; ")
}

// gateHolds evaluates preReconcile's reconcile gate on the custom resource,
// vals being the sentinels of the changes the reconcile answers: a
// sentinels list passes when one of them is true (its conditions are then
// not evaluated, as upstream's evaluateGate), else the conditions decide.
func (e *entryController) gateHolds(cr *unstructured.Unstructured, kids map[string]any, live *engine.Live, vals map[string]bool) (bool, error) {
	if list := e.entry.GateSentinels; len(list) > 0 {
		return engine.AnyTrue(list, vals), nil
	}
	if e.entry.Gate == nil {
		return true, nil
	}
	self, err := e.entry.Normalize.Apply(cr.Object)
	if err != nil {
		return false, fmt.Errorf("operatorBox.preReconcile: %w", err)
	}
	s := e.entry.Scope(self, kids, live)
	engine.SetSentinels(s, e.entry.Sentinels, vals)
	ok, err := e.entry.Gate.Eval(s)
	if err != nil {
		err = fmt.Errorf("operatorBox.preReconcile: evaluating %s: %w", e.entry.Gate.Source(), err)
		switch e.entry.GateFail {
		case katalog.FailOpen:
			// failPolicy: open — the gate passes; the error is still said.
			e.recorder.Eventf(cr, nil, corev1.EventTypeWarning, ReasonGateFailedOpen, "Reconcile", "%s; failPolicy: open lets the reconcile run", truncate(err.Error(), 900))
			return true, nil
		case katalog.FailClosed:
			return false, &gateClosedError{err}
		}
		return false, err
	}
	return ok, nil
}

// heldByChange reports a reconcile gate that did not hold only because of
// what did not change: its sentinels list, or conditions that would hold
// were every sentinel true. Such a reconcile is skipped without a word —
// the custom resource's state does not hold it back, so its Ready
// condition stays as it is (upstream writes nothing on a gated item).
func (e *entryController) heldByChange(cr *unstructured.Unstructured, kids map[string]any, live *engine.Live) bool {
	if len(e.entry.GateSentinels) > 0 {
		return true
	}
	if len(e.entry.Sentinels) == 0 {
		return false
	}
	ok, err := e.gateHolds(cr, kids, live, allTrue(e.entry.Sentinels))
	return ok && err == nil
}

// ReasonGateFailedOpen: the reconcile gate could not be evaluated and its
// failPolicy: open let the reconcile run.
const ReasonGateFailedOpen = "GateFailedOpen"

// gateClosedError is a gate that could not be evaluated and holds the
// reconcile back (failPolicy: closed).
type gateClosedError struct{ err error }

func (g *gateClosedError) Error() string { return g.err.Error() }
func (g *gateClosedError) Unwrap() error { return g.err }

// enqueues reports whether preReconcile's enqueue gate lets a custom
// resource into the work queue, vals being the sentinels of the change (it
// may when the gate cannot be evaluated: the reconcile then reports why).
func (e *entryController) enqueues(obj client.Object, vals map[string]bool) bool {
	if list := e.entry.EnqueueGateSentinels; len(list) > 0 {
		return engine.AnyTrue(list, vals)
	}
	if e.entry.EnqueueGate == nil {
		return true
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return true
	}
	s := engine.NewScope(u.Object)
	engine.SetSentinels(s, e.entry.Sentinels, vals)
	ok, err := e.entry.EnqueueGate.Eval(s)
	if err != nil {
		// failPolicy: closed keeps it out; otherwise it goes in and the
		// reconcile reports what the gate could not evaluate.
		return e.entry.EnqueueGateFail != katalog.FailClosed
	}
	return ok
}

// hold writes a Ready condition saying why the reconcile is held back, with
// a Normal event when the reason is new, and asks to look again after
// requeue (0: on the next change).
func (e *entryController) hold(ctx context.Context, cr *unstructured.Unstructured, reason, msg string, requeue time.Duration) (reconcile.Result, bool, error) {
	if cur, ok := currentReady(cr); !ok || cur.Reason != reason || cur.Message != msg {
		e.recorder.Eventf(cr, nil, corev1.EventTypeNormal, reason, "Reconcile", "%s", truncate(msg, 1024))
	}
	cond := metav1.Condition{Type: ConditionReady, Status: metav1.ConditionFalse, Reason: reason, Message: truncate(msg, 32768)}
	if err := e.writeStatus(ctx, cr, nil, cond); err != nil {
		if apierrors.IsConflict(err) {
			return reconcile.Result{RequeueAfter: retryAfter}, true, nil
		}
		return reconcile.Result{}, false, fmt.Errorf("writing the status: %w", err)
	}
	return reconcile.Result{RequeueAfter: requeue}, requeue > 0, nil
}

// currentReady returns the custom resource's stored Ready condition.
func currentReady(cr *unstructured.Unstructured) (metav1.Condition, bool) {
	st, _ := cr.Object["status"].(map[string]any)
	for _, c := range readConditions(st["conditions"]) {
		if c.Type == ConditionReady {
			return c, true
		}
	}
	return metav1.Condition{}, false
}

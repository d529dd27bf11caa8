package operator

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/engine"
)

// ReasonEmitEventFailed: a declared event (operatorBox.emit.events) could
// not be evaluated; the reconcile's outcome is unchanged.
const ReasonEmitEventFailed = "EmitEventFailed"

// emitEvents records the entry's declared events (operatorBox.emit.events)
// on cr after a reconcile that succeeded or failed, through the recorder
// the runtime's own events go through (the same aggregation and rate
// limits). kids are the children the reconcile read and live its live
// inputs (nil when it failed before reading them).
func (e *entryController) emitEvents(cr *unstructured.Unstructured, kids map[string]any, live *engine.Live, succeeded bool) {
	if len(e.entry.Events) == 0 {
		return
	}
	self, err := e.entry.Normalize.Apply(cr.Object)
	if err != nil {
		e.emitFailed(cr, "operatorBox.emit.events", err)
		return
	}
	s := e.entry.Scope(self, kids, live)
	for _, ev := range e.entry.Events {
		src := ev.Source
		if succeeded && !src.OnSuccess || !succeeded && !src.OnFailure {
			continue
		}
		if ev.When != nil {
			ok, err := ev.When.Eval(s)
			if err != nil {
				e.emitFailed(cr, src.Field(), fmt.Errorf("evaluating %s: %w", ev.When.Source(), err))
				continue
			}
			if !ok {
				continue
			}
		}
		v, _, err := ev.Message.Eval(s)
		if err != nil {
			e.emitFailed(cr, src.Field()+".message", err)
			continue
		}
		msg, _ := v.(string)
		if msg == "" && v != nil {
			msg = fmt.Sprint(v)
		}
		e.recorder.Eventf(cr, nil, src.Type, src.Reason, "Reconcile", "%s", truncate(msg, 1024))
	}
}

// emitFailed reports a declared event that could not be evaluated: a
// Warning event and the log (the events are not retried on their own).
func (e *entryController) emitFailed(cr *unstructured.Unstructured, field string, err error) {
	msg := field + ": " + err.Error()
	e.log.Info("declared event not recorded", "object", client.ObjectKeyFromObject(cr).String(), "error", msg)
	e.recorder.Eventf(cr, nil, corev1.EventTypeWarning, ReasonEmitEventFailed, "Reconcile", "%s", truncate(msg, 1024))
}

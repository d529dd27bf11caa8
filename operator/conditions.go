package operator

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ReasonConditionFailed: a condition of status.conditions could not be
// evaluated; it was written Unknown.
const ReasonConditionFailed = "ConditionFailed"

// conditionsFailed reports conditions that could not be evaluated (written
// Unknown, reason EvaluationFailed): one Warning event each, and the text
// for the Ready condition's message.
func (e *entryController) conditionsFailed(cr *unstructured.Unstructured, errs []error) string {
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = err.Error()
		e.recorder.Eventf(cr, nil, corev1.EventTypeWarning, ReasonConditionFailed, "Reconcile", "%s", truncate(msgs[i], 1024))
	}
	return fmt.Sprintf("%d condition(s) Unknown, their evaluation failed: %s", len(errs), truncate(strings.Join(msgs, "; "), 4096))
}

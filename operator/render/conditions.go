package render

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// Status conditions from CEL (engine.StatusCondition): evaluated with the
// status fields, over the custom resource and its children. A condition
// whose status, reason or message fails to evaluate is Unknown, reason
// EvaluationFailed, with the error as its message — as Kubernetes says a
// condition it cannot determine — and the error is reported.

// Reasons a condition gets when the katalog gives none, and when it cannot
// be evaluated.
const (
	ReasonConditionMet    = "ConditionMet"
	ReasonConditionNotMet = "ConditionNotMet"
	ReasonEvalFailed      = "EvaluationFailed"
)

// maxConditionMessage is metav1.Condition's bound on a message.
const maxConditionMessage = 32768

// conditions evaluates the entry's status.conditions.
func (r *renderer) conditions() ([]metav1.Condition, []error) {
	var out []metav1.Condition
	var errs []error
	for _, sc := range r.entry.Conditions {
		c, err := r.condition(sc)
		if err != nil {
			errs = append(errs, err)
			c = metav1.Condition{Type: sc.Type, Status: metav1.ConditionUnknown, Reason: ReasonEvalFailed, Message: truncateMessage(err.Error())}
		}
		out = append(out, c)
	}
	return out, errs
}

func (r *renderer) condition(sc *engine.StatusCondition) (metav1.Condition, error) {
	c := metav1.Condition{Type: sc.Type, Status: metav1.ConditionFalse, Reason: ReasonConditionNotMet}
	holds := sc.Const
	if sc.Status != nil {
		ok, err := sc.Status.Eval(r.scope)
		if err != nil {
			return c, r.errorf(sc.Field+".status", fmt.Errorf("evaluating %s: %w", sc.Status.Source(), err))
		}
		holds = ok
	}
	if holds {
		c.Status, c.Reason = metav1.ConditionTrue, ReasonConditionMet
	}
	if sc.Reason != nil {
		reason, err := r.conditionText(sc.Reason)
		if err != nil {
			return c, r.errorf(sc.Field+".reason", err)
		}
		if reason != "" {
			if !katalog.ConditionReasonValid(reason) {
				return c, r.errorf(sc.Field+".reason", fmt.Errorf("%q is not a valid reason (CamelCase letters, digits, _, and :, starting with a letter)", reason))
			}
			c.Reason = reason
		}
	}
	if sc.Message != nil {
		msg, err := r.conditionText(sc.Message)
		if err != nil {
			return c, r.errorf(sc.Field+".message", err)
		}
		c.Message = truncateMessage(msg)
	}
	return c, nil
}

// conditionText evaluates a reason or message; an absent or omitted value
// is "".
func (r *renderer) conditionText(n *engine.Node) (string, error) {
	v, ok, err := n.Eval(r.scope)
	if err != nil || !ok {
		return "", err
	}
	s, isStr := v.(string)
	if !isStr {
		return fmt.Sprint(v), nil
	}
	return s, nil
}

func truncateMessage(s string) string {
	if len(s) <= maxConditionMessage {
		return s
	}
	return s[:maxConditionMessage-3] + "..."
}

package render

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/orkestra-cel/engine"
)

// Conditions from CEL: True or False by their status, with the reason and
// message given (defaults otherwise); one that cannot be evaluated is
// Unknown with the error, and the others are still made.
func TestConditionsRender(t *testing.T) {
	e := entry()
	broken := failing("no such key: x")
	broken.Field = "operatorBox.status.conditions[3].message"
	e.Conditions = []*engine.StatusCondition{
		{Type: "Scaled", Field: "operatorBox.status.conditions[0]", Status: cond("spec.replicas", int64(3)),
			Reason: tmpl("Replicas%v", "spec.replicas"), Message: tmpl("%v replicas", "spec.replicas")},
		{Type: "Paused", Field: "operatorBox.status.conditions[1]", Status: cond("spec.paused", true)},
		{Type: "Pinned", Field: "operatorBox.status.conditions[2]", Const: true},
		{Type: "Broken", Field: "operatorBox.status.conditions[3]", Const: true, Message: broken},
		{Type: "BadReason", Field: "operatorBox.status.conditions[4]", Const: true, Reason: tmpl("not %v", "spec.replicas")},
	}
	res := renderOne(t, e, widget(map[string]any{"replicas": int64(3)}))
	var got []string
	for _, c := range res.Conditions {
		got = append(got, strings.Join([]string{c.Type, string(c.Status), c.Reason, c.Message}, " | "))
	}
	want := []string{
		"Scaled | True | Replicas3 | 3 replicas",
		"Paused | False | ConditionNotMet | ",
		"Pinned | True | ConditionMet | ",
		"Broken | Unknown | EvaluationFailed | rendering Widget prod/shop: operatorBox.status.conditions[3].message: evaluating ${boom} (at test.yaml:1:1): no such key: x",
		`BadReason | Unknown | EvaluationFailed | rendering Widget prod/shop: operatorBox.status.conditions[4].reason: "not 3" is not a valid reason (CamelCase letters, digits, _, and :, starting with a letter)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("conditions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(res.ConditionErrors) != 2 {
		t.Errorf("condition errors = %v", res.ConditionErrors)
	}
	if res.Conditions[0].Status != metav1.ConditionTrue {
		t.Errorf("status %q", res.Conditions[0].Status)
	}
}

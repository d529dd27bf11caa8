package katalog

import (
	"fmt"
	"regexp"

	"gopkg.in/yaml.v3"
)

// Status conditions from CEL (kro: website/docs/docs/concepts/rgd/
// 06-status-conditions.md): `status.conditions:` lists conditions the
// runtime writes beside its own Ready, each `type`, `status` (a CEL
// boolean), `reason` and `message`. Upstream's `conditions: true|false`
// (whether the Ready condition is written) is read too.

// StatusCondition is one condition of status.conditions.
type StatusCondition struct {
	Pos Pos
	// Type is the condition's type, a literal.
	Type    string
	TypePos Pos
	// Status is a CEL boolean (or legacy condition) string, or a literal
	// true/false.
	Status *Value
	// Reason and Message are values (literals or expressions); nil when
	// absent.
	Reason, Message *Value
}

var statusConditionKeys = []string{"type", "status", "reason", "message"}

// conditionTypeRe and conditionReasonRe are metav1.Condition's validation
// patterns.
var (
	conditionTypeRe   = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`)
	conditionReasonRe = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)
)

// ReservedConditions are the condition types the runtime writes itself.
var ReservedConditions = []string{"Ready"}

// ConditionReasonValid reports whether s may be a condition's reason.
func ConditionReasonValid(s string) bool { return len(s) <= 1024 && conditionReasonRe.MatchString(s) }

// statusConditions decodes status.conditions.
func (d *decoder) statusConditions(s *Status, n *yaml.Node, path string) {
	n = Resolve(n)
	switch {
	case n == nil || isNull(n):
		return
	case n.Kind == yaml.ScalarNode && n.Tag == "!!bool":
		if d.boolean(n, path) {
			return // upstream's default: the Ready condition is written
		}
		d.errorf(n, path, "conditions: false turns off the Ready condition in the original katalog format, which this runtime always writes where the status schema holds conditions; remove it (leave conditions out of the CRD's status schema to have none written)")
		return
	case n.Kind != yaml.SequenceNode:
		d.errorf(n, path, "conditions is a list of `- type: … / status: <CEL boolean> / reason: … / message: …` entries")
		return
	}
	for i, item := range n.Content {
		ipath := fmt.Sprintf("%s[%d]", path, i)
		o := d.mapping(item, ipath, statusConditionKeys, nil)
		c := &StatusCondition{Pos: d.pos(Resolve(item))}
		if !o.has("type") || !o.has("status") {
			d.errorf(item, ipath, "a condition needs type: and status: (a CEL boolean such as \"self.spec.replicas > 0\")")
			continue
		}
		c.Type, c.TypePos = d.str(o["type"].value, ipath+".type"), d.pos(o["type"].value)
		switch {
		case !conditionTypeRe.MatchString(c.Type) || len(c.Type) > 316:
			d.errorf(o["type"].value, ipath+".type", "condition type %q is not valid: CamelCase letters and digits such as Available (optionally prefixed by a DNS subdomain and /), at most 316 characters", c.Type)
		case contains(ReservedConditions, c.Type):
			d.errorf(o["type"].value, ipath+".type", "the runtime writes the %s condition itself (True when every child is ready: readyWhen on the children says when); give this condition another type", c.Type)
		}
		c.Status = d.value(o["status"].value, ipath+".status")
		if c.Status.Kind != StringValue && c.Status.Kind != BoolValue {
			d.errorf(o["status"].value, ipath+".status", "status is a CEL boolean such as \"self.spec.replicas > 0\" (or true, false), got %s", c.Status.Kind)
		}
		if f, ok := o["reason"]; ok {
			c.Reason = d.value(f.value, ipath+".reason")
			if c.Reason.Kind != StringValue {
				d.errorf(f.value, ipath+".reason", "reason is a string, got %s", c.Reason.Kind)
			} else if !hasExpression(c.Reason.Str) && !ConditionReasonValid(c.Reason.Str) {
				d.errorf(f.value, ipath+".reason", "reason %q is not valid: CamelCase letters, digits, _ , and : starting with a letter, such as MinimumReplicasAvailable", c.Reason.Str)
			}
		}
		if f, ok := o["message"]; ok {
			c.Message = d.value(f.value, ipath+".message")
		}
		s.Conditions = append(s.Conditions, c)
	}
}

// expressionRe finds a CEL expression or a legacy template in a string.
var expressionRe = regexp.MustCompile(`\$\{|\{\{`)

// hasExpression reports whether s holds a CEL expression or a legacy
// template.
func hasExpression(s string) bool {
	return expressionRe.MatchString(s)
}

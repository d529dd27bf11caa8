package engine

import (
	"fmt"

	"github.com/orkspace/orkestra-cel/katalog"
)

// StatusCondition is one compiled status.conditions entry (kro's custom
// status conditions): written beside the runtime's own Ready after every
// successful reconcile.
type StatusCondition struct {
	Source *katalog.StatusCondition
	Type   string
	// Field is its path for messages: operatorBox.status.conditions[0].
	Field string
	// Status holds when the condition is True; nil when Const says.
	Status Condition
	Const  bool
	// Reason and Message are string values; nil when absent.
	Reason, Message *Node
}

// statusConditions compiles an entry's status.conditions (motifs' included):
// each type once; status a CEL boolean over the custom resource and its
// children, as `when:`; reason and message strings.
func (c *compiler) statusConditions(sc compileScope, conds []*katalog.StatusCondition) []*StatusCondition {
	var out []*StatusCondition
	seen := map[string]katalog.Pos{}
	for i, src := range conds {
		field := fmt.Sprintf("operatorBox.status.conditions[%d]", i)
		if prev, dup := seen[src.Type]; dup {
			c.errorf(sc, src.TypePos, field+".type", "condition %s is already declared at %s; declare each type once", src.Type, prev)
			continue
		}
		seen[src.Type] = src.TypePos
		if i == 0 {
			c.checkConditionsSchema(sc, src)
		}
		sc2 := &StatusCondition{Source: src, Type: src.Type, Field: field}
		if src.Status.Kind == katalog.BoolValue {
			sc2.Const, _ = src.Status.Scalar.(bool)
		} else {
			sc2.Status = c.when(sc, &katalog.When{Pos: src.Status.Pos, Exprs: []*katalog.Value{src.Status}}, true, field+".status")
		}
		t := target{coerce: CoerceTyped}
		if src.Reason != nil {
			t.field = field + ".reason"
			sc2.Reason = c.value(sc, src.Reason, stringSchema, t)
		}
		if src.Message != nil {
			t.field = field + ".message"
			sc2.Message = c.value(sc, src.Message, stringSchema, t)
		}
		out = append(out, sc2)
	}
	return out
}

// checkConditionsSchema warns when the status schema cannot hold
// conditions: the API server would drop them.
func (c *compiler) checkConditionsSchema(sc compileScope, src *katalog.StatusCondition) {
	s := property(sc.entry.Schema(), "status")
	if s == nil && sc.entry.Schema().XPreserveUnknownFields || s != nil && (s.XPreserveUnknownFields || property(s, "conditions") != nil) {
		return
	}
	c.warnf(sc, src.Pos, "operatorBox.status.conditions", "the status schema of %s has no conditions, so the API server drops them; declare status.conditions (a list of objects) in the CRD", sc.entry.APITypes.Version)
}

package katalog

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// when decodes `when:`/`or:`: a CEL string, or a list of CEL strings and
// legacy structured conditions.
func (d *decoder) when(n *yaml.Node, path string) *When {
	n = Resolve(n)
	w := &When{Pos: d.pos(n)}
	if n == nil || isNull(n) {
		return w
	}
	switch n.Kind {
	case yaml.ScalarNode:
		w.Exprs = append(w.Exprs, d.value(n, path))
	case yaml.SequenceNode:
		for i, item := range n.Content {
			ipath := fmt.Sprintf("%s[%d]", path, i)
			item = Resolve(item)
			switch {
			case item == nil:
			case item.Kind == yaml.ScalarNode:
				w.Exprs = append(w.Exprs, d.value(item, ipath))
			case item.Kind == yaml.MappingNode:
				if c := d.condition(item, ipath); c != nil {
					w.Conditions = append(w.Conditions, c)
				}
			default:
				d.errorf(item, ipath, "a condition is a CEL string or a `- field: … / equals: …` map, got %s", describe(item))
			}
		}
	case yaml.MappingNode:
		if c := d.condition(n, path); c != nil {
			w.Conditions = append(w.Conditions, c)
		}
	default:
		d.errorf(n, path, "when takes a CEL string or a list of conditions")
	}
	return w
}

// ConditionOperators are the structured-condition operators with their
// aliases resolved to canonical names. The type operators (typeOf with a
// value, typeMap, …) are written with operator: only, as in the original.
var ConditionOperators = map[string]string{
	"equals": "equals", "notEquals": "notEquals",
	"contains": "contains", "notContains": "notContains",
	"prefix": "prefix", "notPrefix": "notPrefix",
	"suffix": "suffix", "notSuffix": "notSuffix",
	"regex": "regex", "exists": "exists", "notExists": "notExists",
	"gt": "gt", "greaterThan": "gt", "lt": "lt", "lessThan": "lt",
	"gte": "gte", "min": "gte", "greaterThanOrEqual": "gte",
	"lte": "lte", "max": "lte", "lessThanOrEqual": "lte",
	"between": "between", "notBetween": "notBetween",
	"in": "in", "notIn": "notIn",
}

// TypeOperators are the operators that test the field's type; typeOf takes
// the type name as its value (string, number, bool, map, slice, null).
var TypeOperators = map[string]bool{
	"typeOf": true, "typeMap": true, "typeList": true, "typeString": true,
	"typeNumber": true, "typeBool": true, "typeNull": true,
}

// shorthandsUpstreamIgnored are short forms this runtime accepts that the
// original did not know: it ignored them and tested that the field exists.
var shorthandsUpstreamIgnored = map[string]bool{"gt": true, "lt": true, "gte": true, "lte": true}

func operatorNames() []string {
	names := make([]string, 0, len(ConditionOperators))
	for k := range ConditionOperators {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func (d *decoder) condition(n *yaml.Node, path string) *Condition {
	known := append([]string{"field", "operator", "value", "negate", "time", "dayOfWeek", "cron", "duration"}, operatorNames()...)
	o := d.mapping(n, path, known, []string{"notify", "source"})
	c := &Condition{Pos: d.pos(n)}
	c.Negate = d.boolean(o["negate"].value, path+".negate")
	if d.clockCondition(c, o, n, path) {
		return c
	}
	if !o.has("field") {
		d.errorf(n, path, "a structured condition needs `field:` (a dot path such as spec.tier), or is a clock condition (time:, dayOfWeek: or cron:)")
		return nil
	}
	c.Field, c.FieldPos = d.str(o["field"].value, path+".field"), d.pos(o["field"].value)
	var ops []string
	for k := range o {
		if _, ok := ConditionOperators[k]; ok {
			ops = append(ops, k)
		}
	}
	sort.Strings(ops)
	switch {
	case o.has("operator"):
		if len(ops) > 0 {
			d.errorf(n, path, "use either operator:/value: or the short form %s:, not both", ops[0])
			return nil
		}
		op := d.str(o["operator"].value, path+".operator")
		canon, ok := ConditionOperators[op]
		if TypeOperators[op] {
			canon, ok = op, true
		}
		if !ok {
			d.errorf(o["operator"].value, path+".operator", "unknown operator %q%s", op, didYouMeanOrList(op, append(operatorNames(), "typeOf", "typeMap", "typeList", "typeString", "typeNumber", "typeBool", "typeNull")))
			return nil
		}
		c.Operator = canon
		c.Value, c.ValuePos = d.operand(o["value"].value, path+".value"), d.pos(o["value"].value)
	case len(ops) == 1:
		c.Operator = ConditionOperators[ops[0]]
		c.Value, c.ValuePos = d.operand(o[ops[0]].value, path+"."+ops[0]), d.pos(o[ops[0]].value)
		d.upstreamShorthand(ops[0], c, o[ops[0]].key, path)
	case len(ops) == 0 && o.has("value"):
		// The original's reading: a value without an operator is equals.
		c.Operator = "equals"
		c.Value, c.ValuePos = d.operand(o["value"].value, path+".value"), d.pos(o["value"].value)
	case len(ops) == 0:
		// …and a condition with neither tests that the field exists.
		c.Operator = "exists"
	default:
		d.errorf(n, path, "the condition on %s has several operators (%s); write one condition per operator", c.Field, strings.Join(ops, ", "))
		return nil
	}
	return c
}

// upstreamShorthand warns where the original read a short form differently:
// it skipped a short form with an empty value, and did not know gt:, lt:,
// gte: and lte:, so it tested that the field exists instead. Its exists
// also failed on the text "<no value>" (pkg/types/when.go applyOperator),
// the one value where notEquals: "" and exists part.
func (d *decoder) upstreamShorthand(key string, c *Condition, k *yaml.Node, path string) {
	switch {
	case shorthandsUpstreamIgnored[key]:
		d.warnf(k, path+"."+key, "%s: is read here as a numeric comparison; the original engine did not know it (it knew greaterThan, lessThan, greaterThanOrEqual, lessThanOrEqual) and tested only that %s exists; write %s: to mean the comparison in both", key, c.Field, map[string]string{"gt": "greaterThan", "lt": "lessThan", "gte": "greaterThanOrEqual", "lte": "lessThanOrEqual"}[key])
	case c.Value == "" && c.Operator == "notEquals":
		d.warnf(k, path+"."+key, "%s: \"\" is read here as written (%s is not empty); the original engine skipped a short form with an empty value and tested that %s exists instead, which fails also when it holds the text \"<no value>\"; write exists: true to mean the same in both", key, c.Field, c.Field)
	case c.Value == "" && c.Operator != "exists" && c.Operator != "notExists":
		d.warnf(k, path+"."+key, "%s: \"\" is read here as written; the original engine skipped a short form with an empty value and tested that %s exists instead; write notExists: true for \"%s is empty\", or exists: true for the original's reading", key, c.Field, c.Field)
	}
}

// operand stringifies a condition operand the way the original engine
// compared it: a list becomes its comma-joined items.
func (d *decoder) operand(n *yaml.Node, path string) string {
	n = Resolve(n)
	if n == nil || isNull(n) {
		return ""
	}
	if n.Kind == yaml.SequenceNode {
		return strings.Join(d.strList(n, path), ",")
	}
	return d.str(n, path)
}

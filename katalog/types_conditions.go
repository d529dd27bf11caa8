package katalog

import "time"

// When is a condition: CEL strings (all must hold) and/or legacy structured
// conditions (all must hold). For `or:` blocks any must hold.
type When struct {
	Pos        Pos
	Exprs      []*Value
	Conditions []*Condition
}

// Empty reports whether there is nothing to check.
func (w *When) Empty() bool { return w == nil || (len(w.Exprs) == 0 && len(w.Conditions) == 0) }

// Condition is a legacy structured condition (`- field: spec.tier` / `equals: x`).
type Condition struct {
	Pos Pos
	// Field is the dot path (`spec.tier`) or a legacy template.
	Field    string
	FieldPos Pos
	// Operator is the canonical operator name (equals, notEquals, gt, …);
	// Value its operand as written (stringified).
	Operator string
	Value    string
	ValuePos Pos
	Negate   bool
	// Clock conditions have no field: exactly one of Time, DayOfWeek and
	// Cron is set (Operator is then empty).
	Time      *TimeWindow
	DayOfWeek *DayOfWeek
	// Cron is a schedule; the condition holds for Duration after each time
	// it fires (0: until it fires again).
	Cron     string
	Duration time.Duration
}

// TimeWindow is a `time:` condition: After and Before are "HH:MM" (UTC);
// either may be empty.
type TimeWindow struct {
	After, Before string
	Pos           Pos
}

// DayOfWeek is a `dayOfWeek:` condition: the first of Weekday, Weekend, In,
// NotIn that is set decides.
type DayOfWeek struct {
	Weekday, Weekend *bool
	In, NotIn        []string
	Pos              Pos
}

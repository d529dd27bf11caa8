package gotmpl

import (
	"testing"
	"time"

	celgo "github.com/google/cel-go/cel"

	"github.com/orkspace/orkestra-cel/engine"
	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/katalog"
)

// realCEL is the production CEL backend with the legacy helpers.
func realCEL(t testing.TB) engine.Backend {
	b, err := celengine.New(celengine.Options{Libraries: []celgo.EnvOption{CELLibrary()}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// evalBothWays evaluates one condition compiled to CEL (the real backend)
// and in Go; both must agree.
func evalBothWays(t *testing.T, c *katalog.Condition, s *engine.Scope) bool {
	t.Helper()
	results := map[string]bool{}
	for name, b := range map[string]*Backend{"cel": New(realCEL(t)), "go": New(nil)} {
		cc, diags := b.CompileStructured([]*katalog.Condition{c}, true, condCtx(t))
		if diags.HasErrors() {
			t.Fatalf("%s: %v", name, diags)
		}
		ok, err := cc.Eval(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		results[name] = ok
	}
	if results["cel"] != results["go"] {
		t.Errorf("%s: CEL and Go disagree: %v", describeCondition(c), results)
	}
	return results["go"]
}

// The type operators (upstream pkg/types/when.go applyOperator, the
// ConditionType* cases: note.TypeOf of NavigateRawPath, "null" when
// missing).
func TestTypeOperators(t *testing.T) {
	cases := []struct {
		field, op, value string
		want             bool
	}{
		{"spec.schedule", "typeOf", "string", true},
		{"spec.config", "typeOf", "map", true},
		{"spec.config", "typeMap", "", true},
		{"spec.schedule", "typeMap", "", false},
		{"spec.tags", "typeList", "", true},
		{"spec.schedule", "typeString", "", true},
		{"spec.replicas", "typeNumber", "", true},
		{"spec.ratio", "typeNumber", "", true},
		{"spec.enabled", "typeBool", "", true},
		{"spec.missing", "typeNull", "", true},
		{"spec.missing", "typeOf", "null", true},
		{"spec.image", "typeNull", "", false},
	}
	s := engine.NewScope(condObject())
	for _, tc := range cases {
		if got := evalBothWays(t, cond(tc.field, tc.op, tc.value), s); got != tc.want {
			t.Errorf("%s %s %q = %v, want %v", tc.field, tc.op, tc.value, got, tc.want)
		}
		if got := evalBothWays(t, negated(cond(tc.field, tc.op, tc.value)), s); got == tc.want {
			t.Errorf("negated %s %s %q = %v", tc.field, tc.op, tc.value, got)
		}
	}
}

func clockEntry(pos int) *katalog.Condition {
	return &katalog.Condition{Pos: katalog.Pos{File: "k.yaml", Line: pos, Col: 3}}
}

// Clock conditions (upstream pkg/types/when.go evalTimeWindow,
// evalDayOfWeek, evalCronWindow), in UTC.
func TestClockConditions(t *testing.T) {
	tru, fal := true, false
	window := func(after, before string) *katalog.Condition {
		c := clockEntry(1)
		c.Time = &katalog.TimeWindow{After: after, Before: before}
		return c
	}
	day := func(d katalog.DayOfWeek) *katalog.Condition {
		c := clockEntry(1)
		c.DayOfWeek = &d
		return c
	}
	cronc := func(expr string, dur time.Duration) *katalog.Condition {
		c := clockEntry(1)
		c.Cron, c.Duration = expr, dur
		return c
	}
	cases := []struct {
		now  string
		c    *katalog.Condition
		want bool
	}{
		{"2026-07-14T14:30:00Z", window("09:00", "18:00"), true},
		{"2026-07-14T18:00:00Z", window("09:00", "18:00"), true}, // before is inclusive (now.After(before) fails)
		{"2026-07-14T18:00:01Z", window("09:00", "18:00"), false},
		{"2026-07-14T08:59:59Z", window("09:00", "18:00"), false},
		{"2026-07-14T23:00:00Z", window("22:00", ""), true},
		{"2026-07-14T01:00:00Z", window("", "06:00"), true},
		{"2026-07-14T23:00:00Z", window("22:00", "06:00"), false},
		{"2026-07-14T12:00:00Z", day(katalog.DayOfWeek{Weekday: &tru}), true}, // Tuesday
		{"2026-07-18T12:00:00Z", day(katalog.DayOfWeek{Weekday: &tru}), false},
		{"2026-07-18T12:00:00Z", day(katalog.DayOfWeek{Weekday: &fal}), true},
		{"2026-07-18T12:00:00Z", day(katalog.DayOfWeek{Weekend: &tru}), true},
		{"2026-07-14T12:00:00Z", day(katalog.DayOfWeek{Weekend: &fal}), true},
		{"2026-07-14T12:00:00Z", day(katalog.DayOfWeek{In: []string{"monday", "Tuesday"}}), true},
		{"2026-07-15T12:00:00Z", day(katalog.DayOfWeek{In: []string{"monday", "Tuesday"}}), false},
		{"2026-07-15T12:00:00Z", day(katalog.DayOfWeek{NotIn: []string{"Saturday", "SUNDAY"}}), true},
		{"2026-07-19T12:00:00Z", day(katalog.DayOfWeek{NotIn: []string{"Saturday", "SUNDAY"}}), false},
		// Open for 9h after 09:00 on weekdays.
		{"2026-07-14T14:30:00Z", cronc("0 9 * * 1-5", 9*time.Hour), true},
		{"2026-07-14T18:30:00Z", cronc("0 9 * * 1-5", 9*time.Hour), false},
		{"2026-07-18T10:00:00Z", cronc("0 9 * * 1-5", 9*time.Hour), false},
		// No duration: one period (an hourly schedule is always open).
		{"2026-07-18T10:17:00Z", cronc("@hourly", 0), true},
	}
	s := engine.NewScope(condObject())
	for _, tc := range cases {
		now, err := time.Parse(time.RFC3339, tc.now)
		if err != nil {
			t.Fatal(err)
		}
		restore := engine.SetClock(func() time.Time { return now })
		got := evalBothWays(t, tc.c, s)
		tc.c.Negate = true
		neg := evalBothWays(t, tc.c, s)
		restore()
		if got != tc.want || neg == tc.want {
			t.Errorf("at %s %s = %v (negated %v), want %v", tc.now, describeCondition(tc.c), got, neg, tc.want)
		}
	}
}

// A clock condition tells the operator when it may change.
func TestClockConditionTimers(t *testing.T) {
	tru := true
	now := time.Date(2026, 7, 14, 14, 30, 0, 0, time.UTC)
	w := clockEntry(1)
	w.Time = &katalog.TimeWindow{After: "09:00", Before: "18:00"}
	d := clockEntry(1)
	d.DayOfWeek = &katalog.DayOfWeek{Weekday: &tru}
	cr := clockEntry(1)
	cr.Cron, cr.Duration = "0 9 * * 1-5", 9*time.Hour
	cases := []struct {
		c    *katalog.Condition
		want time.Time
	}{
		{w, time.Date(2026, 7, 14, 18, 0, 0, 0, time.UTC)},
		{d, time.Date(2026, 7, 15, 0, 0, 0, 0, time.UTC)},
		{cr, time.Date(2026, 7, 14, 18, 0, 0, 0, time.UTC)}, // the window opened at 09:00 closes at 18:00
	}
	for _, tc := range cases {
		c, diags := New(realCEL(t)).CompileStructured([]*katalog.Condition{tc.c}, true, condCtx(t))
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		if got := c.(engine.Timed).NextChange(now); !got.Equal(tc.want) {
			t.Errorf("%s: next change %v, want %v", describeCondition(tc.c), got, tc.want)
		}
	}
	c, _ := New(realCEL(t)).CompileStructured([]*katalog.Condition{cond("spec.tier", "equals", "x")}, true, condCtx(t))
	if got := c.(engine.Timed).NextChange(now); !got.IsZero() {
		t.Errorf("a field condition changes only with the object, got %v", got)
	}
}

func TestClockConditionErrors(t *testing.T) {
	c := clockEntry(1)
	c.Cron, c.FieldPos = "every day", katalog.Pos{File: "k.yaml", Line: 7, Col: 15}
	_, diags := New(nil).CompileStructured([]*katalog.Condition{c}, true, condCtx(t))
	want := `k.yaml:7:15: [things] when.cron: cron "every day" does not parse (expected exactly 5 fields, found 2: [every day]); the original engine treated the condition as always false`
	if got := diagString(diags); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

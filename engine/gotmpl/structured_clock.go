package gotmpl

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/notes"
	"github.com/orkspace/orkestra-cel/katalog"
)

// Clock conditions (`time:`, `dayOfWeek:`, `cron:`) and the type operators
// (typeOf, typeMap, …) of structured conditions, with the original's
// semantics (upstream pkg/types/when.go: evalTimeWindow, evalDayOfWeek,
// evalCronWindow, and applyOperator's ConditionType* cases over
// NavigateRawPath). The clock is read in UTC: the original read the operator
// process's local time zone, which is UTC in its published image.

// typeNames are the names typeOf gives (note.TypeOf).
var typeNames = map[string]bool{"string": true, "number": true, "bool": true, "map": true, "slice": true, "null": true}

// typeOperatorName is the type a type operator tests ("" for typeOf, whose
// value names it).
var typeOperatorName = map[string]string{
	"typeOf": "", "typeMap": "map", "typeList": "slice", "typeString": "string",
	"typeNumber": "number", "typeBool": "bool", "typeNull": "null",
}

// typeCondCEL is a type operator over a dot path in CEL.
func typeCondCEL(op, path, value string) string {
	want := typeOperatorName[op]
	if op == "typeOf" {
		want = value
	}
	return "legacy.typeOf(self, " + celString(path) + ") == " + celString(want)
}

// cronWindowTimer: the window opens at the next fire and closes dur after
// the fire that opened it.
func cronWindowTimer(s cron.Schedule, dur time.Duration) timer {
	return func(now time.Time) time.Time { return notes.NextCronWindowChange(s, dur, now) }
}

// clockCond compiles a clock condition: evaluated in Go, with its CEL form
// over the legacy helpers (and weekday()) for the CEL program and migrate.
func clockCond(c *katalog.Condition) (*goCond, error) {
	g := &goCond{negate: c.Negate}
	var e string
	switch {
	case c.Time != nil:
		after, before := c.Time.After, c.Time.Before
		g.clock = func(now time.Time) bool { return notes.InTimeWindow(now, after, before) }
		g.timer = windowTimer(after, before)
		e = "legacy.timeWindow(" + celString(after) + ", " + celString(before) + ")"
	case c.DayOfWeek != nil:
		d := c.DayOfWeek
		g.clock = func(now time.Time) bool { return notes.DayMatches(now, d.Weekday, d.Weekend, d.In, d.NotIn) }
		g.timer = nextMidnight
		e = dayOfWeekCEL(d)
	default:
		s, err := notes.ParseSchedule(c.Cron)
		if err != nil {
			return nil, fmt.Errorf("cron %q does not parse (%w); the original engine treated the condition as always false", c.Cron, err)
		}
		dur := c.Duration
		g.clock = func(now time.Time) bool { return notes.CronWindowOpen(now, s, dur) }
		g.timer = cronWindowTimer(s, dur)
		e = "legacy.cronWindow(" + celString(c.Cron) + ", " + strconv.FormatInt(int64(dur/time.Second), 10) + ")"
	}
	if c.Negate {
		e = "!(" + e + ")"
	}
	g.cel = e
	return g, nil
}

func dayOfWeekCEL(d *katalog.DayOfWeek) string {
	switch {
	case d.Weekday != nil && *d.Weekday, d.Weekend != nil && !*d.Weekend:
		return "weekday()"
	case d.Weekday != nil, d.Weekend != nil:
		return "!weekday()"
	}
	days := d.In
	e := "legacy.dayOfWeek() in "
	if len(days) == 0 {
		days, e = d.NotIn, "!(legacy.dayOfWeek() in "
	}
	q := make([]string, len(days))
	for i, day := range days {
		q[i] = celString(canonicalDay(day))
	}
	e += "[" + strings.Join(q, ", ") + "]"
	if len(d.In) == 0 {
		e += ")"
	}
	return e
}

// canonicalDay is a day name as time.Weekday prints it (the loader checked
// it names a day).
func canonicalDay(s string) string {
	for d := time.Sunday; d <= time.Saturday; d++ {
		if strings.EqualFold(s, d.String()) {
			return d.String()
		}
	}
	return s
}

// legacyDayOfWeek is today's name (UTC), for the CEL helper.
func legacyDayOfWeek() string { return engine.Now().Weekday().String() }

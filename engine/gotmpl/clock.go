package gotmpl

import (
	"text/template/parse"
	"time"

	"github.com/orkspace/orkestra-cel/engine/notes"
)

// A template that reads the clock (weekday, timeInWindow, nextCron, `time:`
// and `dayOfWeek:` conditions) may change its value without any change to
// the object. Each clock-reading call gets a timer at load saying when its
// value may next change, so the operator can reconcile again then.

// timer returns the first instant after now at which a value may change.
type timer func(now time.Time) time.Time

func nextChange(now time.Time, ts []timer) time.Time {
	var out time.Time
	for _, t := range ts {
		if n := t(now); !n.IsZero() && (out.IsZero() || n.Before(out)) {
			out = n
		}
	}
	return out
}

// nextMidnight is the next 00:00 UTC: weekday and weekend change then.
func nextMidnight(now time.Time) time.Time {
	now = now.UTC()
	return time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
}

// nextMinute is the fallback when the arguments are not literals.
func nextMinute(now time.Time) time.Time { return now.Truncate(time.Minute).Add(time.Minute) }

// nextClockTime is the next instant after now at which the UTC clock reads
// HH:MM.
func nextClockTime(hhmm string) timer {
	t, err := time.Parse("15:04", hhmm)
	if err != nil {
		return nil // malformed: the value never changes (always false)
	}
	return func(now time.Time) time.Time {
		now = now.UTC()
		at := time.Date(now.Year(), now.Month(), now.Day(), t.Hour(), t.Minute(), 0, 0, time.UTC)
		if !at.After(now) {
			at = at.AddDate(0, 0, 1)
		}
		return at
	}
}

// windowTimer: a window between two clock times changes at either.
func windowTimer(after, before string) timer {
	var ts []timer
	for _, s := range []string{after, before} {
		if s == "" {
			continue
		}
		if t := nextClockTime(s); t != nil {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return nil
	}
	return func(now time.Time) time.Time { return nextChange(now, ts) }
}

// scheduleTimer: a value derived from a cron schedule changes when it fires.
func scheduleTimer(expr string) timer {
	s, err := notes.ParseSchedule(expr)
	if err != nil {
		return nil
	}
	return func(now time.Time) time.Time { return s.Next(now) }
}

// literalString is the text of a string literal argument.
func literalString(n parse.Node) (string, bool) {
	s, ok := n.(*parse.StringNode)
	if !ok {
		return "", false
	}
	return s.Text, true
}

// The timers of the clock-reading functions, from their arguments.

func clockMidnight([]parse.Node) timer { return nextMidnight }

func clockWindow(args []parse.Node) timer {
	if len(args) == 2 {
		a, ok1 := literalString(args[0])
		b, ok2 := literalString(args[1])
		if ok1 && ok2 {
			return windowTimer(a, b)
		}
	}
	return nextMinute
}

func clockCron(args []parse.Node) timer {
	if len(args) == 1 {
		if s, ok := literalString(args[0]); ok {
			return scheduleTimer(s)
		}
	}
	return nextMinute
}

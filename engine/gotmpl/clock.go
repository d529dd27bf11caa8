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

// nextMidnight: weekday and weekend change at 00:00 UTC.
func nextMidnight(now time.Time) time.Time { return notes.NextMidnight(now) }

// nextMinute is the fallback when the arguments are not literals.
func nextMinute(now time.Time) time.Time { return now.Truncate(time.Minute).Add(time.Minute) }

// windowTimer: a window between two clock times changes at either; nil
// when neither parses (the value never changes).
func windowTimer(after, before string) timer {
	if notes.NextWindowChange(after, before, time.Time{}).IsZero() {
		return nil
	}
	return func(now time.Time) time.Time { return notes.NextWindowChange(after, before, now) }
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

// clockExpiry: isExpired changes once, when the timestamp plus the duration
// passes; with arguments from the object, that is known only when it is
// evaluated: look again every minute.
func clockExpiry(args []parse.Node) timer {
	if len(args) == 2 {
		ts, ok1 := literalString(args[0])
		dur, ok2 := literalString(args[1])
		if ok1 && ok2 {
			at := notes.ExpiresAt(ts, dur)
			return func(now time.Time) time.Time {
				if now.Before(at) {
					return at
				}
				return time.Time{}
			}
		}
	}
	return nextMinute
}

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

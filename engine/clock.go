package engine

import (
	"sync/atomic"
	"time"
)

// Expressions may read the clock (the original engine's weekday,
// timeInWindow, nextCron, `time:` and `dayOfWeek:` conditions). Both backends
// read it here, so a test or `orkestra migrate` can fix the instant for both.

var clock atomic.Pointer[func() time.Time]

// Now is the current time as expressions see it, in UTC.
func Now() time.Time {
	if f := clock.Load(); f != nil {
		return (*f)().UTC()
	}
	return time.Now().UTC()
}

// SetClock makes Now return f() until restore is called. It is process-wide:
// tests that set it must not run in parallel with others that read it.
func SetClock(f func() time.Time) (restore func()) {
	prev := clock.Swap(&f)
	return func() { clock.Store(prev) }
}

// Timed is implemented by compiled expressions and conditions whose value
// depends on the clock. NextChange returns the earliest instant after now at
// which the value may change, so the operator can reconcile again then (a
// time window that opens at 09:00 makes a condition true without any change
// to the custom resource).
type Timed interface {
	// ReadsClock reports whether the value depends on the clock at all.
	ReadsClock() bool
	NextChange(now time.Time) time.Time
}

// NextChange is the earliest NextChange of ts after now; zero when ts is
// empty.
func NextChange(now time.Time, ts []Timed) time.Time {
	var out time.Time
	for _, t := range ts {
		if n := t.NextChange(now); !n.IsZero() && (out.IsZero() || n.Before(out)) {
			out = n
		}
	}
	return out
}

package notes

import (
	"fmt"
	"time"

	"github.com/orkspace/orkestra-cel/katalog"
)

// The duration functions (upstream pkg/note/time.go): extended durations,
// Go's units plus d, w, mo (30 days) and y (365 days), as rotateAfter reads
// them (katalog.ParseDuration). Invalid input gives a zero value.

func duration(s string) (time.Duration, bool) {
	if s == "" {
		return 0, false
	}
	// never reads as 0 here, as rotateAfter reads it.
	d, err := katalog.ParseLifetime(s)
	return d, err == nil
}

// DurationSeconds is the whole seconds of a duration ("7d" → 604800), 0
// when invalid.
func DurationSeconds(s string) int64 {
	d, _ := duration(s)
	return int64(d / time.Second)
}

// DurationAdd is a + b as a Go duration ("1d" + "12h" → "36h0m0s"), "0s"
// when either is invalid.
func DurationAdd(a, b string) string {
	da, ok1 := duration(a)
	db, ok2 := duration(b)
	if !ok1 || !ok2 {
		return "0s"
	}
	return (da + db).String()
}

// DurationValid: a non-empty duration.
func DurationValid(s string) bool {
	_, ok := duration(s)
	return ok
}

// parseTimestamp reads the timestamps the original accepted: RFC 3339
// (with or without fractions) or a bare date.
func parseTimestamp(v any) (time.Time, bool) {
	s := fmt.Sprint(v)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// TimeFormat writes a timestamp in Go's layout ("Jan 2, 2006"), in UTC;
// "" when it does not parse.
func TimeFormat(ts any, layout string) string {
	t, ok := parseTimestamp(ts)
	if !ok {
		return ""
	}
	return t.UTC().Format(layout)
}

// IsExpired: the timestamp plus the duration is before now; false when
// either does not parse.
func IsExpired(now time.Time, ts any, dur string) bool {
	t, ok := parseTimestamp(ts)
	d, ok2 := duration(dur)
	return ok && ok2 && now.After(t.Add(d))
}

// ExpiresAt is when IsExpired turns true (zero when it never changes).
func ExpiresAt(ts any, dur string) time.Time {
	t, ok := parseTimestamp(ts)
	d, ok2 := duration(dur)
	if !ok || !ok2 {
		return time.Time{}
	}
	return t.Add(d)
}

// Weekend: Saturday or Sunday (UTC), the complement of Weekday.
func Weekend(now time.Time) bool { return !Weekday(now) }

// Package notes is the original Orkestra engine's template function library
// ("notes", upstream pkg/note) for the functions this runtime implements
// beyond the basics: over children, cron strings and the clock. The legacy
// adapter calls them from templates with the original signatures (so
// text/template converts and rejects arguments as it did), and the orkestra
// CEL library wraps the same functions, so both engines share one
// implementation. The functions are pure: clock readers take the time.
//
// Sources: upstream pkg/note kube_replica.go, kube_job.go,
// kubernetes.go, kube_domain.go, cron.go, time.go, conditional.go,
// strings.go, types.go; pkg/types/when.go for the clock conditions.
package notes

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/orkspace/orkestra-cel/engine"
)

// ── conditional, types, strings ─────────────────────────────────────────────

// BoolTernary takes a real boolean: a missing field or a string is an
// error (text/template cannot pass them as bool), unlike ternary.
func BoolTernary(cond bool, ifTrue, ifFalse any) any {
	if cond {
		return ifTrue
	}
	return ifFalse
}

func TypeMap(v any) bool { return TypeOf(v) == "map" }

// CamelToKebab inserts "-" before an upper-case ASCII letter that follows
// a lower-case one, or that ends an acronym (followed by a lower-case
// letter), and lower-cases ASCII: HTTPRequest → http-request.
func CamelToKebab(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		upper := c >= 'A' && c <= 'Z'
		if i > 0 && upper {
			prev := s[i-1]
			var next byte
			if i+1 < len(s) {
				next = s[i+1]
			}
			if isLowerASCII(prev) || (prev >= 'A' && prev <= 'Z' && isLowerASCII(next)) {
				b.WriteByte('-')
			}
		}
		if upper {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isLowerASCII(c byte) bool { return c >= 'a' && c <= 'z' }

// DomainHost trims white space, one https:// or http:// prefix and one
// trailing "/"; anything but a string is "".
func DomainHost(v any) string {
	s, ok := v.(string)
	if !ok {
		return ""
	}
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "https://")
	s = strings.TrimPrefix(s, "http://")
	return strings.TrimSuffix(s, "/")
}

// ── cron ────────────────────────────────────────────────────────────────────

// cronField is field pos of a five-field schedule (@-macros expanded); "*"
// for an empty string; an error for any other number of fields.
func cronField(name, expr string, pos int) (string, error) {
	if strings.TrimSpace(expr) == "" {
		return "*", nil
	}
	parts := strings.Fields(ExpandCronMacro(expr))
	if len(parts) != 5 {
		return "", fmt.Errorf("%s: expected 5 fields in %q, got %d", name, expr, len(parts))
	}
	return parts[pos], nil
}

func CronMinute(expr string) (string, error) { return cronField("cronMinute", expr, 0) }
func CronHour(expr string) (string, error)   { return cronField("cronHour", expr, 1) }
func CronDom(expr string) (string, error)    { return cronField("cronDom", expr, 2) }
func CronMonth(expr string) (string, error)  { return cronField("cronMonth", expr, 3) }
func CronDow(expr string) (string, error)    { return cronField("cronDow", expr, 4) }

// CronValid: five fields after expanding macros (ranges are not checked).
func CronValid(expr string) bool {
	return strings.TrimSpace(expr) != "" && len(strings.Fields(ExpandCronMacro(expr))) == 5
}

// CronDescribe describes a schedule in words, with the original's five
// patterns (the fields are printed as written: "0 2 * * *" is "At 2:0 every
// day"), else "Cron: " and the normalised schedule.
func CronDescribe(expr string) string {
	p := strings.Fields(CronNormalize(expr))
	min, hr, dom, mon, dow := p[0], p[1], p[2], p[3], p[4]
	switch {
	case strings.HasPrefix(min, "*/") && hr == "*" && dom == "*" && mon == "*" && dow == "*":
		return "Every " + strings.TrimPrefix(min, "*/") + " minutes"
	case min == "0" && hr == "*" && dom == "*" && mon == "*" && dow == "*":
		return "Every hour"
	case dom == "*" && mon == "*" && dow == "*" && min != "*" && hr != "*":
		return "At " + hr + ":" + min + " every day"
	case dom == "*" && mon == "*" && dow != "*":
		return "At " + hr + ":" + min + " on day-of-week " + dow
	case dom != "*" && mon == "*" && dow == "*":
		return "At " + hr + ":" + min + " on day " + dom + " of every month"
	}
	return "Cron: " + strings.Join(p, " ")
}

// ── children ────────────────────────────────────────────────────────────────

// objMap is obj's map[key] when both are objects, else nil (reading a
// missing key of a nil map is safe in Go).
func objMap(obj any, key string) map[string]any {
	m, _ := obj.(map[string]any)
	v, _ := m[key].(map[string]any)
	return v
}

// toInt64 is the original's lenient integer: integers, floats truncated,
// decimal strings; anything else is 0.
func toInt64(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case float64:
		return int64(x)
	case string:
		i, _ := strconv.ParseInt(x, 10, 64)
		return i
	}
	return 0
}

// desiredReplicas is spec.replicas, 1 when absent (the Kubernetes default).
func desiredReplicas(obj any) int {
	v, ok := objMap(obj, "spec")["replicas"]
	if !ok || v == nil {
		return 1
	}
	return int(toInt64(v))
}

func ReadyReplicas(obj any) int { return int(toInt64(objMap(obj, "status")["readyReplicas"])) }

// AllReplicasReady: status.readyReplicas equals spec.replicas (both
// zero when scaled to zero). A kind declared without a child yet (the
// placeholder) has 0 ready of 1 desired.
func AllReplicasReady(obj any) bool { return ReadyReplicas(obj) == desiredReplicas(obj) }

// ResourceExists: obj is an object that is not the placeholder of a kind
// without children.
func ResourceExists(obj any) bool {
	m, ok := obj.(map[string]any)
	if !ok {
		return false
	}
	p, _ := m[engine.PlaceholderKey].(bool)
	return !p
}

func Phase(obj any) string {
	s, _ := objMap(obj, "status")["phase"].(string)
	return s
}

func resourceRequest(obj any, key string) string {
	s, _ := objMap(objMap(objMap(obj, "spec"), "resources"), "requests")[key].(string)
	return s
}

func ResourceCPU(obj any) string    { return resourceRequest(obj, "cpu") }
func ResourceMemory(obj any) string { return resourceRequest(obj, "memory") }

func CronJobLastScheduleTime(obj any) string {
	s, _ := objMap(obj, "status")["lastScheduleTime"].(string)
	return s
}

func CronJobNextScheduleTime(obj any) string {
	s, _ := objMap(obj, "status")["nextScheduleTime"].(string)
	return s
}

// ── clock ───────────────────────────────────────────────────────────────────

// Weekday: now (UTC) is Monday to Friday.
func Weekday(now time.Time) bool {
	wd := now.UTC().Weekday()
	return wd >= time.Monday && wd <= time.Friday
}

// TimeInWindow: now (UTC) is in [after, before) today, both "HH:MM"; a
// malformed time is false. A window across midnight (22:00–06:00) never
// holds, as in the original.
func TimeInWindow(now time.Time, after, before string) bool {
	now = now.UTC()
	a, err1 := ClockTime(after, now)
	b, err2 := ClockTime(before, now)
	if err1 != nil || err2 != nil {
		return false
	}
	return !now.Before(a) && now.Before(b)
}

// ClockTime is "HH:MM" today (the day of now, UTC).
func ClockTime(s string, now time.Time) (time.Time, error) {
	t, err := time.Parse("15:04", s)
	if err != nil {
		return time.Time{}, err
	}
	return time.Date(now.Year(), now.Month(), now.Day(), t.Hour(), t.Minute(), 0, 0, time.UTC), nil
}

// NextCron is the next time (UTC, RFC 3339) the schedule fires after now;
// "" when it does not parse.
func NextCron(now time.Time, expr string) string {
	s, err := ParseSchedule(expr)
	if err != nil {
		return ""
	}
	return s.Next(now).UTC().Format(time.RFC3339)
}

// ParseSchedule parses a schedule as the original did (robfig/cron's
// standard parser: five fields, @-macros, @every).
func ParseSchedule(expr string) (cron.Schedule, error) { return cron.ParseStandard(expr) }

// TypeOf names a value's type as the original did: string, number, bool,
// map, slice, null, or unknown.
func TypeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64, float32, int, int32, int64, uint, uint32, uint64:
		return "number"
	case bool:
		return "bool"
	case map[string]any:
		return "map"
	case []any:
		return "slice"
	}
	return "unknown"
}

// ExpandCronMacro turns @yearly, @annually, @monthly, @weekly, @daily,
// @midnight and @hourly (any case, surrounding space) into five fields.
func ExpandCronMacro(expr string) string {
	switch strings.TrimSpace(strings.ToLower(expr)) {
	case "@yearly", "@annually":
		return "0 0 1 1 *"
	case "@monthly":
		return "0 0 1 * *"
	case "@weekly":
		return "0 0 * * 0"
	case "@daily", "@midnight":
		return "0 0 * * *"
	case "@hourly":
		return "0 * * * *"
	}
	return expr
}

// CronNormalize expands @-macros and returns five fields, or "* * * * *"
// for an empty or malformed expression.
func CronNormalize(expr string) string {
	if strings.TrimSpace(expr) == "" {
		return "* * * * *"
	}
	parts := strings.Fields(ExpandCronMacro(expr))
	if len(parts) != 5 {
		return "* * * * *"
	}
	return strings.Join(parts, " ")
}

// ── clock conditions (pkg/types/when.go) ────────────────────────────────────

// InTimeWindow is a `time:` condition: after <= now <= before, either bound
// optional, both "HH:MM" on now's day (UTC); a malformed bound is false.
func InTimeWindow(now time.Time, after, before string) bool {
	now = now.UTC()
	if after != "" {
		t, err := ClockTime(after, now)
		if err != nil || now.Before(t) {
			return false
		}
	}
	if before != "" {
		t, err := ClockTime(before, now)
		if err != nil || now.After(t) {
			return false
		}
	}
	return true
}

// DayMatches is a `dayOfWeek:` condition: the first of weekday, weekend, in,
// notIn that is set decides (day names case-insensitive).
func DayMatches(now time.Time, weekday, weekend *bool, in, notIn []string) bool {
	wd := now.UTC().Weekday()
	switch {
	case weekday != nil:
		return *weekday == (wd >= time.Monday && wd <= time.Friday)
	case weekend != nil:
		return *weekend == (wd == time.Saturday || wd == time.Sunday)
	case len(in) > 0:
		for _, d := range in {
			if strings.EqualFold(d, wd.String()) {
				return true
			}
		}
		return false
	case len(notIn) > 0:
		for _, d := range notIn {
			if strings.EqualFold(d, wd.String()) {
				return false
			}
		}
		return true
	}
	return false
}

// CronWindowOpen is a `cron:` condition: the schedule fired within the last
// dur (0: one period of the schedule, the time between its next two fires).
func CronWindowOpen(now time.Time, s cron.Schedule, dur time.Duration) bool {
	if dur == 0 {
		next := s.Next(now)
		dur = s.Next(next).Sub(next)
	}
	return !s.Next(now.Add(-dur)).After(now)
}

// ── when clock values change ────────────────────────────────────────────────

// NextMidnight is the next 00:00 UTC after now: weekday and day-of-week
// tests change then.
func NextMidnight(now time.Time) time.Time {
	now = now.UTC()
	return time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
}

// NextClockTime is the first instant after now at which the UTC clock reads
// hhmm ("HH:MM"); ok is false when hhmm does not parse.
func NextClockTime(hhmm string, now time.Time) (time.Time, bool) {
	t, err := time.Parse("15:04", hhmm)
	if err != nil {
		return time.Time{}, false
	}
	now = now.UTC()
	at := time.Date(now.Year(), now.Month(), now.Day(), t.Hour(), t.Minute(), 0, 0, time.UTC)
	if !at.After(now) {
		at = at.AddDate(0, 0, 1)
	}
	return at, true
}

// NextWindowChange is when a window between two clock times may change
// after now: at either time (an empty or malformed one is skipped); zero
// when neither parses.
func NextWindowChange(after, before string, now time.Time) time.Time {
	var out time.Time
	for _, s := range []string{after, before} {
		if t, ok := NextClockTime(s, now); ok && (out.IsZero() || t.Before(out)) {
			out = t
		}
	}
	return out
}

// NextCronWindowChange is when a cron: condition may change after now: the
// schedule's next fire (it opens), or the end of the window open now.
func NextCronWindowChange(s cron.Schedule, dur time.Duration, now time.Time) time.Time {
	if dur == 0 {
		next := s.Next(now)
		dur = s.Next(next).Sub(next)
	}
	out := s.Next(now)
	if open := s.Next(now.Add(-dur)); !open.After(now) {
		if end := open.Add(dur); end.After(now) && end.Before(out) {
			out = end
		}
	}
	return out
}

var cronFields = []string{"minute", "hour", "dayOfMonth", "month", "dayOfWeek"}

// CronFromMap joins the five named fields of a cron map into an expression
// ("*" for a missing or blank field, any other value printed with %v).
func CronFromMap(m map[string]any) string {
	parts := make([]string, len(cronFields))
	for i, k := range cronFields {
		parts[i] = "*"
		if v, ok := m[k]; ok {
			if s := fmt.Sprintf("%v", v); strings.TrimSpace(s) != "" {
				parts[i] = s
			}
		}
	}
	return strings.Join(parts, " ")
}

// CronFromAny is a schedule written as a cron map or a cron string (macros
// expanded, as CronNormalize); anything else is "* * * * *".
func CronFromAny(v any) string {
	switch x := v.(type) {
	case map[string]any:
		return CronFromMap(x)
	case string:
		return CronNormalize(x)
	}
	return "* * * * *"
}

// CronExpr joins five cron fields, "*" for a blank one.
func CronExpr(minute, hour, dom, month, dow string) string {
	parts := []string{minute, hour, dom, month, dow}
	for i, p := range parts {
		if strings.TrimSpace(p) == "" {
			parts[i] = "*"
		}
	}
	return strings.Join(parts, " ")
}

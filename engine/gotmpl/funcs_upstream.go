package gotmpl

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/orkspace/orkestra-cel/engine"
)

// The original engine's functions over children, cron strings and the clock
// (pkg/note of the original project: kube_replica.go, kube_pods.go,
// kube_job.go, kubernetes.go, kube_domain.go, cron.go, time.go,
// conditional.go, strings.go, types.go). Signatures are the original's, so
// text/template converts and rejects arguments exactly as it did there.

func init() {
	for name, f := range map[string]*funcInfo{
		"boolTernary":             {fn: fnBoolTernary, pipeFirst: true},
		"typeMap":                 {fn: fnTypeMap},
		"camelToKebab":            {fn: fnCamelToKebab},
		"domainHost":              {fn: fnDomainHost},
		"cronMinute":              {fn: fnCronMinute},
		"cronHour":                {fn: fnCronHour},
		"cronDom":                 {fn: fnCronDom},
		"cronMonth":               {fn: fnCronMonth},
		"cronDow":                 {fn: fnCronDow},
		"cronValid":               {fn: fnCronValid},
		"cronDescribe":            {fn: fnCronDescribe},
		"allReplicasReady":        {fn: fnAllReplicasReady},
		"readyReplicas":           {fn: fnReadyReplicas},
		"resourceExists":          {fn: fnResourceExists},
		"phase":                   {fn: fnPhase},
		"resourceCPU":             {fn: fnResourceCPU},
		"resourceMemory":          {fn: fnResourceMemory},
		"cronJobLastScheduleTime": {fn: fnCronJobLastScheduleTime},
		"cronJobNextScheduleTime": {fn: fnCronJobNextScheduleTime},
		"podCount":                {fn: fnPodCount},
		"readyPodCount":           {fn: fnReadyPodCount},
		"podNames":                {fn: fnPodNames},
		"podMaxRestarts":          {fn: fnPodMaxRestarts},
		"hasCrashingPod":          {fn: fnHasCrashingPod},
		"podContainerReasons":     {fn: fnPodContainerReasons},
		"weekday":                 {fn: fnWeekday, clock: clockMidnight},
		"timeInWindow":            {fn: fnTimeInWindow, clock: clockWindow},
		"nextCron":                {fn: fnNextCron, clock: clockCron},
	} {
		funcs[name] = f
		funcMap[name] = f.fn
	}
}

// ── conditional, types, strings ─────────────────────────────────────────────

// fnBoolTernary takes a real boolean: a missing field or a string is an
// error (text/template cannot pass them as bool), unlike ternary.
func fnBoolTernary(cond bool, ifTrue, ifFalse any) any {
	if cond {
		return ifTrue
	}
	return ifFalse
}

func fnTypeMap(v any) bool { return fnTypeOf(v) == "map" }

// fnCamelToKebab inserts "-" before an upper-case ASCII letter that follows
// a lower-case one, or that ends an acronym (followed by a lower-case
// letter), and lower-cases ASCII: HTTPRequest → http-request.
func fnCamelToKebab(s string) string {
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

// fnDomainHost trims white space, one https:// or http:// prefix and one
// trailing "/"; anything but a string is "".
func fnDomainHost(v any) string {
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
	parts := strings.Fields(expandCronMacro(expr))
	if len(parts) != 5 {
		return "", fmt.Errorf("%s: expected 5 fields in %q, got %d", name, expr, len(parts))
	}
	return parts[pos], nil
}

func fnCronMinute(expr string) (string, error) { return cronField("cronMinute", expr, 0) }
func fnCronHour(expr string) (string, error)   { return cronField("cronHour", expr, 1) }
func fnCronDom(expr string) (string, error)    { return cronField("cronDom", expr, 2) }
func fnCronMonth(expr string) (string, error)  { return cronField("cronMonth", expr, 3) }
func fnCronDow(expr string) (string, error)    { return cronField("cronDow", expr, 4) }

// fnCronValid: five fields after expanding macros (ranges are not checked).
func fnCronValid(expr string) bool {
	return strings.TrimSpace(expr) != "" && len(strings.Fields(expandCronMacro(expr))) == 5
}

// fnCronDescribe describes a schedule in words, with the original's five
// patterns (the fields are printed as written: "0 2 * * *" is "At 2:0 every
// day"), else "Cron: " and the normalised schedule.
func fnCronDescribe(expr string) string {
	p := strings.Fields(cronNormalize(expr))
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

func fnReadyReplicas(obj any) int { return int(toInt64(objMap(obj, "status")["readyReplicas"])) }

// fnAllReplicasReady: status.readyReplicas equals spec.replicas (both
// zero when scaled to zero). A kind declared without a child yet (the
// placeholder) has 0 ready of 1 desired.
func fnAllReplicasReady(obj any) bool { return fnReadyReplicas(obj) == desiredReplicas(obj) }

// fnResourceExists: obj is an object that is not the placeholder of a kind
// without children.
func fnResourceExists(obj any) bool {
	m, ok := obj.(map[string]any)
	if !ok {
		return false
	}
	p, _ := m[engine.PlaceholderKey].(bool)
	return !p
}

func fnPhase(obj any) string {
	s, _ := objMap(obj, "status")["phase"].(string)
	return s
}

func resourceRequest(obj any, key string) string {
	s, _ := objMap(objMap(objMap(obj, "spec"), "resources"), "requests")[key].(string)
	return s
}

func fnResourceCPU(obj any) string    { return resourceRequest(obj, "cpu") }
func fnResourceMemory(obj any) string { return resourceRequest(obj, "memory") }

func fnCronJobLastScheduleTime(obj any) string {
	s, _ := objMap(obj, "status")["lastScheduleTime"].(string)
	return s
}

func fnCronJobNextScheduleTime(obj any) string {
	s, _ := objMap(obj, "status")["nextScheduleTime"].(string)
	return s
}

// pods are the pod summaries the operator attaches to a workload child
// under "_pods" ({name, ready, restartCount, containers: [{reason}]}); nil
// when the child has none.
func pods(obj any) []map[string]any {
	m, _ := obj.(map[string]any)
	list, _ := m["_pods"].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, p := range list {
		if pm, ok := p.(map[string]any); ok {
			out = append(out, pm)
		}
	}
	return out
}

// fnPodCount counts every entry of _pods, objects or not, as the original.
func fnPodCount(obj any) int {
	m, _ := obj.(map[string]any)
	list, _ := m["_pods"].([]any)
	return len(list)
}

func fnReadyPodCount(obj any) int {
	n := 0
	for _, p := range pods(obj) {
		if r, _ := p["ready"].(bool); r {
			n++
		}
	}
	return n
}

// fnPodNames joins the non-empty pod names with ", ".
func fnPodNames(obj any) string {
	var names []string
	for _, p := range pods(obj) {
		if n, _ := p["name"].(string); n != "" {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

func restartCount(p map[string]any) int64 {
	switch r := p["restartCount"].(type) {
	case int64:
		return r
	case float64:
		return int64(r)
	case int:
		return int64(r)
	}
	return 0
}

func fnPodMaxRestarts(obj any) int64 {
	var max int64
	for _, p := range pods(obj) {
		if r := restartCount(p); r > max {
			max = r
		}
	}
	return max
}

// crashReasons are the container reasons hasCrashingPod reports.
var crashReasons = map[string]bool{
	"CrashLoopBackOff": true, "OOMKilled": true, "Error": true,
	"ImagePullBackOff": true, "ErrImagePull": true, "InvalidImageName": true,
	"RunContainerError": true, "CreateContainerError": true,
	"PreStartHookError": true, "PostStartHookError": true,
}

func containerReasons(p map[string]any) []string {
	list, _ := p["containers"].([]any)
	var out []string
	for _, c := range list {
		cm, _ := c.(map[string]any)
		if r, _ := cm["reason"].(string); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// fnHasCrashingPod: a container with a failure reason, or a pod restarted
// more than twice.
func fnHasCrashingPod(obj any) bool {
	for _, p := range pods(obj) {
		if restartCount(p) > 2 {
			return true
		}
		for _, r := range containerReasons(p) {
			if crashReasons[r] {
				return true
			}
		}
	}
	return false
}

// fnPodContainerReasons joins the distinct container reasons, in order of
// first appearance, with ", ".
func fnPodContainerReasons(obj any) string {
	seen := map[string]bool{}
	var out []string
	for _, p := range pods(obj) {
		for _, r := range containerReasons(p) {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	return strings.Join(out, ", ")
}

// ── clock ───────────────────────────────────────────────────────────────────

// fnWeekday: today (UTC) is Monday to Friday.
func fnWeekday() bool {
	wd := engine.Now().Weekday()
	return wd >= time.Monday && wd <= time.Friday
}

// fnTimeInWindow: now (UTC) is in [after, before) today, both "HH:MM"; a
// malformed time is false. A window across midnight (22:00–06:00) never
// holds, as in the original.
func fnTimeInWindow(after, before string) bool {
	now := engine.Now()
	a, err1 := clockTime(after, now)
	b, err2 := clockTime(before, now)
	if err1 != nil || err2 != nil {
		return false
	}
	return !now.Before(a) && now.Before(b)
}

// clockTime is "HH:MM" today (the day of now, UTC).
func clockTime(s string, now time.Time) (time.Time, error) {
	t, err := time.Parse("15:04", s)
	if err != nil {
		return time.Time{}, err
	}
	return time.Date(now.Year(), now.Month(), now.Day(), t.Hour(), t.Minute(), 0, 0, time.UTC), nil
}

// fnNextCron is the next time (UTC, RFC 3339) the schedule fires after now;
// "" when it does not parse.
func fnNextCron(expr string) string {
	s, err := parseSchedule(expr)
	if err != nil {
		return ""
	}
	return s.Next(engine.Now()).UTC().Format(time.RFC3339)
}

package gotmpl

import (
	"strings"
	"testing"
	"time"

	"github.com/orkspace/orkestra-cel/engine"
)

// childrenOf is the .children of the tests: a Deployment "web" wanting 3
// replicas with 2 ready, a CronJob, and a Service
// kind declared without any child yet (its singular is the placeholder).
func childrenOf() map[string]any {
	return engine.ChildrenView(map[string][]map[string]any{
		"deployments": {{
			"metadata": map[string]any{"name": "web"},
			"spec":     map[string]any{"replicas": int64(3), "resources": map[string]any{"requests": map[string]any{"cpu": "250m", "memory": "64Mi"}}},
			"status":   map[string]any{"readyReplicas": int64(2), "phase": "Progressing"},
		}, {
			"metadata": map[string]any{"name": "zz-scaled-down"},
			"spec":     map[string]any{"replicas": int64(0)},
		}},
		"cronJobs": {{
			"metadata": map[string]any{"name": "nightly"},
			"status":   map[string]any{"lastScheduleTime": "2026-05-19T02:00:00Z"},
		}},
		"services": nil,
	})
}

// renderScope renders src (a string value) with children in the scope.
func renderScope(t *testing.T, src string, s *engine.Scope) (string, error) {
	t.Helper()
	ctx := testCtx(t)
	tm, diags := New(nil).compile(src, ctx, forValue)
	if diags.HasErrors() {
		t.Fatalf("%s: %v", src, diags)
	}
	return tm.render(s)
}

// Each expected value is derived by hand from the original's source, cited
// per group (iAlexeze/orkestra pkg/note/…), and the objects above.
func TestUpstreamFunctions(t *testing.T) {
	cases := []struct{ src, want, err string }{
		// conditional.go noteBoolTernary: a real bool, else text/template
		// cannot call it.
		{src: `{{ boolTernary .spec.enabled "on" "off" }}`, want: "on"},
		{src: `{{ boolTernary .spec.debug "on" "off" }}`, want: "off"},
		{src: `{{ boolTernary (eq .spec.tier "enterprise") 100 20 }}`, want: "100"},
		{src: `{{ boolTernary .spec.config.flag "on" "off" }}`, err: "wrong type for value; expected bool; got interface {}"},
		// docs/03-conditional.md boolDefault: the value when it is a boolean
		// (false included, unlike default), else the fallback.
		{src: `{{ boolDefault .spec.enabled false }}`, want: "true"},
		{src: `{{ boolDefault .spec.debug true }}`, want: "false"},
		{src: `{{ boolDefault .spec.missing true }}`, want: "true"},
		{src: `{{ boolDefault .spec.tier true }}`, want: "true"},
		{src: `{{ boolTernary (boolDefault .spec.missing false) "Suspended" "Active" }}`, want: "Active"},
		// types.go TypeOf / docs/04-types.md typeMap.
		{src: `{{ typeMap .spec.config }}`, want: "true"},
		{src: `{{ typeMap .spec.schedule }}`, want: "false"},
		{src: `{{ typeMap .spec.missing }}`, want: "false"},
		// strings.go camelToKebab.
		{src: `{{ camelToKebab "WebsiteOperator" }}`, want: "website-operator"},
		{src: `{{ camelToKebab "myAppName" }}`, want: "my-app-name"},
		{src: `{{ camelToKebab "HTTPRequest" }}`, want: "http-request"},
		{src: `{{ camelToKebab "already-kebab" }}`, want: "already-kebab"},
		// kube_domain.go noteDomainHost: space, one scheme, one trailing /.
		{src: `{{ domainHost " https://acme.example.com/ " }}`, want: "acme.example.com"},
		{src: `{{ domainHost "http://a.io//" }}`, want: "a.io/"},
		{src: `{{ domainHost .spec.domain }}`, want: "my.app.example.com"},
		{src: `{{ domainHost .spec.replicas }}`, want: ""},
		{src: `{{ domainHost .spec.missing }}`, want: ""},
		// cron.go cronField: macros expanded, "*" for empty, an error for
		// anything but five fields.
		{src: `{{ cronMinute "*/5 2 * * 1" }}`, want: "*/5"},
		{src: `{{ cronHour "*/5 2 * * 1" }}`, want: "2"},
		{src: `{{ cronDom "0 0 15 * *" }}`, want: "15"},
		{src: `{{ cronMonth "0 0 1 6 *" }}`, want: "6"},
		{src: `{{ cronDow "@weekly" }}`, want: "0"},
		{src: `{{ cronHour "" }}`, want: "*"},
		{src: `{{ cronMinute .spec.schedule }}`, want: "*/5"},
		{src: `{{ cronMinute "0 0 * *" }}`, err: `cronMinute: expected 5 fields in "0 0 * *", got 4`},
		{src: `{{ cronValid "@daily" }}`, want: "true"},
		{src: `{{ cronValid "61 * * * *" }}`, want: "true"}, // ranges are not checked
		{src: `{{ cronValid "" }}`, want: "false"},
		// cron.go cronDescribe: five patterns, fields as written.
		{src: `{{ cronDescribe "*/5 * * * *" }}`, want: "Every 5 minutes"},
		{src: `{{ cronDescribe "@hourly" }}`, want: "Every hour"},
		{src: `{{ cronDescribe "0 2 * * *" }}`, want: "At 2:0 every day"},
		{src: `{{ cronDescribe "30 9 * * 1-5" }}`, want: "At 9:30 on day-of-week 1-5"},
		{src: `{{ cronDescribe "0 0 15 * *" }}`, want: "At 0:0 on day 15 of every month"},
		{src: `{{ cronDescribe "0 0 1 1 *" }}`, want: "Cron: 0 0 1 1 *"},
		{src: `{{ cronDescribe "nonsense" }}`, want: "Cron: * * * * *"},
		// kube_replica.go: desired is spec.replicas, 1 when absent.
		{src: `{{ readyReplicas .children.deployment }}`, want: "2"},
		{src: `{{ allReplicasReady .children.deployment }}`, want: "false"},
		{src: `{{ allReplicasReady (index .children.deployments "zz-scaled-down") }}`, want: "true"},
		{src: `{{ allReplicasReady .children.service }}`, want: "false"}, // placeholder: 0 of 1
		{src: `{{ readyReplicas .children.cronjob }}`, want: "0"},
		// kubernetes.go noteExists: a map that is not the placeholder.
		{src: `{{ resourceExists .children.deployment }}`, want: "true"},
		{src: `{{ resourceExists .children.service }}`, want: "false"},
		{src: `{{ resourceExists .children.pod }}`, want: "false"}, // kind not declared: nil
		// kubernetes.go notePhase, noteResourceCPU, noteResourceMemory.
		{src: `{{ phase .children.deployment }}`, want: "Progressing"},
		{src: `{{ phase .children.service }}`, want: ""},
		{src: `{{ resourceCPU .children.deployment }}`, want: "250m"},
		{src: `{{ resourceMemory .children.deployment }}`, want: "64Mi"},
		{src: `{{ resourceCPU . | default "100m" }}`, want: "100m"},
		// kube_job.go CronJob status.
		{src: `{{ cronJobLastScheduleTime .children.cronjob }}`, want: "2026-05-19T02:00:00Z"},
		{src: `{{ cronJobNextScheduleTime .children.cronjob }}`, want: ""},
	}
	s := engine.NewScope(testObject())
	s.Children = childrenOf()
	for _, tc := range cases {
		got, err := renderScope(t, tc.src, s)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.src, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.src, err)
		case got != tc.want:
			t.Errorf("%s = %q, want %q", tc.src, got, tc.want)
		}
	}
}

// A field the schema types as anything but a boolean cannot be boolTernary's
// condition: the original failed at run time, this is a load error.
func TestBoolTernaryNeedsBoolean(t *testing.T) {
	got := compileErrs(t, `{{ boolTernary .spec.tier "a" "b" }}`, testCtx(t))
	want := `k.yaml:10:35: [things] spec.x: boolTernary takes a boolean, but spec.tier is a string`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// The clock functions (time.go noteWeekday, noteTimeInWindow, noteNextCron)
// at fixed instants, in UTC.
func TestClockFunctions(t *testing.T) {
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	cases := []struct {
		now       string
		src, want string
	}{
		{"2026-07-14T14:30:00Z", `{{ weekday }}`, "true"}, // a Tuesday
		{"2026-07-18T14:30:00Z", `{{ weekday }}`, "false"},
		{"2026-07-14T14:30:00Z", `{{ timeInWindow "09:00" "18:00" }}`, "true"},
		{"2026-07-14T18:00:00Z", `{{ timeInWindow "09:00" "18:00" }}`, "false"}, // [after, before)
		{"2026-07-14T09:00:00Z", `{{ timeInWindow "09:00" "18:00" }}`, "true"},
		{"2026-07-14T23:00:00Z", `{{ timeInWindow "22:00" "06:00" }}`, "false"}, // never across midnight
		{"2026-07-14T14:30:00Z", `{{ timeInWindow "9am" "18:00" }}`, "false"},
		{"2026-07-14T14:30:00+02:00", `{{ timeInWindow "12:00" "12:45" }}`, "true"}, // 12:30 UTC
		{"2026-07-14T14:30:00Z", `{{ and weekday (timeInWindow "09:00" "18:00") }}`, "true"},
		{"2026-07-14T14:30:00Z", `{{ nextCron "0 9 * * 1-5" }}`, "2026-07-15T09:00:00Z"},
		{"2026-07-17T10:00:00Z", `{{ nextCron "0 9 * * 1-5" }}`, "2026-07-20T09:00:00Z"},
		{"2026-07-14T14:30:00Z", `{{ nextCron "not cron" }}`, ""},
	}
	for _, tc := range cases {
		restore := engine.SetClock(func() time.Time { return at(tc.now) })
		got, err := render(t, tc.src, testObject())
		restore()
		if err != nil || got != tc.want {
			t.Errorf("at %s %s = %q, %v; want %q", tc.now, tc.src, got, err, tc.want)
		}
	}
}

// A template reading the clock says when its value may change next, so the
// operator reconciles again then.
func TestClockTimers(t *testing.T) {
	now := time.Date(2026, 7, 14, 14, 30, 0, 0, time.UTC)
	cases := []struct {
		src  string
		want time.Time // zero: not time-dependent
	}{
		{`{{ .spec.image }}`, time.Time{}},
		{`{{ weekday }}`, time.Date(2026, 7, 15, 0, 0, 0, 0, time.UTC)},
		{`{{ timeInWindow "09:00" "18:00" }}`, time.Date(2026, 7, 14, 18, 0, 0, 0, time.UTC)},
		{`{{ timeInWindow "15:00" "18:00" }}`, time.Date(2026, 7, 14, 15, 0, 0, 0, time.UTC)},
		{`{{ timeInWindow "09:00" "10:00" }}`, time.Date(2026, 7, 15, 9, 0, 0, 0, time.UTC)},
		{`{{ timeInWindow .spec.image "18:00" }}`, time.Date(2026, 7, 14, 14, 31, 0, 0, time.UTC)},
		{`{{ nextCron "0 9 * * 1-5" }}`, time.Date(2026, 7, 15, 9, 0, 0, 0, time.UTC)},
		{`{{ and weekday (timeInWindow "14:45" "18:00") }}`, time.Date(2026, 7, 14, 14, 45, 0, 0, time.UTC)},
	}
	for _, tc := range cases {
		e, diags := New(nil).CompileValue(tc.src, testCtx(t))
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		tm := e.(*Template)
		if got := tm.NextChange(now); !got.Equal(tc.want) || tm.ReadsClock() != !tc.want.IsZero() {
			t.Errorf("%s: next change %v (timed %v), want %v", tc.src, got, tm.ReadsClock(), tc.want)
		}
	}
}

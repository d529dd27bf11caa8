package cel

import (
	"testing"
	"time"

	"github.com/orkspace/orkestra-cel/engine"
)

const upstreamSchema = `
type: object
properties:
  spec:
    type: object
    properties:
      schedule: {type: string, maxLength: 64}
      name: {type: string, maxLength: 64}
      domain: {type: string, maxLength: 253}
      child:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`

const upstreamObj = `
spec:
  schedule: "*/5 2 * * 1"
  name: WebsiteOperator
  domain: " https://acme.example.com/ "
  child:
    metadata: {name: web}
    spec:
      replicas: 3
      resources: {requests: {cpu: 250m, memory: 64Mi}}
    status:
      readyReplicas: 3
      phase: Running
      lastScheduleTime: "2026-05-19T02:00:00Z"
    _pods:
      - {name: web-a, ready: true, restartCount: 0}
      - {name: web-b, ready: true, restartCount: 3, containers: [{reason: CrashLoopBackOff}]}
`

// The orkestra library's counterparts of the original's functions give the
// legacy adapter's results (expected values derived by hand from upstream
// pkg/note, as in engine/gotmpl's TestUpstreamFunctions).
func TestUpstreamLibrary(t *testing.T) {
	b := newBackend(t, Options{})
	self := schemaYAML(t, upstreamSchema)
	obj := objYAML(t, upstreamObj)
	cases := []struct {
		src  string
		want any
		err  string
	}{
		{src: "${camelToKebab(self.spec.name)}", want: "website-operator"},
		{src: "${domainHost(self.spec.domain)}", want: "acme.example.com"},
		{src: "${cronMinute(self.spec.schedule)}", want: "*/5"},
		{src: "${cronHour(self.spec.schedule)}", want: "2"},
		{src: "${cronDom(self.spec.schedule)}", want: "*"},
		{src: "${cronMonth('0 0 1 6 *')}", want: "6"},
		{src: "${cronDow('@weekly')}", want: "0"},
		{src: "${cronMinute('')}", want: "*"},
		{src: "${cronMinute('0 0 *')}", err: `cronMinute: expected 5 fields in "0 0 *", got 3`},
		{src: "${cronValid(self.spec.schedule)}", want: true},
		// cronExpr joins five fields, * for a blank one; cronFromAny takes a
		// cron map or string (iAlexeze/orkestra examples/kubebuilder-conversion)
		{src: "${cronExpr('*/5', '0', '', ' ', '1')}", want: "*/5 0 * * 1"},
		{src: "${cronFromAny({'minute': dyn('30'), 'hour': dyn(2)})}", want: "30 2 * * *"},
		{src: "${cronFromAny('@daily')}", want: "0 0 * * *"},
		{src: "${cronFromAny(7)}", want: "* * * * *"},
		{src: "${cronNormalize(' @daily ')}", want: "0 0 * * *"},
		{src: "${cronDescribe('0 2 * * *')}", want: "At 2:0 every day"},
		{src: "${allReplicasReady(self.spec.child)}", want: true},
		{src: "${readyReplicas(self.spec.child)}", want: int64(3)},
		{src: "${resourceExists(self.spec.child)}", want: true},
		{src: "${resourceExists({'_placeholder': true})}", want: false},
		{src: "${phase(self.spec.child)}", want: "Running"},
		{src: "${resourceCPU(self.spec.child)}", want: "250m"},
		{src: "${resourceMemory(self.spec.child)}", want: "64Mi"},
		{src: "${cronJobLastScheduleTime(self.spec.child)}", want: "2026-05-19T02:00:00Z"},
		{src: "${cronJobNextScheduleTime(self.spec.child)}", want: ""},
		{src: "${podCount(self.spec.child)}", want: int64(2)},
		{src: "${readyPodCount(self.spec.child)}", want: int64(2)},
		{src: "${podNames(self.spec.child)}", want: "web-a, web-b"},
		{src: "${podMaxRestarts(self.spec.child)}", want: int64(3)},
		{src: "${hasCrashingPod(self.spec.child)}", want: true},
		{src: "${podContainerReasons(self.spec.child)}", want: "CrashLoopBackOff"},
	}
	s := engine.NewScope(obj)
	for _, tc := range cases {
		e, diags := b.CompileValue(tc.src, &engine.Context{Field: "x", Pos: testPos, Self: self})
		if diags.HasErrors() {
			t.Errorf("%s: %v", tc.src, diags)
			continue
		}
		got, err := e.Eval(s)
		switch {
		case tc.err != "":
			if err == nil || !contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.src, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.src, err)
		case got != tc.want:
			t.Errorf("%s = %#v, want %#v", tc.src, got, tc.want)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// weekday, timeInWindow and nextCron read engine.Now, in UTC.
func TestUpstreamClockFunctions(t *testing.T) {
	b := newBackend(t, Options{})
	self := schemaYAML(t, upstreamSchema)
	now := time.Date(2026, 7, 14, 14, 30, 0, 0, time.UTC) // a Tuesday
	defer engine.SetClock(func() time.Time { return now })()
	cases := []struct {
		src  string
		want any
	}{
		{"${weekday()}", true},
		{"${timeInWindow('09:00', '18:00')}", true},
		{"${timeInWindow('15:00', '18:00')}", false},
		{"${weekday() && timeInWindow('09:00', '14:30')}", false},
		{"${nextCron('0 9 * * 1-5')}", "2026-07-15T09:00:00Z"},
		{"${nextCron('x')}", ""},
	}
	for _, tc := range cases {
		e, diags := b.CompileValue(tc.src, &engine.Context{Field: "x", Pos: testPos, Self: self})
		if diags.HasErrors() {
			t.Fatalf("%s: %v", tc.src, diags)
		}
		if got, err := e.Eval(engine.NewScope(nil)); err != nil || got != tc.want {
			t.Errorf("%s = %#v, %v; want %#v", tc.src, got, err, tc.want)
		}
	}
}

// Their cost is estimated: a string function over a bounded string is
// cheap, over a field bounded only by the request size it is counted.
func TestUpstreamLibraryCost(t *testing.T) {
	b := newBackend(t, Options{CostLimit: 100})
	self := schemaYAML(t, upstreamSchema)
	for src, ok := range map[string]bool{
		"${camelToKebab(self.spec.name)}":            true,
		"${allReplicasReady(self.spec.child)}":       true,
		"${camelToKebab(string(self.spec.child.x))}": false,
	} {
		_, diags := b.CompileValue(src, &engine.Context{Field: "x", Pos: testPos, Self: self})
		if diags.HasErrors() == ok || !ok && !contains(diags.Error(), "estimated cost") {
			t.Errorf("%s: %v", src, diags)
		}
	}
}

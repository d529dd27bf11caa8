package cel

import (
	"testing"
	"time"

	"github.com/orkspace/orkestra-cel/engine"
)

// weekday, timeInWindow and nextCron read engine.Now, in UTC.
func TestClockFunctions(t *testing.T) {
	b := newBackend(t, Options{})
	self := schemaYAML(t, "type: object")
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

// isExpired: the timestamp plus the duration is past; its value changes
// once, at that instant (every minute when the arguments are not
// literals).
func TestIsExpired(t *testing.T) {
	b := newBackend(t, Options{})
	self := schemaYAML(t, "type: object\nproperties:\n  spec:\n    type: object\n    properties:\n      at: {type: string}")
	now := time.Date(2026, 7, 14, 14, 30, 0, 0, time.UTC)
	defer engine.SetClock(func() time.Time { return now })()
	cases := []struct {
		src  string
		want bool
		next time.Time
	}{
		{"${isExpired('2026-07-01T00:00:00Z', '7d')}", true, time.Time{}},
		{"${isExpired('2026-07-14T00:00:00Z', '1d')}", false, time.Date(2026, 7, 15, 0, 0, 0, 0, time.UTC)},
		{"${isExpired('2026-07-14', '12h')}", true, time.Time{}},
		{"${isExpired('garbage', '1d')}", false, time.Time{}},
		{"${isExpired(self.spec.at, '1d')}", false, time.Date(2026, 7, 14, 14, 31, 0, 0, time.UTC)},
	}
	for _, tc := range cases {
		e, diags := b.CompileValue(tc.src, &engine.Context{Field: "x", Pos: testPos, Self: self})
		if diags.HasErrors() {
			t.Fatalf("%s: %v", tc.src, diags)
		}
		got, err := e.Eval(engine.NewScope(map[string]any{"spec": map[string]any{"at": "bad"}}))
		if err != nil || got != tc.want {
			t.Errorf("%s = %#v, %v; want %v", tc.src, got, err, tc.want)
		}
		if next := e.(engine.Timed).NextChange(now); !next.Equal(tc.next) {
			t.Errorf("%s: next change %v, want %v", tc.src, next, tc.next)
		}
	}
}

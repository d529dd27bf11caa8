package gotmpl

import (
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
)

// Issue 18 item 6: defects of the original engine this runtime does not
// copy, each warned about at load where a katalog's meaning depends on it.
func TestUpstreamDefectWarnings(t *testing.T) {
	conv := func() *engine.Context {
		c := testCtx(t)
		c.Field = "conversion.paths[0].spec.x"
		c.Coerce = engine.CoerceGuess
		return c
	}
	convString := func() *engine.Context {
		c := conv()
		c.Expected = sch("string")
		return c
	}
	cases := []struct {
		src  string
		ctx  *engine.Context
		want string
	}{
		// conditional.go noteIsTruthy: `case int, int8, …: return val != 0`
		// compares an interface holding int64(0) with int 0: never equal.
		{`{{ ternary .spec.count "some" "none" }}`, testCtx(t),
			"k.yaml:10:23: warning: [things] spec.x: ternary reads the integer .spec.count as false when it is 0, as Go and the original's docs do; the original engine read every integer, 0 included, as true (its truthiness compared an int64 with an int); write ternary (ne .spec.count 0) … to mean the same in both"},
		{`{{ ternary (len .spec.tags) "some" "none" }}`, testCtx(t),
			"k.yaml:10:23: warning: [things] spec.x: ternary reads the integer (len .spec.tags) as false when it is 0, as Go and the original's docs do; the original engine read every integer, 0 included, as true (its truthiness compared an int64 with an int); write ternary (ne (len .spec.tags) 0) … to mean the same in both"},
		{`{{ ternary .spec.enabled "on" "off" }}`, testCtx(t), ""},
		// A field whose schema leaves room for an integer: no type
		// (x-kubernetes-preserve-unknown-fields, int-or-string, a field
		// below one) or a number, whose whole values the API server keeps
		// as int64.
		{`{{ ternary .spec.schedule "some" "none" }}`, testCtx(t),
			"k.yaml:10:23: warning: [things] spec.x: ternary reads .spec.schedule, which the schema lets hold an integer, as false when it is the integer 0, as Go and the original's docs do; the original engine read every integer, 0 included, as true (its truthiness compared an int64 with an int); give the field a type (a boolean or a string reads the same in both; for a number write ternary (ne .spec.schedule 0) …)"},
		{`{{ ternary .spec.config.a "some" "none" }}`, testCtx(t),
			"k.yaml:10:23: warning: [things] spec.x: ternary reads .spec.config.a, which the schema lets hold an integer, as false when it is the integer 0, as Go and the original's docs do; the original engine read every integer, 0 included, as true (its truthiness compared an int64 with an int); give the field a type (a boolean or a string reads the same in both; for a number write ternary (ne .spec.config.a 0) …)"},
		{`{{ ternary .spec.size "some" "none" }}`, testCtx(t),
			"k.yaml:10:23: warning: [things] spec.x: ternary reads .spec.size, which the schema lets hold an integer, as false when it is the integer 0, as Go and the original's docs do; the original engine read every integer, 0 included, as true (its truthiness compared an int64 with an int); give the field a type (a boolean or a string reads the same in both; for a number write ternary (ne .spec.size 0) …)"},
		{`{{ ternary .spec.ratio "some" "none" }}`, testCtx(t),
			"k.yaml:10:23: warning: [things] spec.x: ternary reads .spec.ratio, which the schema lets hold an integer, as false when it is the integer 0, as Go and the original's docs do; the original engine read every integer, 0 included, as true (its truthiness compared an int64 with an int); give the field a type (a boolean or a string reads the same in both; for a number write ternary (ne .spec.ratio 0) …)"},
		{`{{ ternary .spec.tier "some" "none" }}`, testCtx(t), ""},
		{`{{ ternary .spec.tags "some" "none" }}`, testCtx(t), ""},
		// The original's /convert saw float64 numbers, whose 0 it held
		// false too: nothing differs in a conversion path.
		{`{{ ternary .spec.count "some" "none" }}`, conv(), ""},
		{`{{ ternary .spec.schedule "some" "none" }}`, conv(), ""},
		// types.go OrkLen: only []interface{}, maps and strings; split
		// returns []string, whose len was 0.
		{`{{ len (split .spec.domain ".") }}`, testCtx(t),
			"k.yaml:10:23: warning: [things] spec.x: len counts the items split returns; the original engine's len knew only the object's lists, maps and strings and gave 0 for a split result; count them another way to mean the same in both (for example with a range)"},
		{`{{ split .spec.domain "." | len }}`, testCtx(t),
			"k.yaml:10:48: warning: [things] spec.x: len counts the items split returns; the original engine's len knew only the object's lists, maps and strings and gave 0 for a split result; count them another way to mean the same in both (for example with a range)"},
		{`{{ len .spec.tags }}`, testCtx(t), ""},
		// The original /convert decoded the object with float64 numbers.
		{`{{ .spec.replicas }}`, conv(), ""}, // a number either way in an untyped output
		{`{{ .spec.replicas }}`, convString(),
			"k.yaml:10:23: warning: [things] conversion.paths[0].spec.x: .spec.replicas is an integer here; the original engine's /convert decoded numbers as float64, so it printed as 1e+06 from one million on and compared with an integer failed; this runtime keeps it an integer"},
		{`{{ .metadata.name }}-{{ .spec.replicas }}`, conv(),
			"k.yaml:10:44: warning: [things] conversion.paths[0].spec.x: .spec.replicas is an integer here; the original engine's /convert decoded numbers as float64, so it printed as 1e+06 from one million on and compared with an integer failed; this runtime keeps it an integer"},
		{`{{ if eq .spec.replicas 3 }}a{{ end }}`, conv(),
			"k.yaml:10:26: warning: [things] conversion.paths[0].spec.x: .spec.replicas is an integer here; the original engine's /convert decoded numbers as float64, so it printed as 1e+06 from one million on and compared with an integer failed; this runtime keeps it an integer"},
		{`{{ .metadata.name }}-{{ .spec.replicas }}`, testCtx(t), ""}, // reconciling read int64
	}
	for _, tc := range cases {
		if got := compileErrs(t, tc.src, tc.ctx); got != tc.want {
			t.Errorf("%s (%s):\n got %s\nwant %s", tc.src, tc.ctx.Field, got, tc.want)
		}
	}
}

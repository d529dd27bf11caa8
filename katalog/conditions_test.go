package katalog

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// whenBody is an entry with one configMap whose when: is the given list
// items (indented for the list); line 19 holds the first item.
func whenBody(items string) string {
	return header + entry + "      operatorBox:\n        onCreate:\n          configMaps:\n            - data: {a: b}\n              when:\n" + items
}

// The original's condition forms (pkg/types/when.go ResolveConditionOp and
// evaluateOneCond in the upstream source; conditions.go for the keys).
func TestConditionForms(t *testing.T) {
	tru, fal := true, false
	cases := []struct {
		name, items string
		want        Condition
	}{
		// No operator: value alone is equals, nothing at all is exists
		// (ResolveConditionOp's last two cases).
		{"value without operator", "                - field: spec.tier\n                  value: pro\n",
			Condition{Field: "spec.tier", Operator: "equals", Value: "pro"}},
		{"no operator at all", "                - field: spec.tier\n",
			Condition{Field: "spec.tier", Operator: "exists"}},
		// greaterThanOrEqual / lessThanOrEqual are gte / lte.
		{"greaterThanOrEqual", "                - field: spec.replicas\n                  greaterThanOrEqual: \"2\"\n",
			Condition{Field: "spec.replicas", Operator: "gte", Value: "2"}},
		{"lessThanOrEqual", "                - field: spec.replicas\n                  lessThanOrEqual: \"5\"\n",
			Condition{Field: "spec.replicas", Operator: "lte", Value: "5"}},
		// The type operators, written with operator: as in the original.
		{"typeOf", "                - field: spec.schedule\n                  operator: typeOf\n                  value: map\n",
			Condition{Field: "spec.schedule", Operator: "typeOf", Value: "map"}},
		{"typeString", "                - field: spec.schedule\n                  operator: typeString\n",
			Condition{Field: "spec.schedule", Operator: "typeString"}},
		// Clock conditions have no field.
		{"time", "                - time:\n                    after: \"09:00\"\n                    before: \"18:00\"\n",
			Condition{Time: &TimeWindow{After: "09:00", Before: "18:00"}}},
		{"dayOfWeek weekday", "                - dayOfWeek:\n                    weekday: true\n                  negate: true\n",
			Condition{DayOfWeek: &DayOfWeek{Weekday: &tru}, Negate: true}},
		{"dayOfWeek weekend false", "                - dayOfWeek: {weekend: false}\n",
			Condition{DayOfWeek: &DayOfWeek{Weekend: &fal}}},
		{"dayOfWeek in", "                - dayOfWeek: {in: [Monday, friday]}\n",
			Condition{DayOfWeek: &DayOfWeek{In: []string{"Monday", "friday"}}}},
		{"cron with duration", "                - cron: \"0 9 * * 1-5\"\n                  duration: 9h\n",
			Condition{Cron: "0 9 * * 1-5", Duration: 9 * time.Hour}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k, diags := Load(writeKatalog(t, whenBody(tc.items)))
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			got := *k.CRDs[0].Box.Hooks[OnCreate].Resources[0].When.Conditions[0]
			// positions are checked by TestConditionErrors
			got.Pos, got.FieldPos, got.ValuePos = Pos{}, Pos{}, Pos{}
			if got.Time != nil {
				got.Time.Pos = Pos{}
			}
			if got.DayOfWeek != nil {
				got.DayOfWeek.Pos = Pos{}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestConditionErrors(t *testing.T) {
	cases := []struct{ name, items, want string }{
		{"bad time", "                - time: {after: \"9am\"}\n", `19:33: [site] operatorBox.onCreate.configMaps[0].when[0].time.after: time.after must be HH:MM (24-hour, UTC), got "9am"; the original engine treated the condition as always false`},
		{"two clock tests", "                - time: {after: \"09:00\"}\n                  dayOfWeek: {weekday: true}\n", `19:19: [site] operatorBox.onCreate.configMaps[0].when[0]: a condition is one test: time, dayOfWeek are in one entry; write one condition per test`},
		{"bad day", "                - dayOfWeek: {in: [Mon]}\n", `19:36: [site] operatorBox.onCreate.configMaps[0].when[0].dayOfWeek.in: "Mon" is not a day of the week; write Monday … Sunday (the original engine never matched it)`},
		{"duration without cron", "                - field: spec.tier\n                  duration: 1h\n", `20:19: [site] operatorBox.onCreate.configMaps[0].when[0].duration: duration belongs to a cron: condition`},
		{"unknown type operator", "                - field: spec.tier\n                  operator: typeMapp\n", `20:29: [site] operatorBox.onCreate.configMaps[0].when[0].operator: unknown operator "typeMapp"; did you mean "typeMap"?`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := writeKatalog(t, whenBody(tc.items))
			_, diags := Load(p)
			errs := diags.Errors()
			if len(errs) == 0 || !strings.HasPrefix(errs[0].Error(), p+":"+tc.want) {
				t.Fatalf("got %v\nwant %s:%s", errs, p, tc.want)
			}
		})
	}
}

// Short forms the original read differently load with a warning naming both
// readings (issue 18 item 6): it skipped a short form with an empty value
// and did not know gt:/lt:/gte:/lte:, testing that the field exists.
func TestConditionUpstreamWarnings(t *testing.T) {
	cases := []struct{ items, want string }{
		{"                - field: spec.tier\n                  equals: \"\"\n", `20:19: warning: [site] operatorBox.onCreate.configMaps[0].when[0].equals: equals: "" is read here as written; the original engine skipped a short form with an empty value and tested that spec.tier exists instead; write notExists: true for "spec.tier is empty", or exists: true for the original's reading`},
		{"                - field: spec.tier\n                  notEquals: \"\"\n", `20:19: warning: [site] operatorBox.onCreate.configMaps[0].when[0].notEquals: notEquals: "" is read here as written (spec.tier is not empty); the original engine skipped a short form with an empty value and tested that spec.tier exists instead, which fails also when it holds the text "<no value>"; write exists: true to mean the same in both`},
		{"                - field: spec.tier\n                  operator: notEquals\n                  value: \"\"\n", ""}, // the long form is read alike
		{"                - field: spec.replicas\n                  gt: \"2\"\n", `20:19: warning: [site] operatorBox.onCreate.configMaps[0].when[0].gt: gt: is read here as a numeric comparison; the original engine did not know it (it knew greaterThan, lessThan, greaterThanOrEqual, lessThanOrEqual) and tested only that spec.replicas exists; write greaterThan: to mean the comparison in both`},
	}
	for _, tc := range cases {
		p := writeKatalog(t, whenBody(tc.items))
		_, diags := Load(p)
		if tc.want == "" {
			if len(diags) != 0 {
				t.Errorf("%q: %v, want nothing", tc.items, diags)
			}
			continue
		}
		if diags.HasErrors() || len(diags) != 1 || diags[0].Error() != p+":"+tc.want {
			t.Errorf("got %v\nwant %s:%s", diags, p, tc.want)
		}
	}
}

// Status field types: the original's spellings, case-insensitive
// (upstream pkg/katalog validateStatusTypes: "", string, str, default, int,
// integer, bool, boolean, float, auto).
func TestStatusTypeSpellings(t *testing.T) {
	body := header + entry + "      operatorBox:\n        status:\n          fields:\n"
	spell := [][2]string{{"str", "string"}, {"Default", "string"}, {"STRING", "string"}, {"integer", "int"}, {"Boolean", "bool"}, {"float", "float"}, {"auto", "auto"}}
	for i, sp := range spell {
		body += "            - path: f" + string(rune('a'+i)) + "\n              value: x\n              type: " + sp[0] + "\n"
	}
	k, diags := Load(writeKatalog(t, body))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for i, sp := range spell {
		if got := k.CRDs[0].Box.Status.Fields[i].Type; got != sp[1] {
			t.Errorf("type: %s → %q, want %q", sp[0], got, sp[1])
		}
	}
	p := writeKatalog(t, header+entry+"      operatorBox:\n        status:\n          fields:\n            - path: f\n              value: x\n              type: number\n")
	_, diags = Load(p)
	want := p + ":19:21: [site] operatorBox.status.fields[0].type: type must be string (or str, default), int (integer), float, bool (boolean) or auto, got \"number\""
	if errs := diags.Errors(); len(errs) != 1 || errs[0].Error() != want {
		t.Fatalf("got %v\nwant %s", errs, want)
	}
}

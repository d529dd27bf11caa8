package gotmpl

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/cel-go/cel"

	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/notes"
)

// The cron functions (upstream pkg/note/cron.go, docs/05-cron.md).

var cronFamily = family{name: "cron", functions: []*function{
	{name: "cronFromAny", fn: notes.CronFromAny, doc: "`cronFromAny` (a map or string to a five-field expression; `@daily` and friends expanded; anything else gives `* * * * *`)",
		celDecl: []celengine.Overload{celengine.ObjectFunction("cronFromAny", cel.StringType, func(o any) any { return notes.CronFromAny(o) })},
		noCEL:   "a missing field fails in CEL's cronFromAny, where the legacy one gives \"* * * * *\""},
	{name: "cronFromMap", fn: fnCronFromMap, doc: "`cronFromMap`",
		noCEL: "CEL's cronFromMap rejects keys other than the five fields and values other than strings and integers, which the legacy one ignores or prints"},
	{name: "cronToMap", fn: fnCronToMap, doc: "`cronToMap` (a string to `{minute, hour, dayOfMonth, month, dayOfWeek}`; must be the whole value, into a map field, an untyped conversion field or a `type: auto` status field)",
		mapHint: "use cronFromAny for a cron string",
		// Upstream decoded cronToMap's map only in conversion paths
		// (pkg/webhook resolveValue); a status field got its internal
		// text, castStatusValue's auto finding no number or bool in it.
		mapAuto: "cronToMap writes the map {minute, hour, dayOfMonth, month, dayOfWeek} into this type: auto status field; the original engine decoded that map only in conversion paths and wrote its internal text here (NUL bytes, then the map as JSON); write cronFromAny for the schedule as a string in both",
		noCEL:   "CEL's cronToMap fails on a schedule without five fields, where the legacy one gives every field \"*\""},
	noteString("cronNormalize", notes.CronNormalize, 2, func(_, out val) val {
		// five fields joined by single spaces: never empty, no white
		// space at the edges; ASCII when the input is
		out.nonEmpty, out.noEdgeSpace, out.noSpace = true, true, false
		return out
	}, "`cronNormalize`"),
	{name: "cronExpr", fn: notes.CronExpr, pipeFirst: true, translate: trCronExpr, doc: "`cronExpr M H DOM MON DOW`",
		celDecl: []celengine.Overload{celengine.StringsFunction("cronExpr", 5, 1, 9, func(f []string) (string, error) {
			// the fields, four spaces, and "*" for each blank one
			return notes.CronExpr(f[0], f[1], f[2], f[3], f[4]), nil
		})}},
	noteString("cronMinute", notes.CronMinute, 1, nil, "`cronMinute`"),
	noteString("cronHour", notes.CronHour, 1, nil, "`cronHour`"),
	noteString("cronDom", notes.CronDom, 1, nil, "`cronDom`"),
	noteString("cronMonth", notes.CronMonth, 1, nil, "`cronMonth`"),
	noteString("cronDow", notes.CronDow, 1, nil, "`cronDow` (one field of a schedule; an error when it has not five)"),
	spaceless(valueFirst(noteFunction("cronField", notes.CronField, []vkind{vString, vInt}, 1, "`cronField S I` (field I, 0 to 4)"))),
	{name: "cronValid", fn: notes.CronValid, translate: trCronValid, celDecl: []celengine.Overload{celengine.StringPredicate("cronValid", notes.CronValid)},
		doc: "`cronValid` (five fields after expanding macros)"},
	noteString("cronDescribe", notes.CronDescribe, 1, func(in, out val) val {
		out.nonEmpty, out.noEdgeSpace, out.ascii = true, in.noEdgeSpace && in.ascii, in.ascii
		return out
	}, "`cronDescribe` (the schedule in words, as the original printed it)"),
}}

// cronMapSentinel prefixes the JSON that cronToMap renders, so that the
// adapter turns the value into a map (as the original conversion engine did).
const cronMapSentinel = "\x00CMAP\x00"

var cronKeys = []string{"minute", "hour", "dayOfMonth", "month", "dayOfWeek"}

// cronToMapValue splits a cron expression into its five named fields (all
// "*" when empty or not five fields); a map is returned as is.
func cronToMapValue(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	out := map[string]any{"minute": "*", "hour": "*", "dayOfMonth": "*", "month": "*", "dayOfWeek": "*"}
	expr := fnToString(v)
	if strings.TrimSpace(expr) == "" {
		return out
	}
	parts := strings.Fields(notes.ExpandCronMacro(expr))
	if len(parts) != 5 {
		return out
	}
	for i, k := range cronKeys {
		out[k] = parts[i]
	}
	return out
}

func fnCronToMap(v any) (string, error) {
	b, err := json.Marshal(cronToMapValue(v))
	if err != nil {
		return "", fmt.Errorf("cronToMap: %w", err)
	}
	return cronMapSentinel + string(b), nil
}

func fnCronFromMap(v any) (string, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", fmt.Errorf("cronFromMap: expected map, got %T — use cronFromAny if the input may be a cron string", v)
	}
	return notes.CronFromMap(m), nil
}

// ── translations ────────────────────────────────────────────────────────────

func trCronExpr(t *translator, x *call) val {
	t.arity(x, 5, 5)
	var fs []string
	for i := range x.args {
		fs = append(fs, t.want(x.args[i], vString, x.name(), x.node(i)).expr)
	}
	return val{kind: vString, expr: "cronExpr(" + strings.Join(fs, ", ") + ")", prec: precPrimary, nonEmpty: true}
}

func trCronValid(t *translator, x *call) val {
	t.arity(x, 1, 1)
	s := t.want(x.args[0], vString, x.name(), x.node(0))
	return val{kind: vBool, expr: "cronValid(" + s.expr + ")", prec: precPrimary}
}

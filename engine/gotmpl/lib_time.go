package gotmpl

import (
	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/notes"
)

// The clock functions (upstream pkg/note/time.go): they read the clock
// (engine.Now, UTC), so a template calling one is time-dependent. Their
// CEL counterparts are the orkestra library's, whose timers engine/cel
// derives from the calls (clock.go there, clock.go here).

var timeFamily = family{name: "clock (UTC; the value becomes time-dependent, see below)", functions: []*function{
	{name: "weekday", fn: func() bool { return notes.Weekday(engine.Now()) }, clock: clockMidnight, translate: trWeekday, cel: "weekday",
		doc: "`weekday` (Monday to Friday)"},
	{name: "timeInWindow", fn: func(after, before string) bool { return notes.TimeInWindow(engine.Now(), after, before) }, clock: clockWindow, translate: trTimeInWindow, cel: "timeInWindow",
		doc: "`timeInWindow \"HH:MM\" \"HH:MM\"` (after ≤ now < before today; a window across midnight never holds, as in the original)"},
	{name: "weekend", fn: func() bool { return notes.Weekend(engine.Now()) }, clock: clockMidnight, translate: trWeekend, cel: "weekday",
		doc: "`weekend` (Saturday or Sunday)"},
	{name: "timeNotInWindow", fn: func(after, before string) bool { return !notes.TimeInWindow(engine.Now(), after, before) }, clock: clockWindow, translate: trTimeInWindow, cel: "timeInWindow",
		doc: "`timeNotInWindow \"HH:MM\" \"HH:MM\"` (the complement)"},
	{name: "isExpired", fn: func(ts any, dur string) bool { return notes.IsExpired(engine.Now(), ts, dur) }, clock: clockExpiry, pipeFirst: true, translate: trIsExpired, cel: "isExpired",
		doc: "`isExpired TIMESTAMP DURATION` (the timestamp plus the duration is past; false when either does not parse)"},
	{name: "nextCron", fn: func(expr string) string { return notes.NextCron(engine.Now(), expr) }, clock: clockCron, translate: trNextCron, cel: "nextCron",
		doc: "`nextCron S` (the next fire, RFC 3339)"},
}}

func trWeekday(t *translator, x *call) val {
	t.arity(x, 0, 0)
	return val{kind: vBool, expr: "weekday()", prec: precPrimary}
}

// trWeekend: Saturday and Sunday are exactly the days weekday is false.
func trWeekend(t *translator, x *call) val {
	t.arity(x, 0, 0)
	return val{kind: vBool, expr: "!weekday()", prec: precUnary}
}

// trTimeInWindow also gives timeNotInWindow, its complement.
func trTimeInWindow(t *translator, x *call) val {
	t.arity(x, 2, 2)
	a, b := t.want(x.args[0], vString, x.name(), x.node(0)), t.want(x.args[1], vString, x.name(), x.node(1))
	out := val{kind: vBool, expr: "timeInWindow(" + a.expr + ", " + b.expr + ")", prec: precPrimary}
	if x.name() == "timeNotInWindow" {
		out.expr, out.prec = "!"+out.expr, precUnary
	}
	return out
}

func trIsExpired(t *translator, x *call) val {
	t.arity(x, 2, 2)
	ts, dur := t.want(x.args[0], vString, x.name(), x.node(0)), t.want(x.args[1], vString, x.name(), x.node(1))
	return val{kind: vBool, expr: "isExpired(" + ts.expr + ", " + dur.expr + ")", prec: precPrimary}
}

func trNextCron(t *translator, x *call) val {
	t.arity(x, 1, 1)
	s := t.want(x.args[0], vString, x.name(), x.node(0))
	return val{kind: vString, expr: "nextCron(" + s.expr + ")", prec: precPrimary, ascii: true, noSpace: true, noEdgeSpace: true}
}

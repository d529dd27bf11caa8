package cel

import (
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/notes"
)

// An expression that calls a clock-reading function (weekday, timeInWindow,
// nextCron, isExpired, and the legacy.* helpers of `time:`, `dayOfWeek:`, `cron:`
// conditions) may change without any change to the object. Its timers, found
// in the checked expression at compile time, say when: from the literal
// arguments, else every minute.

type clockTimer func(now time.Time) time.Time

func clockTimers(e ast.Expr) []clockTimer {
	var out []clockTimer
	ast.PreOrderVisit(e, ast.NewExprVisitor(func(x ast.Expr) {
		if x.Kind() != ast.CallKind {
			return
		}
		call := x.AsCall()
		args := call.Args()
		str := func(i int) (string, bool) {
			if i >= len(args) {
				return "", false
			}
			return literalString(args[i])
		}
		switch call.FunctionName() {
		case "weekday", "legacy.dayOfWeek":
			out = append(out, notes.NextMidnight)
		case "timeInWindow", "legacy.timeWindow":
			a, ok1 := str(0)
			b, ok2 := str(1)
			if !ok1 || !ok2 {
				out = append(out, everyMinute)
				return
			}
			if !notes.NextWindowChange(a, b, time.Time{}).IsZero() {
				out = append(out, func(now time.Time) time.Time { return notes.NextWindowChange(a, b, now) })
			}
		case "isExpired":
			ts, ok1 := str(0)
			dur, ok2 := str(1)
			if !ok1 || !ok2 {
				out = append(out, everyMinute)
				return
			}
			if at := notes.ExpiresAt(ts, dur); !at.IsZero() {
				out = append(out, func(now time.Time) time.Time {
					if now.Before(at) {
						return at
					}
					return time.Time{}
				})
			}
		case "nextCron", "legacy.cronWindow":
			expr, ok := str(0)
			if !ok {
				out = append(out, everyMinute)
				return
			}
			s, err := notes.ParseSchedule(expr)
			if err != nil {
				return
			}
			var dur time.Duration
			if len(args) == 2 && args[1].Kind() == ast.LiteralKind {
				if n, ok := args[1].AsLiteral().(types.Int); ok {
					dur = time.Duration(n) * time.Second
				}
			}
			if call.FunctionName() == "nextCron" {
				out = append(out, s.Next)
				return
			}
			out = append(out, func(now time.Time) time.Time { return notes.NextCronWindowChange(s, dur, now) })
		}
	}))
	return out
}

func everyMinute(now time.Time) time.Time { return now.Truncate(time.Minute).Add(time.Minute) }

// nextChange is the earliest change of ts after now; zero when ts is empty.
func nextChange(now time.Time, ts []clockTimer) time.Time {
	var out time.Time
	for _, t := range ts {
		if n := t(now); !n.IsZero() && (out.IsZero() || n.Before(out)) {
			out = n
		}
	}
	return out
}

func (e *valueExpr) programs() []*program {
	if e.single != nil {
		return []*program{e.single}
	}
	var out []*program
	for _, pt := range e.parts {
		if pt.p != nil {
			out = append(out, pt.p)
		}
	}
	return out
}

// ReadsClock implements engine.Timed.
func (e *valueExpr) ReadsClock() bool {
	for _, p := range e.programs() {
		if len(p.timers) > 0 {
			return true
		}
	}
	return false
}

// NextChange implements engine.Timed.
func (e *valueExpr) NextChange(now time.Time) time.Time {
	var ts []clockTimer
	for _, p := range e.programs() {
		ts = append(ts, p.timers...)
	}
	return nextChange(now, ts)
}

// ReadsClock implements engine.Timed.
func (c *condition) ReadsClock() bool { return c.p != nil && len(c.p.timers) > 0 }

// NextChange implements engine.Timed.
func (c *condition) NextChange(now time.Time) time.Time {
	if c.p == nil {
		return time.Time{}
	}
	return nextChange(now, c.p.timers)
}

// clockLib is the part of the orkestra library that reads the clock
// (engine.Now, UTC), the counterparts of the original engine's clock
// functions, declared here because this package derives the timers of an
// expression from their calls (clockTimers):
//
//	weekday() bool                    Monday to Friday
//	timeInWindow(string, string) bool after <= now < before ("HH:MM")
//	nextCron(string) string           the schedule's next fire (RFC 3339)
//	isExpired(string, string) bool    timestamp + duration is past
type clockLib struct{}

func (clockLib) LibraryName() string { return "orkestra.clock" }

func (clockLib) CompileOptions() []cel.EnvOption { return clockDefs().CompileOptions() }

func (clockLib) ProgramOptions() []cel.ProgramOption { return clockDefs().ProgramOptions() }

func clockDefs() Overloads {
	track := stringCost(argsAndResult)
	return Overloads{
		Overload{Function: "weekday", ID: "weekday", Result: cel.BoolType,
			Binding:  cel.FunctionBinding(func(...ref.Val) ref.Val { return types.Bool(notes.Weekday(engine.Now())) }),
			Estimate: fixedCall(1), Track: track},
		Overload{Function: "timeInWindow", ID: "timeInWindow_string_string", Args: []*cel.Type{cel.StringType, cel.StringType}, Result: cel.BoolType,
			Binding: cel.BinaryBinding(func(a, b ref.Val) ref.Val {
				after, ok1 := a.(types.String)
				before, ok2 := b.(types.String)
				if !ok1 || !ok2 {
					return types.NoSuchOverloadErr()
				}
				return types.Bool(notes.TimeInWindow(engine.Now(), string(after), string(before)))
			}),
			Estimate: traversal(0), Track: track},
		Overload{Function: "isExpired", ID: "isExpired_string_string", Args: []*cel.Type{cel.StringType, cel.StringType}, Result: cel.BoolType,
			Binding: cel.BinaryBinding(func(a, b ref.Val) ref.Val {
				ts, ok1 := a.(types.String)
				dur, ok2 := b.(types.String)
				if !ok1 || !ok2 {
					return types.NoSuchOverloadErr()
				}
				return types.Bool(notes.IsExpired(engine.Now(), string(ts), string(dur)))
			}),
			Estimate: traversal(0), Track: track},
		Overload{Function: "nextCron", ID: "nextCron_string", Args: []*cel.Type{cel.StringType}, Result: cel.StringType,
			Binding: cel.UnaryBinding(func(arg ref.Val) ref.Val {
				s, ok := arg.(types.String)
				if !ok {
					return types.MaybeNoSuchOverloadErr(arg)
				}
				return types.String(notes.NextCron(engine.Now(), string(s)))
			}),
			Estimate: func(est checker.CostEstimator, _ *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
				// parsing the schedule, then an RFC 3339 time
				size := checker.FixedSizeEstimate(25)
				return &checker.CallEstimate{CostEstimate: sizeOf(est, args[0]).MultiplyByCostFactor(common.StringTraversalCostFactor).Add(checker.FixedCostEstimate(10)), ResultSize: &size}
			},
			Track: track},
	}
}

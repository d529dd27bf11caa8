package cel

import (
	"math"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/notes"
)

// upstreamLib is the part of the orkestra library that carries the original
// engine's template functions into CEL, typed, with the legacy adapter's
// implementation (engine/notes):
//
//	camelToKebab(string) string      domainHost(string) string
//	cronMinute(string) string        cronHour, cronDom, cronMonth, cronDow
//	cronValid(string) bool           cronDescribe(string) string
//	cronExpr(string, string, string, string, string) string  cronFromAny(dyn) string
//	cronNormalize(string) string
//	allReplicasReady(dyn) bool       readyReplicas(dyn) int
//	resourceExists(dyn) bool         phase(dyn) string
//	resourceCPU(dyn) string          resourceMemory(dyn) string
//	cronJobLastScheduleTime(dyn) string, cronJobNextScheduleTime(dyn) string
//	podCount(dyn) int  readyPodCount(dyn) int  podMaxRestarts(dyn) int
//	podNames(dyn) string  podContainerReasons(dyn) string  hasCrashingPod(dyn) bool
//	weekday() bool  timeInWindow(string, string) bool  nextCron(string) string
//
// The dyn functions take a Kubernetes object (a child of the custom
// resource). weekday, timeInWindow and nextCron read the clock
// (engine.Now): an expression using them is time-dependent.
type upstreamLib struct{}

func (upstreamLib) LibraryName() string { return "orkestra.upstream" }

// ClockFunctions are the functions of the library that read the clock.
var ClockFunctions = []string{"weekday", "timeInWindow", "nextCron"}

// strFn1 is a string → string function of the library.
type strFn1 struct {
	name string
	fn   func(string) (string, error)
	grow float64 // result size per input byte, at most
}

// objFn is a function of a Kubernetes object.
type objFn struct {
	name string
	out  *cel.Type
	fn   func(any) ref.Val
}

func upstreamStringFns() []strFn1 {
	plain := func(f func(string) string) func(string) (string, error) {
		return func(s string) (string, error) { return f(s), nil }
	}
	return []strFn1{
		{"camelToKebab", plain(notes.CamelToKebab), 2},
		{"domainHost", plain(func(s string) string { return notes.DomainHost(s) }), 1},
		{"cronMinute", notes.CronMinute, 1},
		{"cronHour", notes.CronHour, 1},
		{"cronDom", notes.CronDom, 1},
		{"cronMonth", notes.CronMonth, 1},
		{"cronDow", notes.CronDow, 1},
		{"cronDescribe", plain(notes.CronDescribe), 1},
		{"cronNormalize", plain(notes.CronNormalize), 2},
	}
}

func upstreamObjectFns() []objFn {
	str := func(f func(any) string) func(any) ref.Val { return func(o any) ref.Val { return types.String(f(o)) } }
	integer := func(f func(any) int) func(any) ref.Val { return func(o any) ref.Val { return types.Int(f(o)) } }
	boolean := func(f func(any) bool) func(any) ref.Val { return func(o any) ref.Val { return types.Bool(f(o)) } }
	return []objFn{
		{"allReplicasReady", cel.BoolType, boolean(notes.AllReplicasReady)},
		{"readyReplicas", cel.IntType, integer(notes.ReadyReplicas)},
		{"resourceExists", cel.BoolType, boolean(notes.ResourceExists)},
		{"phase", cel.StringType, str(notes.Phase)},
		{"resourceCPU", cel.StringType, str(notes.ResourceCPU)},
		{"resourceMemory", cel.StringType, str(notes.ResourceMemory)},
		{"cronJobLastScheduleTime", cel.StringType, str(notes.CronJobLastScheduleTime)},
		{"cronJobNextScheduleTime", cel.StringType, str(notes.CronJobNextScheduleTime)},
		{"podCount", cel.IntType, integer(notes.PodCount)},
		{"readyPodCount", cel.IntType, integer(notes.ReadyPodCount)},
		{"podMaxRestarts", cel.IntType, func(o any) ref.Val { return types.Int(notes.PodMaxRestarts(o)) }},
		{"podNames", cel.StringType, str(notes.PodNames)},
		{"podContainerReasons", cel.StringType, str(notes.PodContainerReasons)},
		{"hasCrashingPod", cel.BoolType, boolean(notes.HasCrashingPod)},
		{"cronFromAny", cel.StringType, str(notes.CronFromAny)},
	}
}

// rawOf is the unstructured data behind a CEL value: an object read from
// self or a child as it is, anything else converted.
func rawOf(v ref.Val) any {
	switch x := v.(type) {
	case *mapVal:
		return x.m
	case *listVal:
		return x.l
	}
	n, err := ToNative(v)
	if err != nil {
		return nil
	}
	return n
}

func (upstreamLib) CompileOptions() []cel.EnvOption { return upstreamDefs().compileOptions() }

func (upstreamLib) ProgramOptions() []cel.ProgramOption { return upstreamDefs().programOptions() }

func upstreamDefs() libDefs {
	// One unit, plus a tenth per byte of the strings read and built.
	track := stringCost(argsAndResult)
	str := func(arg ref.Val, f func(string) ref.Val) ref.Val {
		s, ok := arg.(types.String)
		if !ok {
			return types.MaybeNoSuchOverloadErr(arg)
		}
		return f(string(s))
	}
	var ds libDefs
	for _, f := range upstreamStringFns() {
		f := f
		ds = append(ds, overloadDef{fn: f.name, id: f.name + "_string", args: []*cel.Type{cel.StringType}, result: cel.StringType,
			binding: cel.UnaryBinding(func(arg ref.Val) ref.Val {
				return str(arg, func(s string) ref.Val {
					out, err := f.fn(s)
					if err != nil {
						return types.NewErr("%v", err)
					}
					return types.String(out)
				})
			}),
			estimate: traversal(f.grow), track: track})
	}
	for _, f := range upstreamObjectFns() {
		f := f
		ds = append(ds, overloadDef{fn: f.name, id: f.name + "_dyn", args: []*cel.Type{cel.DynType}, result: f.out,
			binding:  cel.UnaryBinding(func(arg ref.Val) ref.Val { return f.fn(rawOf(arg)) }),
			estimate: objectEstimate, track: track})
	}
	five := []*cel.Type{cel.StringType, cel.StringType, cel.StringType, cel.StringType, cel.StringType}
	return append(ds,
		overloadDef{fn: "cronExpr", id: "cronExpr_string_string_string_string_string", args: five, result: cel.StringType,
			binding: cel.FunctionBinding(func(args ...ref.Val) ref.Val {
				var f [5]string
				for i, a := range args {
					s, ok := a.(types.String)
					if !ok {
						return types.MaybeNoSuchOverloadErr(a)
					}
					f[i] = string(s)
				}
				return types.String(notes.CronExpr(f[0], f[1], f[2], f[3], f[4]))
			}),
			estimate: func(est checker.CostEstimator, n *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
				// the fields, four spaces, and "*" for each blank one
				c := traversal(1)(est, n, args)
				size := checker.SizeEstimate{Min: c.ResultSize.Min, Max: c.ResultSize.Max + 9}
				c.ResultSize = &size
				return c
			},
			track: track},
		overloadDef{fn: "cronValid", id: "cronValid_string", args: []*cel.Type{cel.StringType}, result: cel.BoolType,
			binding: cel.UnaryBinding(func(arg ref.Val) ref.Val {
				return str(arg, func(s string) ref.Val { return types.Bool(notes.CronValid(s)) })
			}),
			estimate: traversal(0), track: track},
		overloadDef{fn: "weekday", id: "weekday", result: cel.BoolType,
			binding:  cel.FunctionBinding(func(...ref.Val) ref.Val { return types.Bool(notes.Weekday(engine.Now())) }),
			estimate: fixedCall(1), track: track},
		overloadDef{fn: "timeInWindow", id: "timeInWindow_string_string", args: []*cel.Type{cel.StringType, cel.StringType}, result: cel.BoolType,
			binding: cel.BinaryBinding(func(a, b ref.Val) ref.Val {
				after, ok1 := a.(types.String)
				before, ok2 := b.(types.String)
				if !ok1 || !ok2 {
					return types.NoSuchOverloadErr()
				}
				return types.Bool(notes.TimeInWindow(engine.Now(), string(after), string(before)))
			}),
			estimate: traversal(0), track: track},
		overloadDef{fn: "nextCron", id: "nextCron_string", args: []*cel.Type{cel.StringType}, result: cel.StringType,
			binding: cel.UnaryBinding(func(arg ref.Val) ref.Val {
				return str(arg, func(s string) ref.Val { return types.String(notes.NextCron(engine.Now(), s)) })
			}),
			estimate: func(est checker.CostEstimator, _ *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
				// parsing the schedule, then an RFC 3339 time
				size := checker.FixedSizeEstimate(25)
				return &checker.CallEstimate{CostEstimate: sizeOf(est, args[0]).MultiplyByCostFactor(common.StringTraversalCostFactor).Add(checker.FixedCostEstimate(10)), ResultSize: &size}
			},
			track: track},
	)
}

// objectEstimate: a function of an object reads a few of its fields (the
// pod functions walk its pod summaries, a few per replica); a string it
// returns is at most a status field's size.
func objectEstimate(checker.CostEstimator, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	size := checker.SizeEstimate{Min: 0, Max: uint64(maxRequestSize)}
	return &checker.CallEstimate{CostEstimate: checker.FixedCostEstimate(10), ResultSize: &size}
}

// traversal estimates a function that reads its arguments once and builds
// a result of at most grow bytes per input byte.
func traversal(grow float64) checker.FunctionEstimator {
	return func(est checker.CostEstimator, _ *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
		cost := checker.FixedCostEstimate(1)
		var in checker.SizeEstimate
		for _, a := range args {
			s := sizeOf(est, a)
			in = in.Add(s)
			cost = cost.Add(s.MultiplyByCostFactor(common.StringTraversalCostFactor))
		}
		out := checker.SizeEstimate{Min: 0, Max: uint64(math.Min(float64(in.Max)*grow, math.MaxUint64/2))}
		if grow == 0 {
			out = checker.FixedSizeEstimate(1)
		}
		return &checker.CallEstimate{CostEstimate: cost, ResultSize: &out}
	}
}

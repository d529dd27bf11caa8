package cel

import (
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

func (upstreamLib) CompileOptions() []cel.EnvOption { return upstreamDefs().CompileOptions() }

func (upstreamLib) ProgramOptions() []cel.ProgramOption { return upstreamDefs().ProgramOptions() }

func upstreamDefs() Overloads {
	track := stringCost(argsAndResult)
	plain := func(f func(string) string) func(string) (string, error) {
		return func(s string) (string, error) { return f(s), nil }
	}
	str := func(arg ref.Val, f func(string) ref.Val) ref.Val {
		s, ok := arg.(types.String)
		if !ok {
			return types.MaybeNoSuchOverloadErr(arg)
		}
		return f(string(s))
	}
	return Overloads{
		StringFunction("camelToKebab", 2, plain(notes.CamelToKebab)),
		StringFunction("domainHost", 1, plain(func(s string) string { return notes.DomainHost(s) })),
		StringFunction("cronMinute", 1, notes.CronMinute),
		StringFunction("cronHour", 1, notes.CronHour),
		StringFunction("cronDom", 1, notes.CronDom),
		StringFunction("cronMonth", 1, notes.CronMonth),
		StringFunction("cronDow", 1, notes.CronDow),
		StringFunction("cronDescribe", 1, plain(notes.CronDescribe)),
		StringFunction("cronNormalize", 2, plain(notes.CronNormalize)),
		ObjectFunction("allReplicasReady", cel.BoolType, func(o any) any { return notes.AllReplicasReady(o) }),
		ObjectFunction("readyReplicas", cel.IntType, func(o any) any { return notes.ReadyReplicas(o) }),
		ObjectFunction("resourceExists", cel.BoolType, func(o any) any { return notes.ResourceExists(o) }),
		ObjectFunction("phase", cel.StringType, func(o any) any { return notes.Phase(o) }),
		ObjectFunction("resourceCPU", cel.StringType, func(o any) any { return notes.ResourceCPU(o) }),
		ObjectFunction("resourceMemory", cel.StringType, func(o any) any { return notes.ResourceMemory(o) }),
		ObjectFunction("cronJobLastScheduleTime", cel.StringType, func(o any) any { return notes.CronJobLastScheduleTime(o) }),
		ObjectFunction("cronJobNextScheduleTime", cel.StringType, func(o any) any { return notes.CronJobNextScheduleTime(o) }),
		ObjectFunction("podCount", cel.IntType, func(o any) any { return notes.PodCount(o) }),
		ObjectFunction("readyPodCount", cel.IntType, func(o any) any { return notes.ReadyPodCount(o) }),
		ObjectFunction("podMaxRestarts", cel.IntType, func(o any) any { return notes.PodMaxRestarts(o) }),
		ObjectFunction("podNames", cel.StringType, func(o any) any { return notes.PodNames(o) }),
		ObjectFunction("podContainerReasons", cel.StringType, func(o any) any { return notes.PodContainerReasons(o) }),
		ObjectFunction("hasCrashingPod", cel.BoolType, func(o any) any { return notes.HasCrashingPod(o) }),
		ObjectFunction("cronFromAny", cel.StringType, func(o any) any { return notes.CronFromAny(o) }),
		StringsFunction("cronExpr", 5, 1, 9, func(f []string) (string, error) { return notes.CronExpr(f[0], f[1], f[2], f[3], f[4]), nil }),
		StringPredicate("cronValid", notes.CronValid),
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
		Overload{Function: "nextCron", ID: "nextCron_string", Args: []*cel.Type{cel.StringType}, Result: cel.StringType,
			Binding: cel.UnaryBinding(func(arg ref.Val) ref.Val {
				return str(arg, func(s string) ref.Val { return types.String(notes.NextCron(engine.Now(), s)) })
			}),
			Estimate: func(est checker.CostEstimator, _ *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
				// parsing the schedule, then an RFC 3339 time
				size := checker.FixedSizeEstimate(25)
				return &checker.CallEstimate{CostEstimate: sizeOf(est, args[0]).MultiplyByCostFactor(common.StringTraversalCostFactor).Add(checker.FixedCostEstimate(10)), ResultSize: &size}
			},
			Track: track},
	}
}

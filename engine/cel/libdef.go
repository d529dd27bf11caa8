package cel

import (
	"math"
	"sort"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
	"k8s.io/apiserver/pkg/cel/environment"
)

// Overload is one overload of an orkestra library function in one row:
// its declaration, its static cost estimate and its runtime cost. The id is
// written once, and no overload can silently take CEL's default cost (a
// test checks every row has both). Libraries outside this package (the
// legacy adapter's counterparts of the original's functions) declare their
// functions with it too.
type Overload struct {
	// Function is the function's name; "" for an overload another library
	// declares, of which only the costs are set here.
	Function string
	ID       string
	Member   bool
	Args     []*cel.Type
	Result   *cel.Type
	Binding  cel.OverloadOpt
	Estimate checker.FunctionEstimator
	Track    interpreter.FunctionTracker
}

// Overloads are the overloads of one library.
type Overloads []Overload

// CompileOptions declares the functions, overloads in row order, and their
// static costs.
func (ds Overloads) CompileOptions() []cel.EnvOption {
	var names []string
	byName := map[string][]cel.FunctionOpt{}
	costs := make([]checker.CostOption, 0, len(ds))
	for _, d := range ds {
		if d.Function != "" {
			if _, ok := byName[d.Function]; !ok {
				names = append(names, d.Function)
			}
			declare := cel.Overload
			if d.Member {
				declare = cel.MemberOverload
			}
			byName[d.Function] = append(byName[d.Function], declare(d.ID, d.Args, d.Result, d.Binding))
		}
		costs = append(costs, checker.OverloadCostEstimate(d.ID, d.Estimate))
	}
	opts := make([]cel.EnvOption, 0, len(names)+1)
	for _, n := range names {
		opts = append(opts, cel.Function(n, byName[n]...))
	}
	return append(opts, cel.CostEstimatorOptions(costs...))
}

// ProgramOptions sets the runtime costs.
func (ds Overloads) ProgramOptions() []cel.ProgramOption {
	trackers := make([]interpreter.CostTrackerOption, 0, len(ds))
	for _, d := range ds {
		trackers = append(trackers, interpreter.OverloadCostTracker(d.ID, d.Track))
	}
	return []cel.ProgramOption{cel.CostTrackerOptions(trackers...)}
}

// stringCost charges one unit plus a tenth per byte of the string pick
// returns (CEL's string traversal factor).
func stringCost(pick func(args []ref.Val, result ref.Val) []ref.Val) interpreter.FunctionTracker {
	return func(args []ref.Val, result ref.Val) *uint64 {
		c := uint64(1)
		for _, v := range pick(args, result) {
			if s, ok := v.(types.String); ok {
				c += uint64(math.Ceil(float64(len(s)) * common.StringTraversalCostFactor))
			}
		}
		return &c
	}
}

func resultOnly(_ []ref.Val, r ref.Val) []ref.Val { return []ref.Val{r} }
func firstArg(a []ref.Val, _ ref.Val) []ref.Val {
	if len(a) == 0 {
		return nil
	}
	return a[:1]
}
func argsAndResult(a []ref.Val, r ref.Val) []ref.Val { return append(append([]ref.Val(nil), a...), r) }

// unitCost is CEL's cost of a call without a tracker, stated.
func unitCost([]ref.Val, ref.Val) *uint64 {
	c := uint64(1)
	return &c
}

// ExtraFunctions are the functions and macros this backend's environment
// has that Kubernetes' base environment at CompatibilityVersion does not
// (the orkestra libraries, the conversion additions, and every library
// passed in Options.Libraries), sorted: the API server's own CEL — CRD
// validation rules, admission policies — does not have them. It is derived
// from the two environments, so a function added to any library is
// included without being listed.
func (b *Backend) ExtraFunctions() []string {
	b.extraOnce.Do(func() {
		b.extra = extraFunctions(b.envSet.NewExpressionsEnv(), environment.MustBaseEnvSet(compatibilityVersion).NewExpressionsEnv())
	})
	return b.extra
}

// extraFunctions are the functions of env that base lacks (not the
// internal ones a macro expands to, whose names hold "@"), and its
// receiver-style macros written with their namespace (qualifiedMacros).
func extraFunctions(env, base *cel.Env) []string {
	set := map[string]bool{}
	for name := range env.Functions() {
		if _, ok := base.Functions()[name]; !ok && !strings.Contains(name, "@") {
			set[name] = true
		}
	}
	for _, name := range newMacros(env, base) {
		set[qualifiedMacros[name]] = true
	}
	out := make([]string, 0, len(set))
	for name := range set {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// newMacros are the names of env's macros that base lacks.
func newMacros(env, base *cel.Env) []string {
	have := map[string]bool{}
	for _, m := range base.Macros() {
		have[m.MacroKey()] = true
	}
	var out []string
	for _, m := range env.Macros() {
		if !have[m.MacroKey()] {
			out = append(out, m.Function())
		}
	}
	return out
}

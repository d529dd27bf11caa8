package cel

import (
	"math"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
)

// overloadDef is one overload of an orkestra library function in one row:
// its declaration, its static cost estimate and its runtime cost. The id is
// written once, and no overload can silently take CEL's default cost (a
// test checks every row has both).
type overloadDef struct {
	// fn is the function's name; "" for an overload another library
	// declares, of which only the costs are set here.
	fn       string
	id       string
	member   bool
	args     []*cel.Type
	result   *cel.Type
	binding  cel.OverloadOpt
	estimate checker.FunctionEstimator
	track    interpreter.FunctionTracker
}

// libDefs are the overloads of one library.
type libDefs []overloadDef

// compileOptions declares the functions, overloads in row order, and their
// static costs.
func (ds libDefs) compileOptions() []cel.EnvOption {
	var names []string
	byName := map[string][]cel.FunctionOpt{}
	costs := make([]checker.CostOption, 0, len(ds))
	for _, d := range ds {
		if d.fn != "" {
			if _, ok := byName[d.fn]; !ok {
				names = append(names, d.fn)
			}
			declare := cel.Overload
			if d.member {
				declare = cel.MemberOverload
			}
			byName[d.fn] = append(byName[d.fn], declare(d.id, d.args, d.result, d.binding))
		}
		costs = append(costs, checker.OverloadCostEstimate(d.id, d.estimate))
	}
	opts := make([]cel.EnvOption, 0, len(names)+1)
	for _, n := range names {
		opts = append(opts, cel.Function(n, byName[n]...))
	}
	return append(opts, cel.CostEstimatorOptions(costs...))
}

// programOptions sets the runtime costs.
func (ds libDefs) programOptions() []cel.ProgramOption {
	trackers := make([]interpreter.CostTrackerOption, 0, len(ds))
	for _, d := range ds {
		trackers = append(trackers, interpreter.OverloadCostTracker(d.id, d.track))
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

// ExtraFunctions are the functions this backend adds to Kubernetes' CEL
// environment (and the extension namespaces it enables): the API server's
// own CEL — CRD validation rules, admission policies — does not have them.
func (b *Backend) ExtraFunctions() []string {
	var out []string
	for _, defs := range []libDefs{orkestraDefs(), upstreamDefs(), conversionDefs()} {
		for _, d := range defs {
			if d.fn != "" && d.fn != "string" {
				out = append(out, d.fn)
			}
		}
	}
	return append(out, "cel.bind", "math", "legacy")
}

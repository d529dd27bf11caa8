package cel

import (
	"math"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// Rows of the common shapes, for libraries that declare their functions
// outside this package (the legacy adapter's CEL counterparts of the
// original engine's functions): the declaration, the binding, the static
// estimate and the runtime cost of each shape written once here. Every row
// charges one unit plus a tenth per byte of the strings it reads and builds.

// StringsFunction is a function of n strings that returns a string: it
// reads its arguments once and builds at most grow bytes per byte read plus
// extra. An error of fn is the call's error.
func StringsFunction(name string, n int, grow float64, extra uint64, fn func(args []string) (string, error)) Overload {
	args := make([]*cel.Type, n)
	for i := range args {
		args[i] = cel.StringType
	}
	return Overload{Function: name, ID: name + strings.Repeat("_string", n), Args: args, Result: cel.StringType,
		Binding: cel.FunctionBinding(func(vals ...ref.Val) ref.Val {
			ss, bad := stringArgs(vals)
			if bad != nil {
				return types.MaybeNoSuchOverloadErr(bad)
			}
			out, err := fn(ss)
			if err != nil {
				return types.NewErr("%v", err)
			}
			return types.String(out)
		}),
		Estimate: func(est checker.CostEstimator, n *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
			c := traversal(grow)(est, n, args)
			size := checker.SizeEstimate{Min: c.ResultSize.Min, Max: c.ResultSize.Max + extra}
			c.ResultSize = &size
			return c
		},
		Track: stringCost(argsAndResult)}
}

// StringFunction is a string → string function (StringsFunction of one).
func StringFunction(name string, grow float64, fn func(string) (string, error)) Overload {
	return StringsFunction(name, 1, grow, 0, func(args []string) (string, error) { return fn(args[0]) })
}

// StringPredicate is a string → bool function that reads its argument once.
func StringPredicate(name string, fn func(string) bool) Overload {
	return Overload{Function: name, ID: name + "_string", Args: []*cel.Type{cel.StringType}, Result: cel.BoolType,
		Binding: cel.UnaryBinding(func(arg ref.Val) ref.Val {
			s, ok := arg.(types.String)
			if !ok {
				return types.MaybeNoSuchOverloadErr(arg)
			}
			return types.Bool(fn(string(s)))
		}),
		Estimate: traversal(0), Track: stringCost(argsAndResult)}
}

// ObjectFunction is a function of a Kubernetes object (dyn, a child of the
// custom resource) returning result: fn reads the object's unstructured
// data as it is, and returns a bool, an integer or a string.
func ObjectFunction(name string, result *cel.Type, fn func(any) any) Overload {
	return Overload{Function: name, ID: name + "_dyn", Args: []*cel.Type{cel.DynType}, Result: result,
		Binding:  cel.UnaryBinding(func(arg ref.Val) ref.Val { return types.DefaultTypeAdapter.NativeToValue(fn(rawOf(arg))) }),
		Estimate: objectEstimate, Track: stringCost(argsAndResult)}
}

func stringArgs(vals []ref.Val) ([]string, ref.Val) {
	out := make([]string, len(vals))
	for i, v := range vals {
		s, ok := v.(types.String)
		if !ok {
			return nil, v
		}
		out[i] = string(s)
	}
	return out, nil
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

// NativeFunction is a function of fixed arguments (strings, ints, doubles,
// bools, or dyn for a Kubernetes object or any value) returning result: fn
// gets the arguments as native Go values (string, int64, float64, bool, the
// unstructured data of an object as it is) and returns a native value of
// the result type, or an error (the call's error). A string, list or map
// result is at most grow bytes per byte of its arguments plus extra, an
// object argument counting as a status field's size, and at least that
// size when it reads an object.
func NativeFunction(name string, args []*cel.Type, result *cel.Type, grow float64, extra uint64, fn func(args []any) (any, error)) Overload {
	id := name
	for _, a := range args {
		id += "_" + a.String()
	}
	return Overload{Function: name, ID: id, Args: args, Result: result,
		Binding: cel.FunctionBinding(func(vals ...ref.Val) ref.Val {
			in := make([]any, len(vals))
			for i, v := range vals {
				in[i] = rawOf(v)
			}
			out, err := fn(in)
			if err != nil {
				return types.NewErr("%v", err)
			}
			return types.DefaultTypeAdapter.NativeToValue(out)
		}),
		Estimate: func(est checker.CostEstimator, _ *checker.AstNode, argNodes []checker.AstNode) *checker.CallEstimate {
			cost := checker.FixedCostEstimate(1)
			var in checker.SizeEstimate
			objects := false
			for i, a := range argNodes {
				if i < len(args) && args[i] == cel.DynType {
					objects = true
					// an object: a few of its fields are read, and what it
					// gives back is at most a status field's size
					cost = cost.Add(checker.FixedCostEstimate(10))
					in = in.Add(checker.SizeEstimate{Min: 0, Max: uint64(maxRequestSize)})
					continue
				}
				s := sizeOf(est, a)
				in = in.Add(s)
				cost = cost.Add(s.MultiplyByCostFactor(common.StringTraversalCostFactor))
			}
			size := checker.FixedSizeEstimate(1)
			if result != cel.BoolType && result != cel.IntType && result != cel.DoubleType {
				size = checker.SizeEstimate{Min: 0, Max: uint64(math.Min(float64(in.Max)*grow+float64(extra), math.MaxUint64/2))}
				if objects {
					// a value read from an object is at most its size
					size.Max = max(size.Max, uint64(maxRequestSize))
				}
			}
			return &checker.CallEstimate{CostEstimate: cost, ResultSize: &size}
		},
		Track: stringCost(argsAndResult)}
}

package cel

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"

	"k8s.io/apimachinery/pkg/api/resource"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/version"
	apiservercel "k8s.io/apiserver/pkg/cel"

	"github.com/orkspace/orkestra-cel/engine"
)

// conversionLibrariesVersion is the compatibility version from which the
// conversion libraries are available.
var conversionLibrariesVersion = version.MajorMinor(1, 37)

// conversionLibraries are the additions that conversions reach for, beyond
// Kubernetes' base environment: let-bindings (cel.bind), math rounding
// (cel-go's ext math: math.round, math.trunc, math.ceil, math.floor,
// math.greatest, math.least, math.abs, math.sign, math.sqrt, …) and the
// conversion part of the orkestra library. They are not part of the API
// server's CEL (CRD validation rules cannot use them).
func conversionLibraries() []cel.EnvOption {
	return []cel.EnvOption{
		ext.Bindings(ext.BindingsVersion(0)),
		ext.Math(ext.MathVersion(2)),
		cel.Lib(conversionLib{}),
		cel.Lib(omitLib{}),
	}
}

// qualifiedMacros are the receiver-style macros of the conversion
// libraries by name, as an expression writes them (cel-go does not say a
// macro's namespace).
var qualifiedMacros = map[string]string{"bind": "cel.bind", "greatest": "math.greatest", "least": "math.least"}

// conversionLib is the conversion part of the `orkestra` CEL library:
//
//	fail(string) T                 an evaluation error with the message
//	json.encode(dyn) string        JSON with sorted keys, as Go's encoding/json writes it
//	json.decode(string) dyn        a JSON document as a CEL value (numbers: int when whole)
//	<quantity>.milliValue() int    the quantity in thousandths, rounded up
//	string(<quantity>) string      the quantity's canonical form ("1500m" → "1500m", "1.5" → "1500m")
type conversionLib struct{}

func (conversionLib) LibraryName() string { return "orkestra.conversion" }

// maxJSONDepth bounds json.decode's nesting, as the API server bounds
// request bodies.
const maxJSONDepth = 64

func (conversionLib) CompileOptions() []cel.EnvOption { return conversionDefs().CompileOptions() }

func (conversionLib) ProgramOptions() []cel.ProgramOption { return conversionDefs().ProgramOptions() }

func conversionDefs() Overloads {
	ds := Overloads{
		{Function: "fail", ID: "fail_string", Args: []*cel.Type{cel.StringType}, Result: cel.TypeParamType("T"),
			Binding: cel.UnaryBinding(func(arg ref.Val) ref.Val {
				s, ok := arg.(types.String)
				if !ok {
					return types.MaybeNoSuchOverloadErr(arg)
				}
				return types.NewErr("%s", string(s))
			}),
			Estimate: fixedCall(1), Track: unitCost},
		{Function: "json.encode", ID: "json_encode_dyn", Args: []*cel.Type{cel.DynType}, Result: cel.StringType,
			Binding: cel.UnaryBinding(jsonEncode),
			Estimate: func(est checker.CostEstimator, _ *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
				// One traversal of the value; the text is a few times its size.
				in := sizeOf(est, args[0])
				size := checker.SizeEstimate{Min: 1, Max: satMul(in.Max, 8)}
				cost := size.MultiplyByCostFactor(common.StringTraversalCostFactor).Add(checker.FixedCostEstimate(1))
				return &checker.CallEstimate{CostEstimate: cost, ResultSize: &size}
			},
			Track: stringCost(resultOnly)},
		{Function: "json.decode", ID: "json_decode_string", Args: []*cel.Type{cel.StringType}, Result: cel.DynType,
			Binding: cel.UnaryBinding(jsonDecode),
			Estimate: func(est checker.CostEstimator, _ *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
				in := sizeOf(est, args[0])
				cost := in.MultiplyByCostFactor(common.StringTraversalCostFactor).Add(checker.FixedCostEstimate(common.MapCreateBaseCost))
				return &checker.CallEstimate{CostEstimate: cost, ResultSize: &in}
			},
			Track: stringCost(firstArg)},
		{Function: "milliValue", ID: "quantity_milli_value", Member: true, Args: []*cel.Type{apiservercel.QuantityType}, Result: cel.IntType,
			Binding: cel.UnaryBinding(quantityMilliValue), Estimate: fixedCall(1), Track: unitCost},
		{Function: "string", ID: "quantity_to_string", Args: []*cel.Type{apiservercel.QuantityType}, Result: cel.StringType,
			Binding: cel.UnaryBinding(quantityString),
			Estimate: func(checker.CostEstimator, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
				// A canonical quantity is a number and a suffix.
				size := checker.SizeEstimate{Min: 1, Max: 64}
				return &checker.CallEstimate{CostEstimate: checker.FixedCostEstimate(1 + 7), ResultSize: &size}
			},
			Track: unitCost},
	}
	// math.greatest and math.least of a list (cel-go's ext.Math declares
	// them) traverse it.
	for _, id := range []string{"math_@max_list_double", "math_@max_list_int", "math_@max_list_uint", "math_@min_list_double", "math_@min_list_int", "math_@min_list_uint"} {
		ds = append(ds, Overload{ID: id, Estimate: listTraversal, Track: listCost})
	}
	return ds
}

// listCost charges one unit plus one per item of the list argument.
func listCost(args []ref.Val, _ ref.Val) *uint64 {
	c := uint64(1)
	if len(args) == 1 {
		if n, ok := args[0].(interface{ Size() ref.Val }); ok {
			if sz, ok := n.Size().(types.Int); ok {
				c += uint64(sz)
			}
		}
	}
	return &c
}

func fixedCall(c uint64) checker.FunctionEstimator {
	return func(checker.CostEstimator, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
		return &checker.CallEstimate{CostEstimate: checker.FixedCostEstimate(c)}
	}
}

// listTraversal estimates a call that walks its list argument once.
func listTraversal(est checker.CostEstimator, _ *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	return &checker.CallEstimate{CostEstimate: sizeOf(est, args[0]).MultiplyByCostFactor(1).Add(checker.FixedCostEstimate(1))}
}

func satMul(a, b uint64) uint64 {
	if a != 0 && b > math.MaxUint64/a {
		return math.MaxUint64
	}
	return a * b
}

// jsonEncode writes a value as JSON: map keys sorted, HTML characters
// escaped (<, >, & as \u003c, \u003e, \u0026), as Go's encoding/json and
// kubectl write annotations.
func jsonEncode(arg ref.Val) ref.Val {
	v, err := ToNative(arg)
	if errors.Is(err, engine.ErrAbsent) {
		return types.NewErr("json.encode: optional.none() has no JSON form; give it a default with .orValue(…)")
	}
	if err != nil {
		return types.NewErr("json.encode: %v", err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return types.NewErr("json.encode: %v", err)
	}
	return types.String(b)
}

// jsonDecode reads a JSON document; numbers become int when whole (as the
// API server decodes objects), else double.
func jsonDecode(arg ref.Val) ref.Val {
	s, ok := arg.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	var v any
	if err := utiljson.Unmarshal([]byte(s), &v); err != nil {
		return types.NewErr("json.decode: not valid JSON: %v", err)
	}
	if depth(v) > maxJSONDepth {
		return types.NewErr("json.decode: nested deeper than %d levels", maxJSONDepth)
	}
	return types.DefaultTypeAdapter.NativeToValue(v)
}

func depth(v any) int {
	d := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			d = max(d, depth(e))
		}
		return d + 1
	case []any:
		for _, e := range x {
			d = max(d, depth(e))
		}
		return d + 1
	}
	return 0
}

func asQuantity(arg ref.Val) (*resource.Quantity, bool) {
	q, ok := arg.Value().(*resource.Quantity)
	return q, ok
}

// quantityMilliValue is the quantity in thousandths, rounded up (as
// resource.Quantity.MilliValue), or an error when it does not fit an int.
func quantityMilliValue(arg ref.Val) ref.Val {
	q, ok := asQuantity(arg)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	d := q.AsDec()
	milli := new(big.Int).Mul(d.UnscaledBig(), big.NewInt(1000))
	scale := int64(d.Scale())
	var r big.Int
	switch {
	case scale > 0:
		div := new(big.Int).Exp(big.NewInt(10), big.NewInt(scale), nil)
		milli.QuoRem(milli, div, &r)
		if r.Sign() > 0 {
			milli.Add(milli, big.NewInt(1))
		}
	case scale < 0:
		milli.Mul(milli, new(big.Int).Exp(big.NewInt(10), big.NewInt(-scale), nil))
	}
	if !milli.IsInt64() {
		return types.NewErr("quantity %s in thousandths does not fit an int (±9.2e18)", q.String())
	}
	return types.Int(milli.Int64())
}

// quantityString is the quantity's canonical form.
func quantityString(arg ref.Val) ref.Val {
	q, ok := asQuantity(arg)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	return types.String(q.String())
}

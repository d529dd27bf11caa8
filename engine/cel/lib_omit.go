package cel

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// omitLib is kro's omit(): a value that leaves its field out of the object
// being built (kro: pkg/cel/library, "Omit"; website docs
// concepts/rgd/04-cel-libraries.md). It takes the type of where it stands,
// as fail() does, so `cond ? {...} : omit()` keeps the other branch's type
// and is checked where it lands. Its value is optional.none(), which every
// value already reads as "leave the field unset" (ToNative: ErrAbsent; a map
// drops the key). It has no meaning in a condition nor inside interpolated
// text: both are load errors (omitMisuse).
type omitLib struct{}

// OmitFunction is the name of the omit function.
const OmitFunction = "omit"

func (omitLib) LibraryName() string { return "orkestra.omit" }

func (omitLib) CompileOptions() []cel.EnvOption { return omitDefs().CompileOptions() }

func (omitLib) ProgramOptions() []cel.ProgramOption { return omitDefs().ProgramOptions() }

func omitDefs() Overloads {
	return Overloads{
		{Function: OmitFunction, ID: "omit", Args: []*cel.Type{}, Result: cel.TypeParamType("T"),
			Binding:  cel.FunctionBinding(func(...ref.Val) ref.Val { return types.OptionalNone }),
			Estimate: fixedCall(1), Track: unitCost},
	}
}

// callsOmit returns the byte offset in src of the first omit() call of the
// checked expression, or -1.
func callsOmit(a *ast.AST, src string) int {
	at := -1
	ast.PreOrderVisit(a.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if at >= 0 || e.Kind() != ast.CallKind {
			return
		}
		if call := e.AsCall(); !call.IsMemberFunction() && call.FunctionName() == OmitFunction {
			at = callNameOffset(src, max(0, exprByteOffset(a, src, e.ID())), OmitFunction)
		}
	}))
	return at
}

package gotmpl

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"text/template/parse"
)

// The math functions (upstream pkg/note/docs/02-math.md).

var mathFamily = family{name: "math", note: "— arguments are numbers, numeric strings or booleans; the result is an integer when whole", functions: []*function{
	{name: "add", fn: fnAdd, translate: trArith, doc: "`add`"},
	{name: "sub", fn: fnSub, pipeFirst: true, translate: trArith, doc: "`sub`"},
	{name: "mul", fn: fnMul, translate: trArith, doc: "`mul`"},
	{name: "div", fn: fnDiv, pipeFirst: true, translate: trDiv, doc: "`div` (÷0 is an error)"},
	{name: "mod", fn: fnMod, pipeFirst: true, translate: trMod, doc: "`mod` (integer remainder)"},
	{name: "min", fn: fnMin, translate: trMinMax, doc: "`min`"},
	{name: "max", fn: fnMax, translate: trMinMax, doc: "`max` (two arguments each)"},
	{name: "abs", fn: fnAbs, translate: trAbs, doc: "`abs`"},
	{name: "clamp", fn: fnClamp, pipeFirst: true, translate: trClamp, doc: "`clamp X LO HI`"},
}}

// toFloat converts the numeric-ish values the original accepted: booleans
// (0/1), integers, floats and numeric strings (strconv.ParseFloat).
func toFloat(v any) (float64, error) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case int:
		return float64(x), nil
	case int32:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case float32:
		return float64(x), nil
	case float64:
		return x, nil
	case string:
		return strconv.ParseFloat(x, 64)
	}
	return 0, fmt.Errorf("cannot convert %T to number", v)
}

// number returns an int64 when f is whole, else f.
func number(f float64) any {
	if f == float64(int64(f)) {
		return int64(f)
	}
	return f
}

func twoNumbers(name string, a, b any) (float64, float64, error) {
	af, ae := toFloat(a)
	bf, be := toFloat(b)
	if ae != nil || be != nil {
		return 0, 0, fmt.Errorf("%s: non-numeric arguments %v, %v", name, printable(a), printable(b))
	}
	return af, bf, nil
}

func printable(v any) any {
	if v == nil {
		return "<missing>"
	}
	return v
}

func fnAdd(a, b any) (any, error) {
	x, y, err := twoNumbers("add", a, b)
	if err != nil {
		return nil, err
	}
	return number(x + y), nil
}

func fnSub(a, b any) (any, error) {
	x, y, err := twoNumbers("sub", a, b)
	if err != nil {
		return nil, err
	}
	return number(x - y), nil
}

func fnMul(a, b any) (any, error) {
	x, y, err := twoNumbers("mul", a, b)
	if err != nil {
		return nil, err
	}
	return number(x * y), nil
}

func fnDiv(a, b any) (any, error) {
	x, y, err := twoNumbers("div", a, b)
	if err != nil {
		return nil, err
	}
	if y == 0 {
		return nil, errors.New("div: division by zero")
	}
	return number(x / y), nil
}

// fnMod is integer remainder: both sides are truncated to integers.
func fnMod(a, b any) (any, error) {
	x, y, err := twoNumbers("mod", a, b)
	if err != nil {
		return nil, err
	}
	if int64(y) == 0 {
		return nil, errors.New("mod: division by zero")
	}
	return int64(x) % int64(y), nil
}

func fnMin(a, b any) (any, error) {
	x, y, err := twoNumbers("min", a, b)
	if err != nil {
		return nil, err
	}
	if x < y {
		return number(x), nil
	}
	return number(y), nil
}

func fnMax(a, b any) (any, error) {
	x, y, err := twoNumbers("max", a, b)
	if err != nil {
		return nil, err
	}
	if x > y {
		return number(x), nil
	}
	return number(y), nil
}

func fnAbs(a any) (any, error) {
	x, err := toFloat(a)
	if err != nil {
		return nil, fmt.Errorf("abs: non-numeric argument %v", printable(a))
	}
	if x < 0 {
		x = -x
	}
	return number(x), nil
}

func fnClamp(v, lo, hi any) (any, error) {
	x, e1 := toFloat(v)
	l, e2 := toFloat(lo)
	h, e3 := toFloat(hi)
	if e1 != nil || e2 != nil || e3 != nil {
		return nil, fmt.Errorf("clamp: non-numeric arguments %v, %v, %v", printable(v), printable(lo), printable(hi))
	}
	switch {
	case x < l:
		return number(l), nil
	case x > h:
		return number(h), nil
	}
	return number(x), nil
}

// intBound is the largest magnitude a numeric value may have: a literal's
// own, a field's schema bounds, else +Inf.
func intBound(v val) float64 {
	switch x := v.lit.(type) {
	case int64:
		return math.Abs(float64(x))
	case float64:
		return math.Abs(x)
	}
	if v.at != nil && v.at.s != nil && v.at.s.ValueValidation != nil {
		vv := v.at.s.ValueValidation
		if vv.Minimum != nil && vv.Maximum != nil {
			return math.Max(math.Abs(*vv.Minimum), math.Abs(*vv.Maximum))
		}
	}
	return math.Inf(1)
}

func isNonZeroInt(l any) bool {
	i, ok := l.(int64)
	return ok && i != 0
}

// number checks an arithmetic argument: integers and numbers (the legacy
// engine also took numeric strings and booleans, which have no exact form).
func (t *translator) number(v val, fn string, n parse.Node) val {
	switch v.kind {
	case vInt, vDouble, vNumber:
		return t.strict(v)
	}
	t.failf(n, "%s of %s: the legacy engine parsed it as a number, which has no exact CEL form", fn, v.kind)
	return val{}
}

// dbl is a numeric value as a CEL double.
func dbl(v val, min int) string {
	if v.kind == vInt {
		if i, ok := v.lit.(int64); ok {
			return paren(celDouble(float64(i)), precPrimary, min)
		}
		return "double(" + v.expr + ")"
	}
	return p(v, min)
}

func intOf(v val, min int) string {
	if v.kind == vInt {
		return p(v, min)
	}
	return "int(" + v.expr + ")"
}

// numberVal is the legacy number(): a float64 result that prints as an
// integer when whole.
func numberVal(d string, prec int) val {
	e := paren(d, prec, precRel+1)
	return val{kind: vNumber, expr: d, prec: prec, failsOther: true, // int() of a huge result
		render: e + " == double(int(" + d + ")) ? string(int(" + d + ")) : string(" + d + ")"}
}

// ── translations ────────────────────────────────────────────────────────────

// trArith is add, sub and mul.
func trArith(t *translator, x *call) val {
	t.arity(x, 2, 2)
	a, b := t.number(x.args[0], x.name(), x.node(0)), t.number(x.args[1], x.name(), x.node(1))
	op := map[string]string{"add": " + ", "sub": " - ", "mul": " * "}[x.name()]
	prec := precAdd
	if x.name() == "mul" {
		prec = precMul
	}
	if x.name() == "mul" && a.lit == nil && b.lit == nil && intBound(a)*intBound(b) > 1<<53 {
		t.failf(x.id, "a product of two fields the schema does not bound (maximum/minimum) can pass 2^53, where the legacy engine computed in float64 and CEL's int64 differs or overflows")
	}
	if a.kind == vInt && b.kind == vInt {
		return val{kind: vInt, expr: p(a, prec) + op + p(b, prec+1), prec: prec}
	}
	return numberVal(dbl(a, prec)+op+dbl(b, prec+1), prec)
}

func trDiv(t *translator, x *call) val {
	t.arity(x, 2, 2)
	a, b := t.number(x.args[0], x.name(), x.node(0)), t.number(x.args[1], x.name(), x.node(1))
	if a.kind == vInt && b.kind == vInt {
		// float division, printed as an integer when whole; % fails on
		// a zero divisor as the legacy div did
		pa, pb := p(a, precMul), p(b, precMul+1)
		whole := pa + " % " + pb + " == 0"
		return val{kind: vNumber, prec: precTernary, failsOther: !isNonZeroInt(b.lit),
			expr:     whole + " ? double(" + pa + " / " + pb + ") : double(" + a.expr + ") / double(" + b.expr + ")",
			render:   whole + " ? string(" + pa + " / " + pb + ") : string(double(" + a.expr + ") / double(" + b.expr + "))",
			nonEmpty: false}
	}
	if f, ok := b.lit.(float64); ok && f != 0 || isNonZeroInt(b.lit) {
		return numberVal(dbl(a, precMul)+" / "+dbl(b, precMul+1), precMul)
	}
	t.failf(x.id, "a floating-point division by a value that may be 0 gives an infinity in CEL, an error in the legacy engine")
	return val{}
}

func trMod(t *translator, x *call) val {
	t.arity(x, 2, 2)
	a, b := t.number(x.args[0], x.name(), x.node(0)), t.number(x.args[1], x.name(), x.node(1))
	out := val{kind: vInt, expr: intOf(a, precMul) + " % " + intOf(b, precMul+1), prec: precMul}
	out.failsOther = !isNonZeroInt(b.lit) || a.kind != vInt // a zero divisor, an int() out of range
	return out
}

// trMinMax is min and max.
func trMinMax(t *translator, x *call) val {
	t.arity(x, 2, 2)
	a, b := t.number(x.args[0], x.name(), x.node(0)), t.number(x.args[1], x.name(), x.node(1))
	fn := "." + x.name() + "()"
	if a.kind == vInt && b.kind == vInt {
		return val{kind: vInt, expr: "[" + a.expr + ", " + b.expr + "]" + fn, prec: precPrimary}
	}
	return numberVal("["+dbl(a, 0)+", "+dbl(b, 0)+"]"+fn, precPrimary)
}

func trAbs(t *translator, x *call) val {
	t.arity(x, 1, 1)
	a := t.number(x.args[0], x.name(), x.node(0))
	if a.kind == vInt {
		return val{kind: vInt, expr: p(a, precRel+1) + " < 0 ? -" + p(a, precUnary) + " : " + p(a, precTernary), prec: precTernary}
	}
	d := dbl(a, precRel+1)
	return numberVal(d+" < 0.0 ? -"+dbl(a, precUnary)+" : "+dbl(a, precTernary), precTernary)
}

func trClamp(t *translator, x *call) val {
	t.arity(x, 3, 3)
	v, lo, hi := t.number(x.args[0], x.name(), x.node(0)), t.number(x.args[1], x.name(), x.node(1)), t.number(x.args[2], x.name(), x.node(2))
	if v.kind != vInt || lo.kind != vInt || hi.kind != vInt {
		t.failf(x.id, "clamp over numbers that are not all integers has no exact CEL form")
	}
	if !covered(hi, union(v, lo)) {
		t.failf(x.node(2), "the upper bound can fail where the value and the lower bound do not")
	}
	px := p(v, precRel+1)
	return val{kind: vInt, expr: px + " < " + p(lo, precRel+1) + " ? " + p(lo, precOr) + " : (" + px + " > " + p(hi, precRel+1) + " ? " + p(hi, precOr) + " : " + p(v, precTernary) + ")", prec: precTernary}
}

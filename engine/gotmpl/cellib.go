package gotmpl

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"text/template"
	"time"

	"github.com/google/cel-go/cel"
	celchecker "github.com/google/cel-go/checker"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/robfig/cron/v3"
	apiservercel "k8s.io/apiserver/pkg/cel"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/notes"
)

// schedules caches parsed cron: condition schedules (literals of the
// katalog, so the cache is bounded by the katalog).
var schedules sync.Map

var scheduleCount atomic.Int64

// cachedSchedule parses expr once; past maxSchedules distinct schedules
// (an expression computing them from data) it parses without caching.
func cachedSchedule(expr string) (cron.Schedule, error) {
	if s, ok := schedules.Load(expr); ok {
		return s.(cron.Schedule), nil
	}
	s, err := notes.ParseSchedule(expr)
	if err != nil {
		return nil, err
	}
	if scheduleCount.Add(1) <= maxSchedules {
		schedules.Store(expr, s)
	}
	return s, nil
}

const maxSchedules = 1024

// CELLibrary declares the CEL functions structured conditions translate to:
//
//	legacy.str(dyn, string) string   the %v of the field at a dot path; "" when a
//	                                 step is missing or not a map, or the value
//	                                 is null (the original NavigateDotPath)
//	legacy.gt(string, double) bool   the field string parsed with
//	legacy.lt, legacy.gte, legacy.lte  fmt.Sscanf("%f") ("" and unparsable: 0)
//	                                 compared with the bound; NaN is false
//	legacy.between(string, double, double) bool     lo <= x <= hi, false when
//	legacy.notBetween(string, double, double) bool  x < lo || x > hi; both false
//	                                 when the string does not parse ("" is 0)
//
//	legacy.typeOf(dyn, string) string  typeOf of the raw field at a dot path
//	                                 ("null" when missing): the type operators
//	legacy.timeWindow(string, string) bool  a `time:` condition: after <= now
//	                                 <= before (UTC, "HH:MM", either "")
//	legacy.dayOfWeek() string         today's name (UTC): `dayOfWeek: {in: …}`
//	legacy.cronWindow(string, int) bool  a `cron:` condition: the schedule
//	                                 fired within the last n seconds (0: one
//	                                 period of the schedule)
//
// and the helpers `orkestra migrate` translates untyped fields to, each
// running the legacy engine's own code on whatever the field holds:
//
//	legacy.print(dyn) string         its printing (%v; null as "")
//	legacy.printOpt(optional) string the same, "" when none
//	legacy.value(dyn, string) optional  printed, trimmed and parsed for a
//	                                 target ('integer', 'string', …, '+null');
//	                                 none where the legacy engine left it unset
//	legacy.field(dyn, string) optional  a field of an untyped value; fails
//	                                 on null or a non-map, as the legacy read
//	legacy.typed(dyn, string) dyn    the value passed to a string or bool
//	                                 parameter; fails on any other type
//	legacy.truth(dyn) bool           text/template's truth
//
// It also declares the CEL counterparts of the original engine's functions
// that the library's rows own (camelToKebab, cronMinute, podCount, …: each
// row's celDecl, with its costs), so that a CEL expression can call them and
// a translation can use them.
//
// The lead passes it to the CEL backend's environment.
func CELLibrary() cel.EnvOption { return cel.Lib(legacyLib{}) }

type legacyLib struct{}

// LibraryName makes the library a singleton: adding it twice is harmless.
func (legacyLib) LibraryName() string { return "orkestra.legacy" }

func (legacyLib) CompileOptions() []cel.EnvOption {
	opts := []cel.EnvOption{
		cel.Function("legacy.str",
			cel.Overload("legacy_str_dyn_string", []*cel.Type{cel.DynType, cel.StringType}, cel.StringType,
				cel.BinaryBinding(celStr))),
	}
	opts = append(opts, celCounterparts().CompileOptions()...)
	opts = append(opts,
		cel.Function("legacy.print",
			cel.Overload("legacy_print_dyn", []*cel.Type{cel.DynType}, cel.StringType,
				cel.UnaryBinding(func(v ref.Val) ref.Val { return types.String(printLegacy(celNative(v))) }))),
		cel.Function("legacy.printOpt",
			cel.Overload("legacy_printOpt_optional", []*cel.Type{cel.OptionalType(cel.DynType)}, cel.StringType,
				cel.UnaryBinding(func(v ref.Val) ref.Val {
					o, ok := v.(*types.Optional)
					if !ok {
						return types.MaybeNoSuchOverloadErr(v)
					}
					if !o.HasValue() {
						return types.String("")
					}
					return types.String(printLegacy(celNative(o.GetValue())))
				}))),
		cel.CostEstimatorOptions(
			// printing reads the value once; Go syntax is at most twice
			// its JSON size, which the request size bounds
			celchecker.OverloadCostEstimate("legacy_print_dyn", printEstimate),
			celchecker.OverloadCostEstimate("legacy_printOpt_optional", printEstimate)),
		cel.Function("legacy.field",
			cel.Overload("legacy_field_dyn_string", []*cel.Type{cel.DynType, cel.StringType}, cel.OptionalType(cel.DynType),
				cel.BinaryBinding(celField))),
		cel.Function("legacy.typed",
			cel.Overload("legacy_typed_dyn_string", []*cel.Type{cel.DynType, cel.StringType}, cel.DynType,
				cel.BinaryBinding(celTyped))),
		cel.Function("legacy.truth",
			cel.Overload("legacy_truth_dyn", []*cel.Type{cel.DynType}, cel.BoolType,
				cel.UnaryBinding(func(v ref.Val) ref.Val {
					ok, _ := template.IsTrue(celNative(v))
					return types.Bool(ok)
				}))),
		cel.Function("legacy.value",
			cel.Overload("legacy_value_dyn_string", []*cel.Type{cel.DynType, cel.StringType}, cel.OptionalType(cel.DynType),
				cel.BinaryBinding(celValue))),
		cel.Function("legacy.typeOf",
			cel.Overload("legacy_typeOf_dyn_string", []*cel.Type{cel.DynType, cel.StringType}, cel.StringType,
				cel.BinaryBinding(func(obj, path ref.Val) ref.Val {
					p, ok := path.(types.String)
					if !ok {
						return types.MaybeNoSuchOverloadErr(path)
					}
					return types.String(notes.TypeOf(celLookup(obj, strings.Split(string(p), "."))))
				}))),
		cel.Function("legacy.timeWindow",
			cel.Overload("legacy_timeWindow_string_string", []*cel.Type{cel.StringType, cel.StringType}, cel.BoolType,
				cel.BinaryBinding(func(a, b ref.Val) ref.Val {
					after, ok1 := a.(types.String)
					before, ok2 := b.(types.String)
					if !ok1 || !ok2 {
						return types.NoSuchOverloadErr()
					}
					return types.Bool(notes.InTimeWindow(engine.Now(), string(after), string(before)))
				}))),
		cel.Function("legacy.dayOfWeek",
			cel.Overload("legacy_dayOfWeek", nil, cel.StringType,
				cel.FunctionBinding(func(...ref.Val) ref.Val { return types.String(legacyDayOfWeek()) }))),
		cel.Function("legacy.cronWindow",
			cel.Overload("legacy_cronWindow_string_int", []*cel.Type{cel.StringType, cel.IntType}, cel.BoolType,
				cel.BinaryBinding(func(expr, secs ref.Val) ref.Val {
					e, ok1 := expr.(types.String)
					n, ok2 := secs.(types.Int)
					if !ok1 || !ok2 {
						return types.NoSuchOverloadErr()
					}
					sched, err := cachedSchedule(string(e))
					if err != nil {
						return types.NewErr("cron %q: %v", string(e), err)
					}
					return types.Bool(notes.CronWindowOpen(engine.Now(), sched, time.Duration(n)*time.Second))
				}))),
	)
	for _, op := range []string{"gt", "lt", "gte", "lte"} {
		op := op
		opts = append(opts, cel.Function("legacy."+op,
			cel.Overload("legacy_"+op+"_string_double", []*cel.Type{cel.StringType, cel.DoubleType}, cel.BoolType,
				cel.BinaryBinding(func(s, bound ref.Val) ref.Val {
					str, ok1 := s.(types.String)
					f, ok2 := bound.(types.Double)
					if !ok1 || !ok2 {
						return types.NoSuchOverloadErr()
					}
					return types.Bool(compareLegacy(op, string(str), float64(f)))
				}))))
	}
	for _, op := range []string{"between", "notBetween"} {
		inside := op == "between"
		opts = append(opts, cel.Function("legacy."+op,
			cel.Overload("legacy_"+op+"_string_double_double", []*cel.Type{cel.StringType, cel.DoubleType, cel.DoubleType}, cel.BoolType,
				cel.FunctionBinding(func(args ...ref.Val) ref.Val {
					str, ok1 := args[0].(types.String)
					lo, ok2 := args[1].(types.Double)
					hi, ok3 := args[2].(types.Double)
					if !ok1 || !ok2 || !ok3 {
						return types.NoSuchOverloadErr()
					}
					return types.Bool(betweenLegacy(inside, string(str), float64(lo), float64(hi)))
				}))))
	}
	return opts
}

// ProgramOptions sets the runtime costs of the counterparts the library's
// rows declare.
func (legacyLib) ProgramOptions() []cel.ProgramOption { return celCounterparts().ProgramOptions() }

func celStr(obj, path ref.Val) ref.Val {
	p, ok := path.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(path)
	}
	return types.String(formatField(celLookup(obj, strings.Split(string(p), "."))))
}

// celLookup walks a CEL value by keys. The object is normally backed by the
// unstructured map itself; other CEL maps are walked with Find.
func celLookup(obj ref.Val, segs []string) any {
	if m, ok := obj.Value().(map[string]any); ok {
		v, _ := lookup(m, segs)
		return v
	}
	cur := obj
	for _, seg := range segs {
		m, ok := cur.(traits.Mapper)
		if !ok {
			return nil
		}
		v, found := m.Find(types.String(seg))
		if !found || v == nil || types.IsUnknownOrError(v) {
			return nil
		}
		cur = v
	}
	return celNative(cur)
}

// printLegacy is a value as a legacy template action prints it (Go's %v,
// text/template's printValue), nil as "" (its "<no value>" is removed).
func printLegacy(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// printEstimate bounds legacy.print: one pass over an untyped value (the
// request size bounds it) and at most twice its size printed.
func printEstimate(est celchecker.CostEstimator, _ *celchecker.AstNode, args []celchecker.AstNode) *celchecker.CallEstimate {
	in := celchecker.SizeEstimate{Min: 0, Max: uint64(apiservercel.DefaultMaxRequestSizeBytes)}
	if s := est.EstimateSize(args[0]); s != nil && s.Max < in.Max {
		in = *s
	}
	out := celchecker.SizeEstimate{Min: 0, Max: 2 * in.Max}
	return &celchecker.CallEstimate{CostEstimate: in.MultiplyByCostFactor(common.StringTraversalCostFactor).Add(celchecker.FixedCostEstimate(1)), ResultSize: &out}
}

// celValue is legacy.value(v, mode): an untyped field read by a plain
// legacy reference, printed, trimmed and parsed for the target as the
// legacy engine does (Template.Eval); none where it left the target unset
// (a null field, an empty rendering into a typed one).
func celValue(v, mode ref.Val) ref.Val {
	name, ok := mode.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(mode)
	}
	c, ok := coercionNamed(string(name))
	if !ok {
		return types.NewErr("legacy.value: unknown coercion %q", string(name))
	}
	x := celNative(v)
	if x == nil {
		return types.OptionalNone
	}
	out, err := c.coerce(finish(printLegacy(x)))
	if errors.Is(err, engine.ErrAbsent) {
		return types.OptionalNone
	}
	if err != nil {
		return types.NewErr("%v", err)
	}
	return types.OptionalOf(types.DefaultTypeAdapter.NativeToValue(out))
}

// celField is legacy.field(v, key): a field of an untyped value as a
// legacy template reads it — none when the map lacks it, a failure when
// the value is null or not a map ("nil pointer evaluating", "can't
// evaluate field").
func celField(v, key ref.Val) ref.Val {
	k, ok := key.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(key)
	}
	if _, null := v.(types.Null); null {
		return types.NewErr("nil pointer evaluating interface {}.%s", string(k))
	}
	m, ok := v.(traits.Mapper)
	if !ok {
		return types.NewErr("can't evaluate field %s in type %s", string(k), v.Type().TypeName())
	}
	x, found := m.Find(k)
	if !found {
		return types.OptionalNone
	}
	return types.OptionalOf(x)
}

// celTyped is legacy.typed(v, type): an untyped value text/template passes
// to a parameter of that Go type (string, bool) — itself when it has that
// type, else the failure text/template reports.
func celTyped(v, typ ref.Val) ref.Val {
	name, ok := typ.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(typ)
	}
	switch x := celNative(v); {
	case x == nil:
		return types.NewErr("invalid value; expected %s", string(name))
	case name == "string":
		if _, ok := x.(string); ok {
			return v
		}
	case name == "bool":
		if _, ok := x.(bool); ok {
			return v
		}
	default:
		return types.NewErr("legacy.typed: unknown type %q", string(name))
	}
	return types.NewErr("wrong type for value; expected %s; got %T", string(name), celNative(v))
}

func celNative(v ref.Val) any {
	switch x := v.(type) {
	case types.Null:
		return nil
	case types.String:
		return string(x)
	case types.Int:
		return int64(x)
	case types.Uint:
		return uint64(x)
	case types.Double:
		return float64(x)
	case types.Bool:
		return bool(x)
	}
	return v.Value()
}

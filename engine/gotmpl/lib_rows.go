package gotmpl

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/google/cel-go/cel"

	celengine "github.com/orkspace/orkestra-cel/engine/cel"
)

// noteFunction is the row of a function of the original's library
// (engine/notes) with fixed arguments — strings, integers, numbers or a
// Kubernetes object (vMap) — whose CEL counterpart has the same name and
// implementation: fn has the original's Go signature (string, int, int64,
// float64 or any parameters; a string, integer, float or bool result,
// possibly with an error), so text/template converts and rejects its
// arguments as the original did. A string result is at most grow bytes per
// byte of its arguments, plus 64.
func noteFunction(name string, fn any, args []vkind, grow float64, doc string) *function {
	ft := reflect.TypeOf(fn)
	if ft.NumIn() != len(args) {
		panic("gotmpl: " + name + ": the row's arguments do not match its function")
	}
	result := kindOfGo(ft.Out(0))
	fails := ft.NumOut() == 2
	celArgs := make([]*cel.Type, len(args))
	for i, k := range args {
		celArgs[i] = celTypeOf(k)
	}
	zero := celLiteralOf(celNativeOf(reflect.Zero(ft.Out(0)).Interface()))
	impl := nativeImpl(name, fn)
	return &function{name: name, fn: fn, doc: doc,
		celDecl: []celengine.Overload{celengine.NativeFunction(name, celArgs, celTypeOf(result), grow, 64, impl)},
		translate: func(t *translator, x *call) val {
			t.arity(x, len(args), len(args))
			parts := make([]string, len(args))
			var guard string
			for i, k := range args {
				a := x.args[i]
				if k != vMap {
					parts[i] = t.want(a, k, name, x.node(i)).expr
					continue
				}
				if a.kind != vMap {
					t.failf(x.node(i), "%s takes a Kubernetes object, %s", name, kindName(a))
				}
				parts[i] = a.expr
				if a.opt != nil {
					// a missing object reads as nil, as in the legacy engine
					guard = p(*a.opt, precPrimary)
					parts[i] = guard + ".value()"
				}
			}
			out := val{kind: result, expr: name + "(" + strings.Join(parts, ", ") + ")", prec: precPrimary, failsOther: fails}
			if guard != "" {
				for i, k := range args {
					if a := x.args[i]; k != vMap && (len(a.fails) > 0 || a.failsOther || a.opt != nil) {
						// the legacy engine evaluated it even without the object
						t.failf(x.node(i), "%s: this argument can fail where the object is missing, which has no exact CEL form here", name)
					}
				}
				out.expr, out.prec = guard+".hasValue() ? "+out.expr+" : "+zero, precTernary
			}
			return out
		}}
}

// kindOfGo is the translated kind of a Go result type.
func kindOfGo(t reflect.Type) vkind {
	switch t.Kind() {
	case reflect.String:
		return vString
	case reflect.Bool:
		return vBool
	case reflect.Int, reflect.Int64:
		return vInt
	case reflect.Float64:
		return vDouble
	}
	panic("gotmpl: no CEL kind for a " + t.String() + " result")
}

func celTypeOf(k vkind) *cel.Type {
	switch k {
	case vString:
		return cel.StringType
	case vInt:
		return cel.IntType
	case vDouble:
		return cel.DoubleType
	case vBool:
		return cel.BoolType
	}
	return cel.DynType
}

// Argument lists of the common shapes.
var (
	argString   = []vkind{vString}
	argStrings2 = []vkind{vString, vString}
	argObjKey   = []vkind{vMap, vString}
)

// nativeImpl calls fn, a function with the original's Go signature, with
// arguments as a CEL counterpart gets them (strings, int64, float64, bools,
// unstructured data; nil for null): integers are converted to its int
// parameters, and an int result is given back as int64.
func nativeImpl(name string, fn any) func([]any) (any, error) {
	ft := reflect.TypeOf(fn)
	fails := ft.NumOut() == 2
	return func(in []any) (any, error) {
		vals := make([]reflect.Value, len(in))
		for i, a := range in {
			pt := ft.In(i)
			switch {
			case a == nil:
				vals[i] = reflect.Zero(pt)
			case pt.Kind() == reflect.Interface:
				vals[i] = reflect.ValueOf(a)
			default:
				v := reflect.ValueOf(a)
				if !v.CanConvert(pt) || v.Kind() == reflect.String && pt.Kind() != reflect.String {
					return nil, fmt.Errorf("%s: argument %d is a %T, not a %s", name, i+1, a, pt)
				}
				vals[i] = v.Convert(pt)
			}
		}
		out := reflect.ValueOf(fn).Call(vals)
		if fails && !out[1].IsNil() {
			return nil, out[1].Interface().(error)
		}
		return celNativeOf(out[0].Interface()), nil
	}
}

// anyFunction is the CEL counterpart of a legacy function with that Go
// signature, over the same implementation, taking args and returning result
// (a string, list or map result at most as large as its arguments plus 64
// bytes).
func anyFunction(name string, fn any, result *cel.Type, args ...*cel.Type) []celengine.Overload {
	return []celengine.Overload{celengine.NativeFunction(name, args, result, 1, 64, nativeImpl(name, fn))}
}

// valueFirst marks a row whose first argument is the value it works on: the
// pipe form would put the piped value last (see function.pipeFirst).
func valueFirst(f *function) *function {
	f.pipeFirst = true
	return f
}

// spaceless marks a row whose string result never holds white space (a
// hash, a slug, a version, a quantity), so a translation need not trim it.
func spaceless(f *function) *function {
	tr := f.translate
	f.translate = func(t *translator, x *call) val {
		out := tr(t, x)
		out.noSpace, out.noEdgeSpace = true, true
		return out
	}
	return f
}

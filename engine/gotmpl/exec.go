package gotmpl

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"sync"
	"text/template"
	"text/template/parse"

	"github.com/orkspace/orkestra-cel/engine"
)

// Every legacy evaluation runs under a budget, the contract CEL expressions
// have: a runtime cost limit (the same --max-runtime-cost) and a limit on
// the bytes a template writes. Cost counts steps — each iteration of a range
// costs its body's size in nodes — plus one unit per ten bytes of every
// string or list a function builds (CEL's string traversal factor), so a
// loop that builds big strings stops as early as one that runs long.

// MaxOutputBytes bounds what one legacy template writes.
const MaxOutputBytes = 1 << 20

// stepFunc is the function the evaluator inserts at the start of every range
// body: `{{ __step N }}` charges the body's size for each iteration. It
// cannot clash with a katalog's function: names starting with "__" are not
// in the library and are rejected by the checker.
const stepFunc = "__step"

// budgetError is an evaluation stopped by its budget.
type budgetError struct{ msg string }

func (e *budgetError) Error() string { return e.msg }

// execState is the budget of one evaluation.
type execState struct {
	cost, limit uint64
	out         limitedBuffer
	// data is what the evaluation runs on (notes render on it too).
	data map[string]any
}

func (st *execState) charge(units uint64) error {
	st.cost += units
	if st.cost > st.limit {
		return &budgetError{fmt.Sprintf("the template exceeded the runtime cost limit of %d per evaluation (a range runs too often or builds too much text); bound the data it loops over in the schema (maxItems, maxLength) or simplify the template", st.limit)}
	}
	return nil
}

// chargeValue charges what a function built: a string by its length, a list
// by its items.
func (st *execState) chargeValue(v reflect.Value) error {
	units := uint64(1)
	switch v.Kind() {
	case reflect.String:
		units += uint64(math.Ceil(float64(v.Len()) / 10))
	case reflect.Slice, reflect.Map:
		units += uint64(v.Len())
	case reflect.Interface:
		if !v.IsNil() {
			return st.chargeValue(v.Elem())
		}
	}
	return st.charge(units)
}

// limitedBuffer fails a write past MaxOutputBytes.
type limitedBuffer struct{ bytes.Buffer }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > MaxOutputBytes {
		return 0, &budgetError{fmt.Sprintf("the template wrote more than %d bytes; bound the data it loops over in the schema (maxItems, maxLength) or simplify the template", MaxOutputBytes)}
	}
	return b.Buffer.Write(p)
}

// instance is a copy of a compiled template whose functions charge one
// execState. Instances are pooled; one runs one evaluation at a time.
type instance struct {
	tmpl *template.Template
	st   *execState
}

// executor runs one compiled template.
type executor struct {
	base  *template.Template // the instrumented tree with the library
	used  []string           // functions the template calls
	notes map[string]*Template
	// sentinels are the sentinels it reads by name.
	sentinels map[string]bool
	limit     uint64
	pool      sync.Pool
}

func newExecutor(tree *parse.Tree, used []string, limit uint64, notes map[string]*Template, sentinels map[string]bool) (*executor, error) {
	exec := tree.Copy()
	instrument(exec.Root)
	// Only the functions the template calls: each pooled instance clones
	// the template with its functions, and the library has hundreds.
	fm := template.FuncMap{stepFunc: func(int) string { return "" }}
	for _, name := range used {
		if fn, ok := funcMap[name]; ok {
			fm[name] = fn
		}
	}
	base, err := template.New(treeName).Option("missingkey=zero").Funcs(fm).AddParseTree(treeName, exec)
	if err != nil {
		return nil, err
	}
	x := &executor{base: base, used: used, limit: limit, notes: notes, sentinels: sentinels}
	x.pool.New = func() any { return x.newInstance() }
	return x, nil
}

func (x *executor) newInstance() *instance {
	st := &execState{}
	t := template.Must(x.base.Clone())
	fm := template.FuncMap{stepFunc: func(n int) (string, error) { return "", st.charge(uint64(n)) }}
	for _, name := range x.used {
		if f := funcs[name]; f != nil && f.fn != nil {
			fm[name] = charged(f.fn, st)
		}
	}
	for name, n := range x.notes {
		fm[name] = noteFunc(n, st)
	}
	for name := range x.sentinels {
		fm[name] = sentinelFunc(name, st)
	}
	t.Funcs(fm)
	return &instance{tmpl: t, st: st}
}

// run executes the template on data and returns the raw output.
func (x *executor) run(data map[string]any) (string, error) {
	in := x.pool.Get().(*instance)
	defer x.pool.Put(in)
	st := in.st
	st.cost, st.limit, st.data = 0, x.limit, data
	st.out.Reset()
	err := in.tmpl.Execute(&st.out, data)
	st.data = nil // the pool must not keep the object
	out := st.out.String()
	if st.out.Cap() > 64<<10 {
		st.out = limitedBuffer{}
	}
	if err != nil {
		var be *budgetError
		if errors.As(err, &be) {
			return "", be
		}
		return "", execError(err)
	}
	return out, nil
}

// charged wraps a library function so that every call is charged to st.
func charged(fn any, st *execState) any {
	fv := reflect.ValueOf(fn)
	ft := fv.Type()
	return reflect.MakeFunc(ft, func(args []reflect.Value) []reflect.Value {
		var out []reflect.Value
		if ft.IsVariadic() {
			out = fv.CallSlice(args)
		} else {
			out = fv.Call(args)
		}
		if len(out) == 2 && !out[1].IsNil() {
			return out
		}
		if err := st.chargeValue(out[0]); err != nil {
			if len(out) == 2 {
				out[1] = reflect.ValueOf(&err).Elem()
				return out
			}
			panic(err) // text/template turns a function's panic into its error
		}
		return out
	}).Interface()
}

// instrument inserts `{{ __step N }}` at the start of every range body, N
// the body's size, so each iteration is charged.
func instrument(n parse.Node) {
	walkNodes(n, func(n parse.Node) bool {
		r, ok := n.(*parse.RangeNode)
		if !ok {
			return true
		}
		if r.List == nil {
			r.List = &parse.ListNode{NodeType: parse.NodeList, Pos: r.Pos}
		}
		step := stepAction(1 + size(r.List))
		step.Pos = r.Pos
		r.List.Nodes = append([]parse.Node{step}, r.List.Nodes...)
		return true
	})
}

// stepAction is a parsed `{{ __step n }}`.
func stepAction(n int) *parse.ActionNode {
	t := parse.New("step")
	t.Mode = parse.SkipFuncCheck
	if _, err := t.Parse("{{"+stepFunc+" "+strconv.Itoa(n)+"}}", "{{", "}}", map[string]*parse.Tree{}); err != nil {
		panic(err) // a constant template
	}
	return t.Root.Nodes[0].(*parse.ActionNode)
}

// size counts the nodes of a tree, nested range bodies once (they charge
// their own iterations).
func size(n parse.Node) int {
	c := 0
	walkNodes(n, func(m parse.Node) bool {
		c++
		if r, ok := m.(*parse.RangeNode); ok && m != n {
			walkNodes(r.Pipe, func(parse.Node) bool { c++; return true })
			return false
		}
		return true
	})
	return c
}

// dataFor is what the template executes on: the object, and for templates
// that read a root beyond it (`.children`, `.cross`, `.external`) the object
// with those added at the root (a shallow copy made once per scope).
func dataFor(s *engine.Scope, extra bool) map[string]any {
	if !extra {
		return s.Self
	}
	return s.Memo(childrenRoot{}, func() any {
		m := make(map[string]any, len(s.Self)+1+len(s.Roots))
		for k, v := range s.Self {
			m[k] = v
		}
		if s.Children != nil {
			m["children"] = s.Children
		}
		for k, v := range s.Roots {
			m[k] = v
		}
		return m
	}).(map[string]any)
}

// liveRoots are the legacy roots of the live inputs (engine.Scope.Roots).
var liveRoots = map[string]bool{engine.CrossVar: true, engine.ExternalVar: true}

type childrenRoot struct{}

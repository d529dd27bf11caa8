package cel

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// Evaluation of compiled programs: the fast path for plain references, the
// activation built once per scope, and the values and conditions a plan runs.

type walkStatus int

const (
	walkFound walkStatus = iota
	walkAbsent
	// walkUnusual: the data does not have the shape the schema says; the
	// program decides what that means.
	walkUnusual
)

// resolveSteps resolves a plain reference against the schema, the way field
// selection on the lazy values does, or returns nil.
func resolveSteps(root *node, steps []step) []fastStep {
	out := make([]fastStep, 0, len(steps))
	n := root
	for _, s := range steps {
		switch n.kind {
		case kObject:
			pr := n.prop(s.name)
			if pr == nil {
				return nil
			}
			out = append(out, fastStep{key: pr.name, next: pr.n, object: true})
			n = pr.n
		case kMap:
			out = append(out, fastStep{key: s.name, next: n.elem})
			n = n.elem
		case kDyn:
			out = append(out, fastStep{key: s.name, next: dynNode})
			n = dynNode
		default:
			return nil
		}
	}
	return out
}

// walk follows a plain reference through the data, the way field selection
// on the lazy values does.
func (p *program) walk(s *engine.Scope) (any, *node, walkStatus) {
	if p.walkSteps == nil && len(p.plain) > 0 {
		return nil, nil, walkUnusual
	}
	var cur any = s.Self
	n := p.root
	if p.plainRoot != "self" {
		cur, n = s.Vars[p.plainRoot], p.vars[p.plainRoot]
	}
	if cur == nil {
		cur = map[string]any{}
	}
	for i := range p.walkSteps {
		s := &p.walkSteps[i]
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, nil, walkUnusual
		}
		v, ok := m[s.key]
		if !ok || (v == nil && s.object) {
			return nil, nil, walkAbsent
		}
		cur, n = v, s.next
	}
	return cur, n, walkFound
}

func (p *program) activation(s *engine.Scope) *activation {
	return s.Memo(p.root, func() any {
		a := &activation{self: p.root.rootVal(s.Self)}
		if len(p.vars) > 0 {
			a.vars = make(map[string]ref.Val, len(p.vars))
			for name, n := range p.vars {
				a.vars[name] = n.toVal(s.Vars[name])
			}
		}
		return a
	}).(*activation)
}

// evalVal runs the program.
func (p *program) evalVal(s *engine.Scope) (ref.Val, error) {
	out, _, err := p.prog.Eval(p.activation(s))
	if err != nil {
		return nil, p.evalError(err)
	}
	return out, nil
}

func (p *program) evalError(err error) error {
	var cancel interpreter.EvalCancelledError
	if errors.As(err, &cancel) && cancel.Cause == interpreter.CostLimitExceeded {
		return fmt.Errorf("%s exceeded the runtime cost limit of %d per evaluation (%w); the data is larger than the expression can handle: bound it in the schema (maxItems, maxLength, maxProperties) or simplify the expression",
			p.display, p.limit, err)
	}
	return fmt.Errorf("%s: %w", p.display, err)
}

// evalNative evaluates to plain Go data; a plain reference to an absent
// field is engine.ErrAbsent.
func (p *program) evalNative(s *engine.Scope) (any, error) {
	if p.isPlain && p.fast {
		raw, n, st := p.walk(s)
		switch st {
		case walkFound:
			v, err := n.native(raw)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p.display, err)
			}
			return v, nil
		case walkAbsent:
			return nil, engine.ErrAbsent
		}
	}
	out, err := p.evalVal(s)
	if err != nil {
		if p.isPlain {
			if _, _, st := p.walk(s); st == walkAbsent {
				return nil, engine.ErrAbsent
			}
		}
		return nil, err
	}
	v, err := ToNative(out)
	if err != nil {
		if errors.Is(err, engine.ErrAbsent) {
			return nil, engine.ErrAbsent
		}
		return nil, fmt.Errorf("%s: %w", p.display, err)
	}
	return v, nil
}

type part struct {
	text string
	p    *program
}

// valueExpr is a compiled string value.
type valueExpr struct {
	src     string
	pos     katalog.Pos
	literal *string
	// literalVal is *literal as an interface value, built once.
	literalVal any
	single     *program
	parts      []part
	expected   *structuralschema.Structural
	where      string
	// sizeHint sizes the buffer of an interpolation: the longest result so
	// far, at first the text plus a little per expression.
	sizeHint atomic.Int32
	// runtimeCheck: the output type is (partly) dyn; values are checked
	// against expected when computed.
	runtimeCheck bool
}

func (e *valueExpr) Source() string { return e.src }

func (e *valueExpr) Pos() katalog.Pos { return e.pos }

func (e *valueExpr) Engine() string { return "cel" }

func (e *valueExpr) String() string { return e.src }

func (e *valueExpr) IsSingle() bool { return e.single != nil }

func (e *valueExpr) IsPlainRef() bool { return e.single != nil && e.single.isPlain }

func (e *valueExpr) OutputType() string { return e.outputType() }

// FieldPath is the data path of a plain field reference whose steps are all
// known at compile time (engine.FieldRef), else nil.
func (e *valueExpr) FieldPath() []string {
	p := e.single
	if p == nil || !p.isPlain || !p.fast || len(p.walkSteps) == 0 || p.plainRoot != "self" {
		return nil
	}
	path := make([]string, len(p.walkSteps))
	for i, s := range p.walkSteps {
		path[i] = s.key
	}
	return path
}

// Inputs are the data paths of self the value reads (engine.InputReader).
func (e *valueExpr) Inputs() [][]string {
	if e.single != nil {
		return e.single.inputs
	}
	var all [][]string
	for _, pt := range e.parts {
		if pt.p != nil {
			all = append(all, pt.p.inputs...)
		}
	}
	return minimalPaths(all)
}

func (e *valueExpr) outputType() string {
	switch {
	case e.literal != nil:
		return "string"
	case e.single != nil:
		return typeWord(nil, e.single.out)
	}
	return "string"
}

// Eval evaluates the value on s. It is safe for concurrent use with
// different scopes.
func (e *valueExpr) Eval(s *engine.Scope) (any, error) {
	if e.single != nil {
		v, err := e.single.evalNative(s)
		if err != nil {
			return nil, err
		}
		if e.runtimeCheck {
			v, err = conform(v, e.expected, e.where)
			if err != nil {
				return nil, fmt.Errorf("%s %w", e.single.display, err)
			}
		}
		return v, nil
	}
	if e.literal != nil {
		return e.literalVal, nil
	}
	var b strings.Builder
	b.Grow(int(e.sizeHint.Load()))
	for _, pt := range e.parts {
		if pt.p == nil {
			b.WriteString(pt.text)
			continue
		}
		v, err := pt.p.evalNative(s)
		if err != nil {
			if errors.Is(err, engine.ErrAbsent) {
				if pt.p.isPlain {
					return nil, fmt.Errorf("%s: %s is absent; give it a default, e.g. ${%s.orValue('')}", pt.p.display, strings.TrimSpace(pt.p.src), pt.p.optionalForm())
				}
				return nil, fmt.Errorf("%s yields optional.none(), which cannot be interpolated; give it a default with .orValue(…)", pt.p.display)
			}
			return nil, err
		}
		if !appendInterpolated(&b, v) {
			return nil, fmt.Errorf("%s yields %s at runtime, which cannot be interpolated into a string", pt.p.display, describeNative(v))
		}
	}
	if n := int32(b.Len()); n > e.sizeHint.Load() {
		e.sizeHint.Store(n)
	}
	return b.String(), nil
}

// condition is a compiled boolean.
type condition struct {
	src string
	pos katalog.Pos
	p   *program
	// name is how the condition is called in messages (when, or).
	name string
}

func (c *condition) Source() string { return c.src }

func (c *condition) Pos() katalog.Pos { return c.pos }

// Eval evaluates the condition on s. It is safe for concurrent use with
// different scopes.
func (c *condition) Eval(s *engine.Scope) (bool, error) {
	out, err := c.p.evalVal(s)
	if err != nil {
		return false, err
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, fmt.Errorf("%s must be a bool, but `%s` yielded %s at runtime", c.name, strings.TrimSpace(c.p.src), out.Type().TypeName())
	}
	return bool(b), nil
}

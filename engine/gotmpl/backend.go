// Package gotmpl is the legacy text/template adapter: katalogs written for
// the original Orkestra engine (`"{{ .spec.image }}"`, structured `when:`
// conditions) keep their exact meaning, but every template is parsed and
// checked once at load — unknown functions, unknown fields (with
// did-you-mean), wrong argument counts and random values outside
// `once: true` secrets are load errors with file:line:col — and structured
// conditions compile to CEL programs like every other condition.
package gotmpl

import (
	"fmt"
	"strings"
	"sync"
	"text/template/parse"
	"time"
	"unicode/utf8"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/engine"
	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/katalog"
)

// Backend compiles legacy templates and structured conditions. It is safe
// for concurrent use; so is everything it compiles.
type Backend struct {
	cel          engine.Backend
	runtimeLimit uint64
	roots        sync.Map // *structuralschema.Structural → its root schema
	// notes are the katalog's user-defined functions (WithNotes), compiled
	// per place into compiledNotes (noteKey → *compiledNote).
	notes         map[string]*katalog.Note
	compiledNotes *sync.Map
}

var _ engine.LegacyBackend = (*Backend)(nil)

// Options configure a Backend.
type Options struct {
	// RuntimeCostLimit is the cost limit of one evaluation (steps and the
	// strings functions build; see exec.go); 0 means CEL's default, the same
	// --max-runtime-cost.
	RuntimeCostLimit uint64
}

// New returns the legacy backend. cel compiles the CEL that structured
// conditions translate to; its environment must include CELLibrary(). With
// a nil cel, structured conditions are evaluated by this package directly
// (same semantics; used by tests and tools that have no CEL backend).
func New(cel engine.Backend) *Backend { return NewWithOptions(cel, Options{}) }

// NewWithOptions is New with options.
func NewWithOptions(cel engine.Backend, opts Options) *Backend {
	b := &Backend{cel: cel, runtimeLimit: opts.RuntimeCostLimit}
	if b.runtimeLimit == 0 {
		b.runtimeLimit = celengine.DefaultRuntimeCostLimit
	}
	return b
}

func (b *Backend) root(self *structuralschema.Structural) shape {
	if self == nil {
		return shape{root: true}
	}
	if r, ok := b.roots.Load(self); ok {
		return shape{s: r.(*structuralschema.Structural), root: true}
	}
	r, _ := b.roots.LoadOrStore(self, rootSchema(self))
	return shape{s: r.(*structuralschema.Structural), root: true}
}

// purpose of a compiled template.
type purpose int

const (
	forValue     purpose = iota // a string value: coerced to the target
	forCondition                // a `when:` template rendering true/false
	forOperand                  // a structured condition's field or value: the rendered string
)

// CompileValue compiles a string value containing `{{`.
func (b *Backend) CompileValue(src string, ctx *engine.Context) (engine.Expr, katalog.Diagnostics) {
	t, diags := b.compile(src, ctx, forValue)
	if t == nil {
		return nil, diags
	}
	if t.failing != "" {
		return &engine.FailingExpr{Src: src, At: ctx.Pos, Reason: t.failing}, diags
	}
	return t, diags
}

// CompileCondition compiles a template that must render "true" or "false"
// (an empty rendering — a missing field — is false).
func (b *Backend) CompileCondition(src string, ctx *engine.Context) (engine.Condition, katalog.Diagnostics) {
	t, diags := b.compile(src, ctx, forCondition)
	if t == nil {
		return nil, diags
	}
	return &conditionTemplate{t: t}, diags
}

func (b *Backend) compile(src string, ctx *engine.Context, p purpose) (*Template, katalog.Diagnostics) {
	return b.compileIn(src, ctx, p, nil)
}

// compileNote compiles a note's template at the place that calls it.
func (b *Backend) compileNote(src string, ctx *engine.Context, stack []string) (*Template, katalog.Diagnostics) {
	return b.compileIn(src, ctx, forOperand, stack)
}

// compileIn compiles src; noteStack names the notes being compiled around
// it (a note calling a note).
func (b *Backend) compileIn(src string, ctx *engine.Context, p purpose, noteStack []string) (*Template, katalog.Diagnostics) {
	var diags katalog.Diagnostics
	report := func(off int, msg string) {
		diags = append(diags, katalog.Diagnostic{Pos: posAt(ctx.Pos, src, off), Entry: ctx.Entry, Field: ctx.Field, Message: msg})
	}
	tree, valueFirst, err := parseNoting(src)
	if err != nil {
		pe := err.(*ParseError)
		report(pe.Offset, pe.Msg)
		return nil, diags
	}
	for _, cmd := range valueFirst {
		diags = append(diags, defaultWarning(cmd, posAt(ctx.Pos, src, int(cmd.Args[0].Position())), ctx))
	}
	warn := func(off int, msg string) {
		diags = append(diags, katalog.Diagnostic{Pos: posAt(ctx.Pos, src, off), Severity: katalog.Warning, Entry: ctx.Entry, Field: ctx.Field, Message: msg})
	}
	conversion := strings.HasPrefix(ctx.Field, "conversion.")
	limit := ctx.CostLimit
	if limit == 0 {
		limit = celengine.DefaultCostLimit
	}
	c := &checker{src: src, version: ctx.SelfVersion, report: report, warn: warn, random: ctx.AllowRandom && (p == forValue || noteStack != nil), root: b.root(ctx.Self),
		noChildren: conversion, conversion: conversion, stringTarget: ctx.Expected != nil && ctx.Expected.Type == "string",
		b: b, self: ctx.Self, entry: ctx.Entry, costLimit: ctx.CostLimit, noteStack: noteStack, skipsFailure: ctx.SkipsFailure && p == forValue && noteStack == nil}
	c.check(tree)
	diags = append(diags, c.extra...)
	if c.failing != "" && !diags.HasErrors() {
		return &Template{src: src, pos: ctx.Pos, field: ctx.Field, failing: c.failing}, diags
	}
	if !diags.HasErrors() {
		var finding func(off int, msg string)
		if ctx.Total {
			finding = func(off int, msg string) {
				diags = append(diags, katalog.Diagnostic{Pos: posAt(ctx.Pos, src, off), Severity: ctx.TotalSeverity, Entry: ctx.Entry, Field: ctx.Field, Message: msg})
			}
		}
		c.checkCost(tree, limit, b.runtimeLimit, finding)
	}
	t := &Template{src: src, pos: ctx.Pos, tree: tree, plain: c.plain, field: ctx.Field, children: c.children, timers: c.timers}
	if p == forValue {
		t.coerce = coercionFor(ctx)
	}
	for _, id := range c.mapCalls {
		act := soleAction(tree.Root)
		whole := p == forValue && act != nil && len(act.Pipe.Decl) == 0 && lastFunc(act.Pipe) == id
		switch {
		case !whole:
			report(int(id.Pos), fmt.Sprintf("%[1]s makes a map, so it must be the whole value: \"{{ %[1]s .spec.schedule }}\"", id.Ident))
		case t.coerce.mode == modeAuto:
			warn(int(id.Pos), funcs[id.Ident].mapAuto)
		case t.coerce.mode != modeGuess && t.coerce.mode != modeObject:
			report(int(id.Pos), fmt.Sprintf("%s makes a map, but %s expects %s; %s", id.Ident, ctx.Field, describeMode(t.coerce.mode), funcs[id.Ident].mapHint))
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}
	x, err := newExecutor(tree, c.usedFuncs(), b.runtimeLimit, c.notesUsed, c.sentinels)
	if err != nil {
		report(0, "internal: "+err.Error())
		return nil, diags
	}
	t.exec = x
	return t, diags
}

// defaultWarning: `default FIELD LITERAL` is read as "the field, else the
// literal" — the reading of the older original engine and of its docs —
// while the newest original takes the first argument as the fallback (Sprig
// order). The pipe form means the same in both.
func defaultWarning(cmd *parse.CommandNode, pos katalog.Pos, ctx *engine.Context) katalog.Diagnostic {
	value, lit := cmd.Args[2], cmd.Args[1]
	// after normalisation: default LITERAL VALUE
	newest := "always gives " + lit.String()
	if isEmptyLiteral(lit) {
		newest = "gives " + value.String() + " itself, even when empty"
	}
	return katalog.Diagnostic{Pos: pos, Severity: katalog.Warning, Entry: ctx.Entry, Field: ctx.Field, Message: fmt.Sprintf(
		"default %s %s is read as %q (the older original engine and its docs); the newest original engine takes the first argument as the fallback and %s; write `%s | default %s`, which both read the same way (orkestra migrate rewrites it)",
		value, lit, value.String()+", else "+lit.String(), newest, value, lit)}
}

// isEmptyLiteral: a literal the original's empty() holds for.
func isEmptyLiteral(n parse.Node) bool {
	switch x := n.(type) {
	case *parse.StringNode:
		return x.Text == ""
	case *parse.NumberNode:
		return x.IsInt && x.Int64 == 0 || x.IsFloat && x.Float64 == 0
	case *parse.BoolNode:
		return !x.True
	case *parse.NilNode:
		return true
	}
	return false
}

func lastFunc(p *parse.PipeNode) *parse.IdentifierNode {
	if len(p.Cmds) == 0 || len(p.Cmds[len(p.Cmds)-1].Args) == 0 {
		return nil
	}
	id, _ := p.Cmds[len(p.Cmds)-1].Args[0].(*parse.IdentifierNode)
	return id
}

// posAt is the position of byte off of src, src starting at base.
// Columns count runes. A template spanning lines (a YAML block scalar) is
// placed by line; its columns are then relative to the text's indentation.
func posAt(base katalog.Pos, src string, off int) katalog.Pos {
	off = max(0, min(off, len(src)))
	before := src[:off]
	nl := strings.LastIndexByte(before, '\n')
	if nl < 0 {
		return base.Offset(utf8.RuneCountInString(before))
	}
	if base.Line == 0 {
		return base
	}
	p := base
	p.Line += strings.Count(before, "\n")
	p.Col = 1 + utf8.RuneCountInString(before[nl+1:])
	return p
}

// ── compiled templates ──────────────────────────────────────────────────────

// Template is a compiled legacy template, an engine.Expr.
type Template struct {
	src    string
	pos    katalog.Pos
	field  string
	tree   *parse.Tree
	exec   *executor
	plain  []string // the field path of a plain `{{ .a.b }}`, else nil
	coerce coercion
	// children: the template reads .children.
	children bool
	// timers say when clock-reading calls may change their result.
	timers []timer
	// failing says why every evaluation fails (CompileValue gives an
	// engine.FailingExpr instead).
	failing string
}

// Render executes the template against obj and returns the rendered string
// as the original engine produced it: trimmed, `<no value>` removed.
func (t *Template) Render(obj map[string]any) (string, error) {
	return t.render(engine.NewScope(obj))
}

func (t *Template) render(s *engine.Scope) (string, error) {
	out, err := t.exec.run(dataFor(s, t.children))
	if err != nil {
		return "", err
	}
	return finish(out), nil
}

// Eval renders and coerces the template. A plain field reference whose
// last field is absent (or null) returns engine.ErrAbsent: the target is
// left unset. A missing or non-object field on the way fails, as in the
// original engine.
func (t *Template) Eval(s *engine.Scope) (any, error) {
	if t.plain != nil && lastAbsent(dataFor(s, t.children), t.plain) {
		return nil, engine.ErrAbsent
	}
	out, err := t.render(s)
	if err != nil {
		return nil, err
	}
	return t.coerce.coerce(out)
}

// NextChange implements engine.Timed for templates that read the clock.
func (t *Template) NextChange(now time.Time) time.Time { return nextChange(now, t.timers) }

// ReadsClock implements engine.Timed.
func (t *Template) ReadsClock() bool { return len(t.timers) > 0 }

func (t *Template) Source() string   { return t.src }
func (t *Template) Pos() katalog.Pos { return t.pos }
func (t *Template) Engine() string   { return "legacy" }

// Tree is the parsed template (with `default` in canonical order).
func (t *Template) Tree() *parse.Tree { return t.tree }

// PlainRef returns the field path of a template that is exactly one field
// reference ({{ .spec.x }}), else nil.
func (t *Template) PlainRef() []string { return t.plain }

// conditionTemplate is a template used as a condition.
type conditionTemplate struct{ t *Template }

func (c *conditionTemplate) Eval(s *engine.Scope) (bool, error) {
	out, err := c.t.render(s)
	if err != nil {
		return false, err
	}
	switch strings.TrimSpace(out) {
	case "true":
		return true, nil
	case "false", "":
		return false, nil
	}
	return false, fmt.Errorf("the condition rendered %q; it must render true or false", shorten(out))
}

func (c *conditionTemplate) NextChange(now time.Time) time.Time { return c.t.NextChange(now) }
func (c *conditionTemplate) ReadsClock() bool                   { return c.t.ReadsClock() }

func (c *conditionTemplate) Source() string   { return c.t.src }
func (c *conditionTemplate) Pos() katalog.Pos { return c.t.pos }

// lastAbsent reports a path whose every step but the last is an object and
// whose last step is missing or null.
func lastAbsent(obj map[string]any, path []string) bool {
	parent, ok := lookup(obj, path[:len(path)-1])
	if !ok {
		return false
	}
	m, ok := parent.(map[string]any)
	if !ok {
		return false
	}
	return m[path[len(path)-1]] == nil
}

// lookup walks maps by key: the value at path and whether every step exists.
func lookup(obj map[string]any, path []string) (any, bool) {
	var cur any = obj
	for _, seg := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = m[seg]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

// execError strips text/template's "template: NAME:1:2: executing "NAME""
// prefix and says what usually causes the error.
func execError(err error) error {
	msg := err.Error()
	if i := strings.Index(msg, " at <"); i >= 0 {
		msg = msg[i+1:]
	}
	switch {
	case strings.Contains(msg, "nil pointer evaluating interface {}."):
		msg += " (a field on the way is missing; guard it with {{ with … }} or use get)"
	case strings.Contains(msg, "got interface {}"):
		msg += " (the field is missing)"
	}
	return fmt.Errorf("%s", msg)
}

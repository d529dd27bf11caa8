package cel

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// diagSink collects the diagnostics of one string value.
type diagSink struct {
	ctx   *engine.Context
	diags katalog.Diagnostics
}

func (d *diagSink) add(offset int, format string, args ...any) {
	d.addSeverity(katalog.Error, offset, format, args...)
}

func (d *diagSink) addSeverity(sev katalog.Severity, offset int, format string, args ...any) {
	if offset < 0 {
		offset = 0
	}
	d.diags = append(d.diags, katalog.Diagnostic{
		Pos:      d.ctx.Pos.Offset(offset),
		Severity: sev,
		Entry:    d.ctx.Entry,
		Field:    d.ctx.Field,
		Message:  fmt.Sprintf(format, args...),
	})
}

// targetName names the field a value lands in, for messages.
func targetName(ctx *engine.Context) string {
	if ctx.Field == "" {
		return "the target field"
	}
	return ctx.Field
}

// program is one compiled CEL expression.
type program struct {
	// display is how messages show it: `expression ${self.spec.x}` or
	// `when `self.spec.x > 0``.
	display string
	src     string
	prog    cel.Program
	root    *node
	// plain is set for plain field references (self.a.b, self.?a, self.m['k']):
	// absent fields are engine.ErrAbsent, and evaluation may walk the data
	// directly instead of running the program.
	plain   []step
	isPlain bool
	// plainRoot is the variable a plain reference starts from: self, or a
	// variable besides it (children, each, …).
	plainRoot string
	// walkSteps is plain resolved against the schema; nil when some step
	// cannot be resolved statically (the program runs instead).
	walkSteps []fastStep
	fast      bool
	out       *types.Type
	limit     uint64
	// vars are the variables besides self the expression may read.
	vars map[string]*node
	// inputs are the data paths of self the expression reads.
	inputs [][]string
	// timers: the expression reads the clock (clock.go).
	timers []clockTimer
}

type step struct {
	name string
}

// fastStep is one step of a plain reference resolved against the schema at
// compile time: the data key to read and the schema of what it finds.
type fastStep struct {
	key  string
	next *node
	// object: a null value is absent
	object bool
}

// compileExpr compiles one expression whose source starts at byte exprOff of
// the string value, and whose `${` (or start, for bare conditions) is at
// segOff. Problems go to d; the result is nil when there are any.
func (b *Backend) compileExpr(se *schemaEnv, src string, exprOff, segOff int, display string, ctx *engine.Context, d *diagSink) (*program, *cel.Ast) {
	before := len(d.diags)
	checked, iss := se.env.Compile(src)
	if iss != nil && iss.Err() != nil {
		for _, e := range iss.Errors() {
			off := locationByte(src, e.Location)
			if undefinedFieldRe.MatchString(e.Message) {
				// CEL points at the dot; point at the field name.
				off = skipSelectOperator(src, off)
			}
			d.add(exprOff+off, "%s", b.celErrorMessage(se, src, display, e))
		}
		return nil, nil
	}
	native := checked.NativeRep()

	// Random functions yield a new value on every evaluation.
	if !ctx.AllowRandom {
		ast.PreOrderVisit(native.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
			if e.Kind() != ast.CallKind {
				return
			}
			call := e.AsCall()
			if call.IsMemberFunction() || !isRandomFunction(call.FunctionName()) {
				return
			}
			d.add(exprOff+callNameOffset(src, max(0, exprByteOffset(native, src, e.ID())), call.FunctionName()),
				"%s() yields a new value on every reconcile, which is endless drift; use it only in the data of a `once: true` secret",
				call.FunctionName())
		}))
	}

	// Static cost, as the API server estimates it for CRD validation rules.
	limit := b.costLimit
	if ctx.CostLimit > 0 {
		limit = ctx.CostLimit
	}
	est, err := estimateCost(se, checked)
	if untyped(ctx.Self) {
		// Without a schema nothing bounds a value's size, so every estimate
		// is the request-size maximum; the runtime limit still applies.
		err, est.Max = nil, 0
	}
	if err != nil {
		d.add(segOff, "%s: cannot estimate its cost: %v", display, err)
	} else if est.Max > limit {
		d.add(segOff, "%s: %s", display, costMessage(est.Max, limit, se.tree, native))
	}

	prog, err := se.env.Program(checked,
		cel.EvalOptions(cel.OptOptimize),
		cel.CostLimit(b.runtimeLimit),
		cel.InterruptCheckFrequency(celconfig.CheckFrequency),
	)
	if err != nil {
		d.add(segOff, "%s: %v", display, err)
	}
	if len(d.diags) > before {
		return nil, checked
	}
	p := &program{
		display: display,
		src:     src,
		prog:    prog,
		root:    se.tree.root,
		out:     checked.OutputType(),
		limit:   b.runtimeLimit,
		fast:    !b.noFastPath,
	}
	if len(se.vars) > 0 {
		p.vars = make(map[string]*node, len(se.vars))
		for name, t := range se.vars {
			p.vars[name] = t.root
		}
	}
	p.inputs = inputPaths(se.tree.root, native.Expr())
	p.plainRoot, p.plain, p.isPlain = plainSteps(native.Expr())
	p.timers = clockTimers(native.Expr())
	if p.isPlain {
		root := p.root
		if p.plainRoot != "self" {
			root = p.vars[p.plainRoot]
		}
		if root == nil {
			p.isPlain = false
		} else {
			p.walkSteps = resolveSteps(root, p.plain)
		}
	}
	return p, checked
}

// untyped reports whether s is the stand-in schema of an entry without a CRD
// (an object that preserves unknown fields and declares none).
func untyped(s *structuralschema.Structural) bool {
	return s != nil && s.XPreserveUnknownFields && len(s.Properties) == 0
}

func isRandomFunction(name string) bool {
	for _, f := range RandomFunctions {
		if f == name {
			return true
		}
	}
	return false
}

// plainSteps recognises a plain field reference: selections, optional
// selections and constant string indexes from self or another variable
// (root is its name).
func plainSteps(e ast.Expr) (root string, steps []step, ok bool) {
	switch e.Kind() {
	case ast.IdentKind:
		return e.AsIdent(), nil, true
	case ast.SelectKind:
		sel := e.AsSelect()
		if sel.IsTestOnly() {
			return "", nil, false
		}
		root, steps, ok := plainSteps(sel.Operand())
		if !ok {
			return "", nil, false
		}
		return root, append(steps, step{name: sel.FieldName()}), true
	case ast.CallKind:
		call := e.AsCall()
		switch call.FunctionName() {
		case "_?._", "_[_]", "_[?_]":
			args := call.Args()
			if len(args) != 2 {
				return "", nil, false
			}
			name, ok := literalString(args[1])
			if !ok {
				return "", nil, false
			}
			root, steps, ok := plainSteps(args[0])
			if !ok {
				return "", nil, false
			}
			return root, append(steps, step{name: name}), true
		}
	}
	return "", nil, false
}

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
		return fmt.Errorf("%s exceeded the runtime cost limit of %d per evaluation (%v); the data is larger than the expression can handle: bound it in the schema (maxItems, maxLength, maxProperties) or simplify the expression",
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

// optionalForm rewrites a plain reference with optional steps, for hints.
func (p *program) optionalForm() string {
	var b strings.Builder
	b.WriteString(p.plainRoot)
	for _, s := range p.plain {
		if isIdent(s.name) {
			b.WriteString(".?")
			b.WriteString(s.name)
		} else {
			b.WriteString("[?'")
			b.WriteString(strings.ReplaceAll(s.name, "'", `\'`))
			b.WriteString("']")
		}
	}
	return b.String()
}

// locationByte converts a CEL error location (1-based line, 0-based column
// in characters) to a byte offset in src.
func locationByte(src string, loc common.Location) int {
	if loc == nil || loc.Line() < 1 {
		return 0
	}
	lineStart := 0
	for line := 1; line < loc.Line(); line++ {
		i := strings.IndexByte(src[lineStart:], '\n')
		if i < 0 {
			break
		}
		lineStart += i + 1
	}
	return lineStart + runeToByte(src[lineStart:], loc.Column())
}

var (
	undefinedFieldRe = regexp.MustCompile(`^undefined field '([^']*)'`)
	undeclaredRefRe  = regexp.MustCompile(`^undeclared reference to '([^']*)'`)
	containerRe      = regexp.MustCompile(` \(in container '[^']*'\)`)
	reservedSelectRe = regexp.MustCompile(`\.\??(in|true|false|null)\b`)
)

// celErrorMessage turns a CEL compile error into a message that says how to
// fix it.
func (b *Backend) celErrorMessage(se *schemaEnv, src, display string, e *common.Error) string {
	msg := containerRe.ReplaceAllString(e.Message, "")
	if m := undefinedFieldRe.FindStringSubmatch(msg); m != nil {
		return display + ": " + msg + b.fieldSuggestion(se, src, e.ExprID, m[1])
	}
	if m := undeclaredRefRe.FindStringSubmatch(msg); m != nil {
		name := m[1]
		if p := se.tree.root.prop(name); p != nil {
			return display + ": " + msg + "; did you mean self." + name + "? (the custom resource is self)"
		}
		return display + ": " + msg + didYouMean(name, []string{"self"})
	}
	if strings.HasPrefix(msg, "expected type '") {
		return display + ": " + msg + "; Kubernetes CEL needs list and map literals of one type: wrap each value in dyn(), e.g. {'a': dyn(1), 'b': dyn('x')}"
	}
	if strings.HasPrefix(msg, "Syntax error") {
		if m := reservedSelectRe.FindStringSubmatch(src); m != nil {
			return fmt.Sprintf("%s: %s; %s is a reserved word: select it as `%s` or __%s__", display, msg, m[1], m[1], m[1])
		}
		return display + ": " + msg
	}
	return display + ": " + msg
}

// fieldSuggestion proposes the fields of the object an undefined field was
// selected from.
func (b *Backend) fieldSuggestion(se *schemaEnv, src string, id int64, name string) string {
	parsed, iss := se.env.Parse(src)
	var parent *node
	if iss == nil || iss.Err() == nil {
		native := parsed.NativeRep()
		ast.PreOrderVisit(native.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
			if e.ID() != id {
				return
			}
			var operand ast.Expr
			switch e.Kind() {
			case ast.SelectKind:
				operand = e.AsSelect().Operand()
			case ast.CallKind:
				if args := e.AsCall().Args(); len(args) == 2 {
					operand = args[0]
				}
			}
			if operand != nil {
				parent = resolveChain(se.tree, operand)
			}
		}))
	}
	if parent != nil && parent.kind == kObject {
		if s := didYouMean(name, parent.fieldNames()); s != "" {
			return s
		}
		names := parent.fieldNames()
		if len(names) == 0 {
			return fmt.Sprintf("; %s has no fields", parent.selfPath())
		}
		if len(names) <= 30 {
			return fmt.Sprintf("; %s has %s", parent.selfPath(), strings.Join(names, ", "))
		}
		return ""
	}
	return didYouMean(name, se.tree.allName)
}

// CompileValue compiles a string value holding `${…}` expressions at ctx and
// checks its output against ctx.Expected.
func (b *Backend) CompileValue(src string, ctx *engine.Context) (engine.Expr, katalog.Diagnostics) {
	d := &diagSink{ctx: ctx}
	tmpl, perr := ParseTemplate(src)
	if perr != nil {
		var terrs TemplateErrors
		if errors.As(perr, &terrs) {
			for _, te := range terrs {
				d.add(te.Offset, "%s", te.Message)
			}
		} else {
			d.add(0, "%v", perr)
		}
	}
	se, err := b.schemaEnv(ctx.Self, ctx.Vars)
	if err != nil {
		d.add(0, "cannot build the CEL environment of %s: %v", selfName(ctx), err)
		return nil, d.diags
	}
	where := targetName(ctx)
	e := &valueExpr{src: src, pos: ctx.Pos, expected: ctx.Expected, where: where}

	exprs := tmpl.Exprs()
	if perr == nil && len(exprs) == 0 {
		// Only text (with $${ escapes): a string.
		text := ""
		for _, s := range tmpl.Segments {
			text += s.Text
		}
		e.literal = &text
		e.literalVal = text
		c := &outCheck{tree: se.tree, src: fmt.Sprintf("%q", src)}
		c.checkLiteral(ctx.Expected, where, text)
		for _, p := range c.problems {
			d.add(0, "%s", p.msg)
		}
		return finish(e, d)
	}

	if tmpl.Single() && perr == nil {
		seg := tmpl.Segments[0]
		display := "expression ${" + seg.Text + "}"
		p, checked := b.compileExpr(se, seg.Text, seg.ExprOffset(), seg.Offset, display, ctx, d)
		if checked != nil {
			c := &outCheck{tree: se.tree, ast: checked.NativeRep(), src: display, srcText: seg.Text}
			c.check(checked.OutputType(), checked.NativeRep().Expr(), ctx.Expected, where, display)
			for _, pr := range c.problems {
				off := seg.Offset
				if pr.off >= 0 {
					off = seg.ExprOffset() + pr.off
				}
				d.add(off, "%s", pr.msg)
			}
			e.runtimeCheck = c.runtime && ctx.Expected != nil
			// A plain reference to an absent field leaves the target unset.
			if p != nil && !p.isPlain {
				totalityProblems(d, se, checked, seg.Text, seg.ExprOffset(), display)
			}
			labelProblems(d, se, checked, seg.Text, seg.ExprOffset(), display)
		}
		e.single = p
		return finish(e, d)
	}

	// Interpolation: every expression is formatted into the string.
	for _, seg := range tmpl.Segments {
		if seg.Kind == TextSegment {
			e.parts = append(e.parts, part{text: seg.Text})
			continue
		}
		display := "expression ${" + seg.Text + "}"
		p, checked := b.compileExpr(se, seg.Text, seg.ExprOffset(), seg.Offset, display, ctx, d)
		if checked != nil {
			if msg := interpolationProblem(se.tree, checked.OutputType(), display, seg.Text); msg != "" {
				d.add(seg.Offset, "%s", msg)
			}
			totalityProblems(d, se, checked, seg.Text, seg.ExprOffset(), display)
		}
		e.parts = append(e.parts, part{p: p})
	}
	hint := 0
	for _, pt := range e.parts {
		hint += len(pt.text)
		if pt.p != nil {
			hint += 8
		}
	}
	e.sizeHint.Store(int32(min(hint, 1<<20)))
	if perr == nil && ctx.Expected != nil && !isAnything(ctx.Expected) && !acceptsString(ctx.Expected) {
		d.add(0, "%q interpolates text into a string, but %s expects %s; write the value as a single ${…} expression to keep its type",
			src, where, expectedWord(ctx.Expected))
	}
	return finish(e, d)
}

// totalityProblems reports, when the context asks, where the expression can
// fail on an object its self schema accepts.
func totalityProblems(d *diagSink, se *schemaEnv, checked *cel.Ast, src string, exprOff int, display string) {
	if !d.ctx.Total {
		return
	}
	for _, p := range analyseTotality(se.tree, checked.NativeRep(), src) {
		d.addSeverity(d.ctx.TotalSeverity, exprOff+p.off, "%s can fail on objects %s accepts: %s", display, versionName(d.ctx), p.msg)
	}
}

// labelProblems reports, for a label value, when the schema allows the
// field it comes from to hold an invalid label value.
func labelProblems(d *diagSink, se *schemaEnv, checked *cel.Ast, src string, exprOff int, display string) {
	if !d.ctx.Total || !d.ctx.LabelValue {
		return
	}
	if msg := labelValueProblem(se.tree, checked.NativeRep(), src); msg != "" {
		d.addSeverity(d.ctx.TotalSeverity, exprOff, "%s can fail on objects %s accepts: %s", display, versionName(d.ctx), msg)
	}
}

func finish(e *valueExpr, d *diagSink) (engine.Expr, katalog.Diagnostics) {
	if d.diags.HasErrors() {
		return nil, d.diags
	}
	return e, d.diags
}

func versionName(ctx *engine.Context) string {
	if ctx.SelfVersion != "" {
		return ctx.SelfVersion
	}
	return "its schema"
}

func selfName(ctx *engine.Context) string {
	if ctx.SelfVersion != "" {
		return "self (" + ctx.SelfVersion + ")"
	}
	return "self"
}

func acceptsString(s *structuralschema.Structural) bool {
	return s.XIntOrString || s.Type == "string"
}

// checkLiteral checks text (a value without expressions) against exp.
func (c *outCheck) checkLiteral(exp *structuralschema.Structural, where, text string) {
	if exp == nil || isAnything(exp) || acceptsString(exp) {
		if exp != nil && exp.Type == "string" && exp.ValueValidation != nil && len(exp.ValueValidation.Enum) > 0 && !enumContains(exp, text) {
			c.problems = append(c.problems, problem{off: -1, msg: fmt.Sprintf("%s is not allowed in %s (allowed: %s)", c.src, where, enumList(exp))})
		}
		return
	}
	c.problems = append(c.problems, problem{off: -1, msg: fmt.Sprintf("%s is a string, but %s expects %s", c.src, where, expectedWord(exp))})
}

// interpolationProblem says why a value of type t cannot be formatted into
// a string, or "".
func interpolationProblem(tree *schemaTree, t *types.Type, display, text string) string {
	switch t.Kind() {
	case types.StringKind, types.IntKind, types.UintKind, types.DoubleKind, types.BoolKind,
		types.TimestampKind, types.DurationKind, types.DynKind, types.AnyKind, types.TypeParamKind:
		return ""
	case types.ListKind:
		how := "join it, e.g. ${" + strings.TrimSpace(text) + ".join(',')}"
		if t.Parameters()[0].Kind() != types.StringKind {
			how = "join it, e.g. ${" + strings.TrimSpace(text) + ".map(x, string(x)).join(',')}"
		}
		return fmt.Sprintf("%s yields %s, which cannot be interpolated into a string; %s, or make the expression the whole value to keep the list", display, typeWord(tree, t), how)
	case types.MapKind, types.StructKind:
		return fmt.Sprintf("%s yields %s, which cannot be interpolated into a string; make the expression the whole value to keep the map, or pick a field of it", display, typeWord(tree, t))
	case types.NullTypeKind:
		return fmt.Sprintf("%s yields null, which cannot be interpolated into a string", display)
	case types.BytesKind:
		return fmt.Sprintf("%s yields bytes, which cannot be interpolated into a string; convert with string(%s)", display, strings.TrimSpace(text))
	case types.OpaqueKind:
		if t.TypeName() == "optional_type" {
			return fmt.Sprintf("%s yields %s, which cannot be interpolated into a string; give it a default, e.g. ${%s.orValue('')}", display, typeWord(tree, t), strings.TrimSpace(text))
		}
	}
	return fmt.Sprintf("%s yields %s, which cannot be interpolated into a string", display, typeWord(tree, t))
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

func (e *valueExpr) Source() string     { return e.src }
func (e *valueExpr) Pos() katalog.Pos   { return e.pos }
func (e *valueExpr) Engine() string     { return "cel" }
func (e *valueExpr) String() string     { return e.src }
func (e *valueExpr) IsSingle() bool     { return e.single != nil }
func (e *valueExpr) IsPlainRef() bool   { return e.single != nil && e.single.isPlain }
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

func (c *condition) Source() string   { return c.src }
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

// conditionName is the katalog key a condition stands under (when, or, …).
func conditionName(ctx *engine.Context) string {
	f := ctx.Field
	if i := strings.LastIndexByte(f, '.'); i >= 0 {
		f = f[i+1:]
	}
	if i := strings.IndexByte(f, '['); i >= 0 {
		f = f[:i]
	}
	switch f {
	case "when", "or", "anyOf", "readyWhen":
		return f
	}
	return "when"
}

// CompileCondition compiles a condition: a bare CEL expression (or one
// wrapped in a single ${…}) that must yield a bool.
func (b *Backend) CompileCondition(src string, ctx *engine.Context) (engine.Condition, katalog.Diagnostics) {
	d := &diagSink{ctx: ctx}
	name := conditionName(ctx)
	exprSrc, exprOff, segOff := src, 0, 0
	if strings.Contains(src, "${") {
		tmpl, err := ParseTemplate(src)
		var terrs TemplateErrors
		switch {
		case errors.As(err, &terrs):
			for _, te := range terrs {
				d.add(te.Offset, "%s", te.Message)
			}
			return nil, d.diags
		case err != nil:
			d.add(0, "%v", err)
			return nil, d.diags
		}
		// Whitespace around a single ${…} is fine.
		var only *Segment
		extra := false
		for i, s := range tmpl.Segments {
			if s.Kind == ExprSegment {
				if only != nil {
					extra = true
				}
				only = &tmpl.Segments[i]
			} else if strings.TrimSpace(s.Text) != "" {
				extra = true
			}
		}
		if only == nil || extra {
			d.add(0, "%s takes a bare CEL expression such as `self.spec.replicas > 0`, not a template; remove the ${…}", name)
			return nil, d.diags
		}
		exprSrc, exprOff, segOff = only.Text, only.ExprOffset(), only.Offset
	}
	if strings.TrimSpace(exprSrc) == "" {
		d.add(0, "%s is empty; write a CEL expression that yields a bool, e.g. `self.spec.replicas > 0`", name)
		return nil, d.diags
	}
	se, err := b.schemaEnv(ctx.Self, ctx.Vars)
	if err != nil {
		d.add(0, "cannot build the CEL environment of %s: %v", selfName(ctx), err)
		return nil, d.diags
	}
	text := strings.TrimSpace(exprSrc)
	display := name + " `" + text + "`"
	p, checked := b.compileExpr(se, exprSrc, exprOff, segOff, display, ctx, d)
	if checked != nil {
		t := checked.OutputType()
		switch t.Kind() {
		case types.BoolKind, types.DynKind, types.AnyKind:
		default:
			d.add(segOff, "%s must be a bool, but `%s` yields %s; %s", name, text, typeWord(se.tree, t), boolHint(t, text))
		}
	}
	if d.diags.HasErrors() {
		return nil, d.diags
	}
	return &condition{src: src, pos: ctx.Pos, p: p, name: name}, d.diags
}

func boolHint(t *types.Type, text string) string {
	switch t.Kind() {
	case types.IntKind, types.UintKind, types.DoubleKind:
		return "compare it, e.g. `" + text + " > 0`"
	case types.StringKind:
		return "compare it, e.g. `" + text + " == 'value'`"
	case types.ListKind, types.MapKind:
		return "test its size, e.g. `size(" + text + ") > 0`"
	case types.OpaqueKind:
		if t.TypeName() == "optional_type" {
			return "test it, e.g. `" + text + ".hasValue()`, or give it a default with .orValue(false)"
		}
	case types.NullTypeKind:
		return "compare something with null instead"
	}
	return "make it a comparison or a test that yields true or false"
}

// skipSelectOperator moves from the `.` (or `.?`) of a selection to the
// field name.
func skipSelectOperator(src string, off int) int {
	if off < len(src) && src[off] == '.' {
		off++
		if off < len(src) && src[off] == '?' {
			off++
		}
	}
	return off
}

// callNameOffset moves from the `(` of a global call to its function name.
func callNameOffset(src string, off int, name string) int {
	if off < len(src) && src[off] == '(' && off >= len(name) && src[off-len(name):off] == name {
		return off - len(name)
	}
	return off
}

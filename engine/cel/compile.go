package cel

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"

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

	prog, err := se.program(src, checked,
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
			if at := callsOmit(checked.NativeRep(), seg.Text); at >= 0 {
				d.add(seg.ExprOffset()+at, "omit() leaves the whole field out, not part of a string: write the field's value as one ${…}, e.g. ${cond ? 'a-' + x : omit()}")
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
	case "when", "or", "anyOf", "readyWhen", "status":
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
		if at := callsOmit(checked.NativeRep(), exprSrc); at >= 0 {
			d.add(exprOff+at, "omit() leaves a field out of the object a value builds; %s is a condition, which has no field to leave out: write true or false", name)
		}
	}
	if d.diags.HasErrors() {
		return nil, d.diags
	}
	return &condition{src: src, pos: ctx.Pos, p: p, name: name}, d.diags
}

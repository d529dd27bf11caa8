package gotmpl

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/notes"
	"github.com/orkspace/orkestra-cel/katalog"
)

// Structured conditions (`- field: spec.tier` / `equals: enterprise`) keep
// the original meaning: the field's value is formatted with %v ("" when
// missing or null) and compared as a string; numeric operators parse it
// with fmt.Sscanf("%f") (empty is 0). Each compiles to a CEL expression
// over the helpers of CELLibrary; a field or value written as a template
// is evaluated by this package with the same operator code.

// operators maps each canonical operator to whether it takes an operand.
var operators = map[string]bool{
	"equals": true, "notEquals": true,
	"contains": true, "notContains": true,
	"prefix": true, "notPrefix": true,
	"suffix": true, "notSuffix": true,
	"regex":  true,
	"exists": false, "notExists": false,
	"gt": true, "lt": true, "gte": true, "lte": true,
	"between": true, "notBetween": true,
	"in": true, "notIn": true,
	"typeOf": true, "typeMap": false, "typeList": false, "typeString": false,
	"typeNumber": false, "typeBool": false, "typeNull": false,
}

// isTemplate reports a legacy template (the original's test).
func isTemplate(s string) bool { return strings.Contains(s, "{{") }

// CompileStructured compiles structured conditions combined with AND
// (all=true, `when:`) or OR (all=false, `or:`). No condition always holds.
func (b *Backend) CompileStructured(conds []*katalog.Condition, all bool, ctx *engine.Context) (engine.Condition, katalog.Diagnostics) {
	var diags katalog.Diagnostics
	s := &Structured{all: all, pos: ctx.Pos}
	if len(conds) > 0 && conds[0] != nil && !conds[0].Pos.IsZero() {
		s.pos = conds[0].Pos
	}
	var celParts, descs []string
	for i, c := range conds {
		if c == nil {
			continue
		}
		field := fmt.Sprintf("%s[%d]", ctx.Field, i)
		if len(conds) == 1 {
			field = ctx.Field
		}
		g, d := b.structured(c, ctx, field)
		diags = append(diags, d...)
		if g == nil {
			continue
		}
		descs = append(descs, describeCondition(c))
		if g.timer != nil {
			s.timers = append(s.timers, g.timer)
		}
		if g.fieldT == nil && g.operandT == nil && b.cel != nil && !g.children() {
			celParts = append(celParts, g.cel)
			continue
		}
		s.goParts = append(s.goParts, g)
	}
	if diags.HasErrors() {
		return nil, diags
	}
	sep := " && "
	dsep := " and "
	if !all {
		sep, dsep = " || ", " or "
	}
	s.src = strings.Join(descs, dsep)
	if len(celParts) > 0 {
		src := celParts[0]
		if len(celParts) > 1 {
			src = "(" + strings.Join(celParts, ")"+sep+"(") + ")"
		}
		cctx := *ctx
		cctx.Pos = s.pos
		cond, d := b.cel.CompileCondition(src, &cctx)
		if d.HasErrors() {
			for _, e := range d.Errors() {
				diags = append(diags, katalog.Diagnostic{Pos: s.pos, Entry: ctx.Entry, Field: ctx.Field, Message: fmt.Sprintf(
					"internal: the CEL translation %s of this condition does not compile (%s); the CEL backend needs gotmpl.CELLibrary()", src, e.Message)})
			}
			return nil, diags
		}
		s.celSrc, s.celCond = src, cond
	}
	return s, diags
}

// structured checks one condition and prepares its evaluation.
func (b *Backend) structured(c *katalog.Condition, ctx *engine.Context, field string) (*goCond, katalog.Diagnostics) {
	var diags katalog.Diagnostics
	errorf := func(pos katalog.Pos, f, format string, args ...any) {
		diags = append(diags, katalog.Diagnostic{Pos: pos, Entry: ctx.Entry, Field: f, Message: fmt.Sprintf(format, args...)})
	}
	if c.Operator == "" {
		g, err := clockCond(c)
		if err != nil {
			errorf(c.FieldPos, field+".cron", "%v", err)
			return nil, diags
		}
		return g, diags
	}
	takesValue, ok := operators[c.Operator]
	if !ok {
		errorf(c.Pos, field, "unknown operator %q%s", c.Operator, katalog.DidYouMean(c.Operator, operatorNames()))
		return nil, diags
	}
	g := &goCond{op: c.Operator, negate: c.Negate, operand: c.Value}
	if !takesValue {
		g.operand = ""
	}
	// The field: a dot path or a template.
	if _, isType := typeOperatorName[c.Operator]; isType && isTemplate(c.Field) {
		errorf(c.FieldPos, field+".field", "%s tests the type of a field, but the field is a template, whose type is always a string; write a dot path such as spec.schedule (the original engine looked the template text up as a path and always saw null)", c.Operator)
		return nil, diags
	}
	if isTemplate(c.Field) {
		fctx := *ctx
		fctx.Field, fctx.Pos, fctx.AllowRandom = field+".field", quotedContent(c.FieldPos), false
		t, d := b.compile(c.Field, &fctx, forOperand)
		diags = append(diags, d...)
		g.fieldT = t
	} else {
		g.path = b.checkPath(c.Field, c.FieldPos, ctx, field+".field", &diags)
	}
	opField := field + "." + c.Operator
	if takesValue && isTemplate(c.Value) {
		vctx := *ctx
		vctx.Field, vctx.Pos, vctx.AllowRandom = opField, quotedContent(c.ValuePos), false
		t, d := b.compile(c.Value, &vctx, forOperand)
		diags = append(diags, d...)
		g.operandT = t
	} else {
		if msg := checkOperand(c.Operator, c.Value); msg != "" {
			errorf(c.ValuePos, opField, "%s", msg)
		}
		if c.Operator == "regex" {
			g.re, _ = regexp.Compile(c.Value)
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}
	if g.fieldT == nil && g.operandT == nil {
		src, err := conditionCEL(c.Operator, c.Field, c.Value, c.Negate)
		if err != nil {
			errorf(c.Pos, field, "%v", err)
			return nil, diags
		}
		g.cel = src
	}
	return g, diags
}

// quotedContent: a template in YAML must be quoted (a plain scalar cannot
// start with "{"), so its text starts one column after the node.
func quotedContent(p katalog.Pos) katalog.Pos { return p.Offset(1) }

// checkPath checks a condition's dot path against the schema.
func (b *Backend) checkPath(path string, pos katalog.Pos, ctx *engine.Context, field string, diags *katalog.Diagnostics) []string {
	errorf := func(off int, format string, args ...any) {
		*diags = append(*diags, katalog.Diagnostic{Pos: pos.Offset(off), Entry: ctx.Entry, Field: field, Message: fmt.Sprintf(format, args...)})
	}
	switch {
	case path == "":
		errorf(0, "the condition has an empty field; write a dot path such as spec.tier")
		return nil
	case strings.HasPrefix(path, "."):
		errorf(0, "field %s: condition fields have no leading dot; write %s (the original engine looked up an empty key and always saw an empty value)", path, strings.TrimLeft(path, "."))
		return nil
	}
	segs := strings.Split(path, ".")
	sh := b.root(ctx.Self)
	off := 0
	for i, seg := range segs {
		if seg == "" {
			errorf(off, "field %s has an empty step; write a dot path such as spec.tier", path)
			return nil
		}
		if i == 0 && seg == "children" && !strings.HasPrefix(ctx.Field, "conversion.") {
			sh = shape{children: true, path: "children"}
			off += len(seg) + 1
			continue
		}
		next, prob := child(sh, seg, ctx.SelfVersion)
		if prob != nil {
			written := strings.Join(segs[:i+1], ".")
			switch {
			case prob.kind == unknownField && liveRoots[segs[0]]:
				errorf(off, "unknown field %s: %s", written, liveProblem(prob.msg, ctx.SelfVersion))
			case prob.kind == unknownField:
				errorf(off, "unknown field %s: %s", written, prob.msg)
			case prob.kind == noFields && sh.s != nil && sh.s.Type == "array":
				errorf(off, "%s: %s is a list; a condition field cannot reach inside a list (the original engine always saw an empty value there)", written, sh.path)
			case prob.kind == noFields:
				errorf(off, "%s: %s", written, prob.msg)
			default:
				errorf(off, "%s", prob.msg)
			}
			return nil
		}
		sh = next
		off += len(seg) + 1
	}
	return segs
}

// checkOperand rejects static operands that could never work: the original
// engine treated them as always false (an invalid regex, a non-numeric
// bound), which is a katalog bug.
func checkOperand(op, v string) string {
	switch op {
	case "exists", "notExists":
		if v != "" && v != "true" {
			return fmt.Sprintf("%s: %s does not negate: the original engine still tested exists; write notExists: true, exists: true, or add negate: true", op, v)
		}
	case "regex":
		if _, err := regexp.Compile(v); err != nil {
			return fmt.Sprintf("regex %q does not compile (%v); the original engine treated the condition as always false", v, err)
		}
	case "gt", "lt", "gte", "lte":
		if _, err := parseLegacyFloat(v); err != nil {
			return fmt.Sprintf("%s compares numbers, but %q is not a number; write a number such as \"3\" (the original engine treated the condition as always false)", op, v)
		}
	case "between", "notBetween":
		if _, _, ok := parseBetween(v); !ok {
			return fmt.Sprintf("%s takes \"min,max\" (two numbers), got %q (the original engine treated the condition as always false)", op, v)
		}
	case "typeOf":
		if !typeNames[v] {
			return fmt.Sprintf("typeOf compares with a type name: string, number, bool, map, slice or null, got %q (the original engine never matched it)", v)
		}
	}
	return ""
}

func operatorNames() []string {
	names := make([]string, 0, len(operators))
	for k := range operators {
		names = append(names, k)
	}
	return names
}

func describeCondition(c *katalog.Condition) string {
	switch {
	case c.Time != nil:
		return fmt.Sprintf("time after %q before %q", c.Time.After, c.Time.Before)
	case c.DayOfWeek != nil:
		return "dayOfWeek " + dayOfWeekCEL(c.DayOfWeek)
	case c.Cron != "":
		return fmt.Sprintf("cron %q for %v", c.Cron, c.Duration)
	}
	d := c.Field + " " + c.Operator
	if operators[c.Operator] {
		d += " " + strconv.Quote(c.Value)
	}
	if c.Negate {
		d = "not (" + d + ")"
	}
	return d
}

// ── evaluation ──────────────────────────────────────────────────────────────

// Structured is compiled structured conditions: a CEL program for the
// conditions on dot paths, and conditions on templates evaluated here.
type Structured struct {
	// timers of the clock conditions among the parts.
	timers  []timer
	src     string
	pos     katalog.Pos
	all     bool
	celSrc  string
	celCond engine.Condition
	goParts []*goCond
}

func (s *Structured) Eval(sc *engine.Scope) (bool, error) {
	if s.celCond != nil {
		ok, err := s.celCond.Eval(sc)
		if err != nil {
			return false, err
		}
		if ok != s.all {
			return ok, nil // AND: a false part decides; OR: a true part does
		}
	}
	for _, g := range s.goParts {
		if g.eval(sc) != s.all {
			return !s.all, nil
		}
	}
	return s.all || (s.celCond == nil && len(s.goParts) == 0), nil
}

// NextChange implements engine.Timed for conditions that read the clock.
func (s *Structured) NextChange(now time.Time) time.Time { return nextChange(now, s.timers) }

// ReadsClock implements engine.Timed.
func (s *Structured) ReadsClock() bool { return len(s.timers) > 0 }

// Source describes the conditions as written.
func (s *Structured) Source() string   { return s.src }
func (s *Structured) Pos() katalog.Pos { return s.pos }

// CEL returns the CEL source the conditions on dot paths compiled to ("" when
// none did).
func (s *Structured) CEL() string { return s.celSrc }

// goCond is one condition evaluated in Go.
type goCond struct {
	// clock: a clock condition, true at now; timer: when it may change.
	clock    func(now time.Time) bool
	timer    timer
	op       string
	negate   bool
	path     []string  // a dot path
	fieldT   *Template // or a template field
	operand  string
	operandT *Template
	re       *regexp.Regexp
	cel      string
}

// children: the condition reads the CR's children or a live input (.cross,
// .external), which the CEL programs of conditions do not see; it is
// evaluated here.
func (g *goCond) children() bool {
	return len(g.path) > 0 && (g.path[0] == "children" || liveRoots[g.path[0]])
}

func (g *goCond) eval(s *engine.Scope) bool {
	r := g.test(s)
	if g.negate {
		return !r
	}
	return r
}

func (g *goCond) test(s *engine.Scope) bool {
	if g.clock != nil {
		return g.clock(engine.Now())
	}
	if want, isType := typeOperatorName[g.op]; isType {
		if g.op == "typeOf" {
			want = g.operand
		}
		v, _ := lookup(dataFor(s, g.children()), g.path)
		return notes.TypeOf(v) == want
	}
	expected := g.operand
	if g.operandT != nil {
		// As the original: when the value template fails, the raw text is
		// compared.
		if out, err := g.operandT.render(s); err == nil {
			expected = out
		} else {
			expected = g.operandT.src
		}
	}
	var fieldVal string
	if g.fieldT != nil {
		out, err := g.fieldT.render(s)
		if err != nil {
			return false // as the original: a failing field template fails the condition
		}
		fieldVal = out
	} else {
		fieldVal = fieldString(dataFor(s, g.children()), g.path)
	}
	re := g.re
	if g.op == "regex" && g.operandT != nil {
		re, _ = regexp.Compile(expected)
	}
	return applyOperator(g.op, fieldVal, expected, re)
}

// fieldString is the original NavigateDotPath: the %v of the value at path,
// "" when any step is missing, not a map, or the value is null.
func fieldString(obj map[string]any, path []string) string {
	v, ok := lookup(obj, path)
	if !ok {
		return ""
	}
	return formatField(v)
}

func formatField(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	return fmt.Sprintf("%v", v)
}

// applyOperator is the original operator semantics on strings. re is the
// compiled regex for "regex" (nil: the pattern did not compile).
func applyOperator(op, fieldVal, expected string, re *regexp.Regexp) bool {
	switch op {
	case "exists":
		return fieldVal != "" && fieldVal != "<no value>"
	case "notExists":
		return fieldVal == "" || fieldVal == "<no value>"
	case "equals":
		return fieldVal == expected
	case "notEquals":
		return fieldVal != expected
	case "contains":
		return strings.Contains(fieldVal, expected)
	case "notContains":
		return !strings.Contains(fieldVal, expected)
	case "prefix":
		return strings.HasPrefix(fieldVal, expected)
	case "notPrefix":
		return !strings.HasPrefix(fieldVal, expected)
	case "suffix":
		return strings.HasSuffix(fieldVal, expected)
	case "notSuffix":
		return !strings.HasSuffix(fieldVal, expected)
	case "regex":
		return re != nil && re.MatchString(fieldVal)
	case "gt", "lt", "gte", "lte":
		ev, err := parseLegacyFloat(expected)
		if err != nil {
			return false
		}
		return compareLegacy(op, fieldVal, ev)
	case "in", "notIn":
		found := false
		for _, item := range splitList(expected) {
			if item == fieldVal {
				found = true
				break
			}
		}
		return found == (op == "in")
	case "between", "notBetween":
		lo, hi, ok := parseBetween(expected)
		if !ok {
			return false
		}
		return betweenLegacy(op == "between", fieldVal, lo, hi)
	}
	return false
}

// compareLegacy compares a field's string numerically with ev: an absent or
// unparsable field is 0; NaN compares false.
func compareLegacy(op, fieldVal string, ev float64) bool {
	fv, _ := parseLegacyFloat(fieldVal)
	switch op {
	case "gt":
		return fv > ev
	case "lt":
		return fv < ev
	case "gte":
		return fv >= ev
	case "lte":
		return fv <= ev
	}
	return false
}

// betweenLegacy tests lo <= field <= hi (inside) or field < lo || field > hi
// (outside); a field that does not parse is neither.
func betweenLegacy(inside bool, fieldVal string, lo, hi float64) bool {
	fv, err := parseLegacyFloat(fieldVal)
	if err != nil {
		return false
	}
	if inside {
		return fv >= lo && fv <= hi
	}
	return fv < lo || fv > hi
}

// parseLegacyFloat is the original typeParseFloat: "" is 0, otherwise
// fmt.Sscanf("%f") — leading spaces skipped, trailing text ignored ("10abc"
// is 10), "inf" and "NaN" accepted, hex not.
func parseLegacyFloat(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	var f float64
	_, err := fmt.Sscanf(s, "%f", &f)
	return f, err
}

// splitList splits a comma list, trimming spaces and tabs from each item.
func splitList(s string) []string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		parts[i] = strings.Trim(p, " \t")
	}
	return parts
}

// parseBetween parses "min,max" (exactly two numbers, both inclusive).
func parseBetween(s string) (lo, hi float64, ok bool) {
	parts := strings.Split(s, ",")
	if len(parts) != 2 {
		return 0, 0, false
	}
	var err error
	if lo, err = parseLegacyFloat(strings.Trim(parts[0], " \t")); err != nil {
		return 0, 0, false
	}
	if hi, err = parseLegacyFloat(strings.Trim(parts[1], " \t")); err != nil {
		return 0, 0, false
	}
	return lo, hi, true
}

// ── translation to CEL ──────────────────────────────────────────────────────

// ConditionCEL translates one structured condition whose field is a dot path
// and whose value is not a template into CEL over the CELLibrary helpers:
// `legacy.str(self, 'spec.tier') == 'enterprise'`. The migrate translator
// starts from it.
func ConditionCEL(c *katalog.Condition) (string, error) {
	if c.Operator == "" {
		g, err := clockCond(c)
		if err != nil {
			return "", err
		}
		return g.cel, nil
	}
	if isTemplate(c.Field) || isTemplate(c.Value) {
		return "", fmt.Errorf("the condition uses a template; it has no direct CEL form")
	}
	if _, ok := operators[c.Operator]; !ok {
		return "", fmt.Errorf("unknown operator %q", c.Operator)
	}
	if msg := checkOperand(c.Operator, c.Value); msg != "" {
		return "", fmt.Errorf("%s", msg)
	}
	return conditionCEL(c.Operator, c.Field, c.Value, c.Negate)
}

func conditionCEL(op, path, v string, negate bool) (string, error) {
	s := "legacy.str(self, " + celString(path) + ")"
	var e string
	kind := op
	if _, isType := typeOperatorName[op]; isType {
		kind = "type"
	}
	switch kind {
	case "type":
		e = typeCondCEL(op, path, v)
	case "equals":
		e = s + " == " + celString(v)
	case "notEquals":
		e = s + " != " + celString(v)
	case "contains":
		e = s + ".contains(" + celString(v) + ")"
	case "notContains":
		e = "!" + s + ".contains(" + celString(v) + ")"
	case "prefix":
		e = s + ".startsWith(" + celString(v) + ")"
	case "notPrefix":
		e = "!" + s + ".startsWith(" + celString(v) + ")"
	case "suffix":
		e = s + ".endsWith(" + celString(v) + ")"
	case "notSuffix":
		e = "!" + s + ".endsWith(" + celString(v) + ")"
	case "regex":
		e = s + ".matches(" + celString(v) + ")"
	case "exists":
		e = "!(" + s + " in ['', '<no value>'])"
	case "notExists":
		e = s + " in ['', '<no value>']"
	case "gt", "lt", "gte", "lte":
		f, err := parseLegacyFloat(v)
		if err != nil {
			return "", fmt.Errorf("%s needs a number, got %q", op, v)
		}
		e = "legacy." + op + "(" + s + ", " + celDouble(f) + ")"
	case "between", "notBetween":
		lo, hi, ok := parseBetween(v)
		if !ok {
			return "", fmt.Errorf("%s needs \"min,max\", got %q", op, v)
		}
		e = "legacy." + op + "(" + s + ", " + celDouble(lo) + ", " + celDouble(hi) + ")"
	case "in", "notIn":
		items := splitList(v)
		q := make([]string, len(items))
		for i, it := range items {
			q[i] = celString(it)
		}
		e = s + " in [" + strings.Join(q, ", ") + "]"
		if op == "notIn" {
			e = "!(" + e + ")"
		}
	default:
		return "", fmt.Errorf("unknown operator %q", op)
	}
	if negate {
		e = "!(" + e + ")"
	}
	return e, nil
}

// celString quotes s as a CEL string literal.
func celString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\'':
			b.WriteString(`\'`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// celDouble writes f as a CEL double literal.
func celDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "double('NaN')"
	case math.IsInf(f, 1):
		return "double('Infinity')"
	case math.IsInf(f, -1):
		return "double('-Infinity')"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

package engine

import (
	"fmt"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/katalog"
)

// Admission is what an entry asks the API server to enforce: its validation
// rules and mutations, compiled at load into the Kubernetes CEL dialect (no
// orkestra functions), over self as CRD validation rules see it.
type Admission struct {
	Rules     []*AdmissionRule
	Mutations []*Mutation
}

// AdmissionRule must hold for an object to be admitted.
type AdmissionRule struct {
	Source *katalog.ValidationRule
	// Expr is a CEL boolean over self (the object), and where the rule reads
	// them oldSelf (the old object, updates only) and request.
	Expr    string
	Message string
	Warn    bool
	// FieldPath is the JSON path of the field a structured rule tests
	// (".spec.image"), "" for CEL rules.
	FieldPath string
	// ReadsRequest: the rule reads request, which only a policy can see.
	ReadsRequest bool
	// ReadsOld: the rule reads oldSelf (a transition rule).
	ReadsOld bool
}

// Mutation sets Path at admission: always (Override), or when the field is
// absent — or, for a string field, empty, as upstream did.
type Mutation struct {
	Source   *katalog.MutationRule
	Path     []string
	Override bool
	// Value is the typed literal; Expr a CEL expression over object when
	// the value was written in CEL (${…}).
	Value any
	Expr  string
	// EmptyString: the field holds strings, so "" counts as absent.
	EmptyString bool
}

// StructuredCEL translates a structured condition into a Kubernetes CEL
// boolean over self, exactly, or says why it cannot (the legacy adapter
// implements it).
type StructuredCEL interface {
	TranslateStructuredCEL(c *katalog.Condition, ctx *Context) (string, error)
}

// admission compiles an entry's admission rules.
func (c *compiler) admission(sc compileScope) *Admission {
	a := sc.entry.Admission
	if a == nil {
		return nil
	}
	out := &Admission{}
	for _, r := range a.Validation {
		if ar := c.admissionRule(sc, r); ar != nil {
			out.Rules = append(out.Rules, ar)
		}
	}
	for _, m := range a.Mutation {
		if mu := c.mutation(sc, m); mu != nil {
			out.Mutations = append(out.Mutations, mu)
		}
	}
	return out
}

func (c *compiler) admissionRule(sc compileScope, r *katalog.ValidationRule) *AdmissionRule {
	ar := &AdmissionRule{Source: r, Message: r.Message, Warn: r.Warn}
	ctx := sc.context(CEL, r.Path, r.Pos, c.opts.CostLimit)
	if r.CEL != nil {
		ar.Expr = strings.TrimSpace(r.CEL.Str)
		ctx.Field, ctx.Pos = r.Path+".rule", r.CEL.ContentPos()
		ctx.Vars = []Var{{Name: "oldSelf", Schema: sc.self}, {Name: "request"}}
		ar.ReadsRequest, ar.ReadsOld = mentions(ar.Expr, "request"), mentions(ar.Expr, "oldSelf")
	} else {
		var pruned []string
		if f := r.Condition.Field; !strings.Contains(f, "{{") && f != "" {
			parent, p := walkSchema(sc.self, strings.Split(f, "."), true)
			if p != nil && (PrunedPath(sc.self, p) == nil || katalog.DidYouMean(p[len(p)-1], PropertyNames(parent)) != "") {
				// metadata (never pruned), or misspelt rather than left out
				c.notInSchema(sc, r.Condition.FieldPos, r.Path+".field", p, parent)
				return nil
			}
			pruned = p
		}
		tr, ok := c.b.Legacy.(StructuredCEL)
		if !ok {
			c.errorf(sc, r.Pos, r.Path, "structured validation rules need the legacy adapter, which is not enabled in this build; write the rule in CEL (rule:)")
			return nil
		}
		expr, err := tr.TranslateStructuredCEL(r.Condition, ctx)
		if err != nil {
			c.errorf(sc, r.Condition.Pos, r.Path, "this condition has no exact form in the API server's CEL (%v); write the rule in CEL (rule: \"…\")", err)
			return nil
		}
		ar.Expr = expr
		if pruned != nil {
			return c.prunedRule(sc, r, ar, pruned)
		}
		if !strings.Contains(r.Condition.Field, "{{") {
			ar.FieldPath = "." + r.Condition.Field
		}
		if op := r.Condition.Operator; op == "gt" || op == "lt" {
			c.warnf(sc, r.Condition.Pos, r.Path, "%s is a strict comparison here; the original's admission check let an equal value through (it tested >= and <=); write gte/lte for that", op)
		}
	}
	var extra []string
	if x, ok := c.b.CEL.(interface{ ExtraFunctions() []string }); ok {
		extra = x.ExtraFunctions()
	}
	for _, fn := range extra {
		if calls(ar.Expr, fn) {
			c.errorf(sc, ctx.Pos, ctx.Field, "%s is a function of this runtime's CEL, which the API server's CEL does not have; admission rules run in the API server", fn)
			return nil
		}
	}
	cond, diags := c.b.CEL.CompileCondition(ar.Expr, ctx)
	c.diags = append(c.diags, diags...)
	c.exprs++
	if cond == nil {
		return nil
	}
	return ar
}

// prunedRule is a structured rule on a field the schema does not declare:
// the API server prunes it before admission, so the rule always sees it
// absent and its outcome is fixed (the translator gives true or false).
// Upstream's webhook and reconciler saw the pruned object too, so a rule
// that always fails denied (or warned on) every object there as well: the
// same here, with a warning at load; one that always holds is left out.
func (c *compiler) prunedRule(sc compileScope, r *katalog.ValidationRule, ar *AdmissionRule, pruned []string) *AdmissionRule {
	field := strings.Join(pruned, ".")
	why := fmt.Sprintf("%s is not in the schema of %s, so the API server prunes it from every object before this rule runs, and the rule always sees %s absent", field, sc.selfVersion, r.Condition.Field)
	fix := "declare the field in the CRD's schema (or x-kubernetes-preserve-unknown-fields: true above it)"
	switch ar.Expr {
	case "true":
		c.warnf(sc, r.Condition.FieldPos, r.Path+".field", "%s: it never fails, so it is left out; %s", why, fix)
		return nil
	case "false":
		what := "denies every object"
		if r.Warn {
			what = "warns on every object"
		}
		c.warnf(sc, r.Condition.FieldPos, r.Path+".field", "%s: it %s, as it did upstream (whose webhook and reconciler saw the pruned object too); %s", why, what, fix)
		return ar
	}
	c.schemaAt(sc, pruned, r.Condition.FieldPos, r.Path+".field")
	return nil
}

func (c *compiler) mutation(sc compileScope, m *katalog.MutationRule) *Mutation {
	field := m.Path + ".field"
	path := strings.Split(strings.TrimPrefix(m.Field, "."), ".")
	if path[0] != "spec" && path[0] != "metadata" {
		c.errorf(sc, m.FieldPos, field, "a mutation sets a field under spec (or metadata), got %s", m.Field)
		return nil
	}
	s, ok := c.schemaAt(sc, path, m.FieldPos, field)
	if !ok {
		return nil
	}
	if s == nil && m.ValueType != "" {
		s = typeHint(m.ValueType)
	}
	mu := &Mutation{Source: m, Path: path, Override: m.Override, EmptyString: s == nil || s.Type == "string"}
	valueField := m.Path + map[bool]string{true: ".override", false: ".default"}[m.Override]
	switch Classify(m.Value.Str) {
	case Legacy, Mixed:
		c.errorf(sc, m.Value.Pos, valueField, "a mutation value is a literal or a CEL expression over object (${…}); a legacy template has no form the API server runs")
		return nil
	case CEL:
		mu.Expr = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(m.Value.Str), "${"), "}")
		if !strings.HasPrefix(strings.TrimSpace(m.Value.Str), "${") || strings.Count(m.Value.Str, "${") != 1 {
			c.errorf(sc, m.Value.Pos, valueField, "a CEL mutation value is one ${…} expression over object")
			return nil
		}
		return mu
	}
	v, msg := literalFor(m.Value.Scalar, fmt.Sprint(m.Value.Plain()), s)
	if msg != "" {
		c.errorf(sc, m.Value.Pos, valueField, "%s %s", m.Field, msg)
		return nil
	}
	mu.Value = v
	return mu
}

// schemaAt walks path in the entry's schema; nil (and ok) below a field
// without a schema; an unknown field is an error at pos.
func (c *compiler) schemaAt(sc compileScope, path []string, pos katalog.Pos, field string) (*structuralschema.Structural, bool) {
	s, pruned := walkSchema(sc.self, path, false)
	if pruned != nil {
		c.notInSchema(sc, pos, field, pruned, s)
		return nil, false
	}
	return s, true
}

// notInSchema reports path, whose last step parent does not declare.
func (c *compiler) notInSchema(sc compileScope, pos katalog.Pos, field string, path []string, parent *structuralschema.Structural) {
	c.errorf(sc, pos, field, "%s is not in the schema of %s%s", strings.Join(path, "."), sc.selfVersion, katalog.DidYouMean(path[len(path)-1], PropertyNames(parent)))
}

// walkSchema walks path in s: the schema at its end (nil below a field
// without a schema), or, when a step is not declared where the schema
// keeps no unknown fields, the path up to that step and the schema that
// lacks it. kept: what the API server keeps counts as declared — a key of
// a map (additionalProperties), a field below x-kubernetes-preserve-unknown-
// fields beside declared ones.
func walkSchema(s *structuralschema.Structural, path []string, kept bool) (at *structuralschema.Structural, pruned []string) {
	for i, seg := range path {
		if s == nil || s.XPreserveUnknownFields && len(s.Properties) == 0 {
			return nil, nil
		}
		next := property(s, seg)
		if next == nil {
			if i == 1 && path[0] == "metadata" {
				return &structuralschema.Structural{Generic: structuralschema.Generic{Type: "string"}}, nil
			}
			if kept && s.XPreserveUnknownFields {
				return nil, nil
			}
			if ap := s.AdditionalProperties; kept && ap != nil && (ap.Bool || ap.Structural != nil) {
				s = ap.Structural
				continue
			}
			return s, path[:i+1]
		}
		s = next
	}
	return s, nil
}

// PrunedPath is the part of path the schema s does not declare (nil when it
// declares it, or keeps unknown fields there): the API server prunes it from
// every object before admission and storage, so it is always absent. It
// never prunes apiVersion, kind or metadata, whatever the schema says.
func PrunedPath(s *structuralschema.Structural, path []string) []string {
	_, pruned := walkSchema(s, path, true)
	if len(pruned) > 0 && (pruned[0] == "apiVersion" || pruned[0] == "kind" || pruned[0] == "metadata") {
		return nil
	}
	return pruned
}

// mentions reports whether ident appears in src as a name.
func mentions(src, ident string) bool {
	for i := strings.Index(src, ident); i >= 0; {
		before := i == 0 || !isIdentByte(src[i-1]) && src[i-1] != '.'
		after := i+len(ident) == len(src) || !isIdentByte(src[i+len(ident)])
		if before && after {
			return true
		}
		j := strings.Index(src[i+1:], ident)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// calls reports whether src calls fn: fn, not part of a longer name nor a
// field (object.spec is not a call of spec), followed by "(".
func calls(src, fn string) bool {
	for i := 0; ; {
		j := strings.Index(src[i:], fn)
		if j < 0 {
			return false
		}
		j += i
		before := j == 0 || !isIdentByte(src[j-1]) && src[j-1] != '.'
		if before && strings.HasPrefix(strings.TrimLeft(src[j+len(fn):], " \t\n"), "(") {
			return true
		}
		i = j + 1
	}
}

func isIdentByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

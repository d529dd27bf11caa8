// Package migrate moves a katalog from legacy text/template values and
// structured conditions to CEL, with a proof.
//
// Run loads and compiles the katalog with the real backends, recording the
// context (schema of self, target type, coercion, random allowed) of every
// legacy template and structured condition the compiler meets. Each is
// translated by gotmpl.TranslateValue, TranslateCondition or
// TranslateStructured and the translation compiled at the same context.
// Before anything is written, every old and new expression is evaluated on
// the katalog's sample objects (crFiles and extra samples) and on objects
// generated from the schema (objgen, with edge-case variants), comparing
// the final typed outputs, absence and failure. The rewritten files keep
// every byte the migration does not touch: each translated scalar is
// spliced into the original text at the position yaml.v3 reports, and the
// result is parsed again and compared with the edited node tree.
package migrate

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	celgo "github.com/google/cel-go/cel"
	"gopkg.in/yaml.v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/engine"
	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/gotmpl"
	"github.com/orkspace/orkestra-cel/katalog"
)

// DefaultCount is the number of objects generated per schema.
const DefaultCount = 200

// Options configure a migration.
type Options struct {
	// Files is the katalog: files or directories, as katalog.Load takes;
	// Load says where entries without crdFile find their CRD.
	Files []string
	Load  katalog.Options
	// Samples are extra custom resources (YAML or JSON, several documents
	// per file) to verify against, besides the entries' crFiles.
	Samples []string
	// Count is the number of objects generated per schema (0:
	// DefaultCount; negative: none).
	Count int
	// Seed selects the generated objects (0: 1).
	Seed int64
	// CostLimit is the static CEL cost limit (0: the backend's default).
	CostLimit uint64
	// translate replaces the translator (tests inject wrong translations).
	translate func(it *Item, def string) string
}

// Kind of an item.
type Kind string

const (
	Value      Kind = "value"     // a string value: `{{ … }}` → `${…}`
	Condition  Kind = "condition" // a `when:` template → a CEL condition
	Structured Kind = "structured"
)

// Item is one legacy template or structured condition.
type Item struct {
	Kind  Kind
	Pos   katalog.Pos
	Entry string
	Field string
	// Legacy is the template as written, or the structured condition
	// described (`spec.tier equals "gold"`).
	Legacy string
	// CEL is the translation; "" when the item stays legacy.
	CEL string
	// Reason says why the item stays legacy; ReasonPos is where in the
	// template the reason applies.
	Reason    string
	ReasonPos katalog.Pos
	// Idiomatic: a structured condition translated to plain CEL over the
	// field's type (else the legacy.* helper form).
	Idiomatic bool
	// Random: the translation draws random values (compared by shape).
	Random bool
	// Rewritten is the legacy template of an item left legacy, with every
	// `default VALUE LITERAL` in the pipe form `VALUE | default LITERAL`,
	// which every release of the original engine reads alike; "" when it
	// has none.
	Rewritten string

	rec  *record
	cond *katalog.Condition
	node *yaml.Node
	old  evaluator
	new  evaluator
}

// Mismatch is an object on which a translation and its legacy original
// disagree.
type Mismatch struct {
	Item *Item
	// Object is the smallest differing object found (objgen.Shrink).
	Object map[string]any
	// Source names where the object came from: a sample file or
	// "generated #i".
	Source      string
	Legacy, CEL string
	// Defaulted: the outputs are of the object after the API server's
	// defaulting (as the operator sees it).
	Defaulted bool
	// Invalid says why the object is not valid for the CRD's schema (a
	// sample the API server would reject), "" when it is valid.
	Invalid string
	// At is the time the expressions were evaluated at, for expressions
	// that read the clock (zero otherwise).
	At time.Time
}

// readsClock: the item's legacy form depends on the clock.
func (it *Item) readsClock() bool {
	var x any
	switch o := it.old.(type) {
	case exprEval:
		x = o.e
	case condEval:
		x = o.c
	}
	t, ok := x.(engine.Timed)
	return ok && t.ReadsClock()
}

// Result is a migration, not yet written.
type Result struct {
	Katalog *katalog.Katalog
	// Files are the katalog's files, rewritten.
	Files []*File
	// Translated and Left are the items, in katalog order.
	Translated []*Item
	Left       []*Item
	// Objects is the number of objects verified against; Evaluations the
	// number of old/new comparisons.
	Objects     int
	Evaluations int
	Mismatches  []*Mismatch
	// Check holds the problems `orkestra check` finds in the migrated
	// katalog (none, unless something is wrong with this tool).
	Check katalog.Diagnostics
	// Notes are remarks for the report (apiVersion kept, …).
	Notes []string
}

// File is one katalog file.
type File struct {
	Path     string
	Original []byte
	Migrated []byte
}

// Changed reports whether the migration changed the file.
func (f *File) Changed() bool { return string(f.Original) != string(f.Migrated) }

// Equivalent reports whether every translation was proven.
func (r *Result) Equivalent() bool { return len(r.Mismatches) == 0 }

// record is one legacy compile call the engine made.
type record struct {
	kind  Kind
	src   string
	ctx   engine.Context
	expr  engine.Expr
	cond  engine.Condition
	conds []*katalog.Condition
}

// recorder is the legacy backend engine.Compile sees: the real one,
// remembering every call and its context.
type recorder struct {
	inner *gotmpl.Backend
	recs  []*record
}

// WithNotes gives the katalog's notes to the real backend and keeps
// recording.
func (r *recorder) WithNotes(notes []*katalog.Note) (engine.LegacyBackend, katalog.Diagnostics) {
	nb, d := r.inner.WithNotes(notes)
	r.inner = nb.(*gotmpl.Backend)
	return r, d
}

// TranslateStructuredCEL lets admission rules compile as they do outside
// migrate (they run as the API server's CEL and are not migrated).
func (r *recorder) TranslateStructuredCEL(c *katalog.Condition, ctx *engine.Context) (string, error) {
	return r.inner.TranslateStructuredCEL(c, ctx)
}

// The recorder stands in for the legacy backend, optional interfaces included.
var (
	_ engine.StructuredCEL = (*recorder)(nil)
	_ engine.NotesBackend  = (*recorder)(nil)
)

func (r *recorder) CompileValue(src string, ctx *engine.Context) (engine.Expr, katalog.Diagnostics) {
	e, d := r.inner.CompileValue(src, ctx)
	r.recs = append(r.recs, &record{kind: Value, src: src, ctx: *ctx, expr: e})
	return e, d
}

func (r *recorder) CompileCondition(src string, ctx *engine.Context) (engine.Condition, katalog.Diagnostics) {
	c, d := r.inner.CompileCondition(src, ctx)
	r.recs = append(r.recs, &record{kind: Condition, src: src, ctx: *ctx, cond: c})
	return c, d
}

func (r *recorder) CompileStructured(conds []*katalog.Condition, all bool, ctx *engine.Context) (engine.Condition, katalog.Diagnostics) {
	c, d := r.inner.CompileStructured(conds, all, ctx)
	r.recs = append(r.recs, &record{kind: Structured, ctx: *ctx, cond: c, conds: conds})
	return c, d
}

// Backends builds the CEL backend (with the legacy helper library) and
// the legacy adapter, as `orkestra check` does.
func Backends(costLimit uint64) (*celengine.Backend, *gotmpl.Backend, error) {
	cel, err := celengine.New(celengine.Options{CostLimit: costLimit, Libraries: []celgo.EnvOption{gotmpl.CELLibrary()}})
	if err != nil {
		return nil, nil, fmt.Errorf("building the CEL environment: %w", err)
	}
	return cel, gotmpl.New(cel), nil
}

// ProblemsError is a katalog that does not load or compile.
type ProblemsError struct {
	What  string
	Diags katalog.Diagnostics
}

func (e *ProblemsError) Error() string {
	return e.What + ":\n" + e.Diags.Error()
}

// Run plans the migration and proves it; it writes nothing.
func Run(opts Options) (*Result, error) {
	k, diags := katalog.LoadWith(opts.Load, opts.Files...)
	if diags.HasErrors() {
		return nil, &ProblemsError{What: "the katalog does not load; fix it first", Diags: diags.Errors()}
	}
	cel, legacy, err := Backends(opts.CostLimit)
	if err != nil {
		return nil, err
	}
	rec := &recorder{inner: legacy}
	_, cdiags := engine.Compile(k, engine.Backends{CEL: cel, Legacy: rec}, engine.CompileOptions{CostLimit: opts.CostLimit})
	if cdiags.HasErrors() {
		return nil, &ProblemsError{What: "the katalog does not check (orkestra check); fix it first", Diags: cdiags.Errors()}
	}
	m := &migration{opts: opts, k: k, cel: cel, legacy: rec.inner, res: &Result{Katalog: k}}
	m.indexNodes()
	m.indexSchemas()
	for _, r := range rec.recs {
		m.translate(r)
	}
	m.settleShared()
	if err := m.verify(); err != nil {
		return nil, err
	}
	if err := m.rewrite(); err != nil {
		return nil, err
	}
	m.check()
	m.res.Notes = append(m.res.Notes, fmt.Sprintf("apiVersion kept (%s): it accepts CEL values as well as legacy templates", k.APIVersion))
	return m.res, nil
}

type migration struct {
	opts   Options
	k      *katalog.Katalog
	cel    *celengine.Backend
	legacy *gotmpl.Backend
	res    *Result
	items  []*Item
	// scalars by the position of their content, mappings by their own.
	scalars  map[katalog.Pos]*yaml.Node
	mappings map[katalog.Pos]*yaml.Node
	// schemas: what each `self` schema is (for generation and scope).
	schemas map[*structuralschema.Structural]*schemaInfo
	// views: the children views of each children schema (childrenViews).
	views map[*structuralschema.Structural][]map[string]any
}

func (m *migration) translate(r *record) {
	opts := gotmpl.TranslateOptions{Namespaced: m.namespaced(m.objectSchema(&r.ctx)), Defaulted: defaulted(&r.ctx), Notes: m.notes()}
	switch r.kind {
	case Value, Condition:
		it := &Item{Kind: r.kind, Pos: r.ctx.Pos, Entry: r.ctx.Entry, Field: r.ctx.Field, Legacy: r.src, rec: r}
		it.node = m.scalars[r.ctx.Pos]
		var out string
		var err error
		if r.kind == Value {
			out, err = gotmpl.TranslateValue(r.src, &r.ctx, opts)
			it.old = exprEval{r.expr}
		} else {
			out, err = gotmpl.TranslateCondition(r.src, &r.ctx, opts)
			it.old = condEval{r.cond}
		}
		m.settle(it, out, err)
	case Structured:
		for i, c := range r.conds {
			ctx := r.ctx
			ctx.Pos = c.Pos
			if len(r.conds) > 1 {
				ctx.Field = fmt.Sprintf("%s[%d]", r.ctx.Field, i)
			}
			it := &Item{Kind: Structured, Pos: c.Pos, Entry: ctx.Entry, Field: ctx.Field, Legacy: describe(c), rec: &record{kind: Structured, ctx: ctx, conds: []*katalog.Condition{c}}, cond: c}
			it.node = m.mappings[c.Pos]
			old, d := m.legacy.CompileStructured([]*katalog.Condition{c}, true, &ctx)
			if d.HasErrors() {
				m.leave(it, 0, "the condition alone does not compile: "+d.Errors()[0].Message)
				continue
			}
			it.old = condEval{old}
			out, idiomatic, err := gotmpl.TranslateStructured(c, &ctx, opts)
			it.Idiomatic = idiomatic
			m.settle(it, out, err)
		}
	}
}

// settle compiles a translation at the item's context, or leaves the item
// legacy with the reason.
func (m *migration) settle(it *Item, out string, err error) {
	m.items = append(m.items, it)
	if err != nil {
		off := 0
		if u, ok := err.(*gotmpl.Untranslatable); ok {
			off = u.Offset
		}
		m.leave(it, off, err.Error())
		return
	}
	if m.opts.translate != nil {
		out = m.opts.translate(it, out)
	}
	if it.node == nil {
		if slices.Contains(m.k.Included, it.Pos.File) {
			m.leave(it, 0, "it is in "+it.Pos.File+", a file the katalog includes (a motif or an include: fragment), which migrate does not rewrite; it keeps working as a template")
			return
		}
		m.leave(it, 0, "internal: the YAML node of this value was not found, so it cannot be rewritten in place")
		return
	}
	ctx := it.rec.ctx
	var d katalog.Diagnostics
	if it.Kind == Value {
		var e engine.Expr
		e, d = m.cel.CompileValue(out, &ctx)
		it.new = exprEval{e}
	} else {
		var c engine.Condition
		c, d = m.cel.CompileCondition(out, &ctx)
		it.new = condEval{c}
	}
	if d.HasErrors() {
		msg := d.Errors()[0].Message
		m.leave(it, 0, fmt.Sprintf("its CEL form %s does not compile: %s", out, msg))
		return
	}
	it.CEL = out
	it.Random = usesRandom(out)
}

// notes are the katalog's user-defined functions, inlined by translations.
func (m *migration) notes() map[string]string {
	if len(m.k.Notes) == 0 {
		return nil
	}
	out := make(map[string]string, len(m.k.Notes))
	for _, n := range m.k.Notes {
		out[n.Name] = n.Expression.Str
	}
	return out
}

func (m *migration) leave(it *Item, off int, reason string) {
	it.CEL, it.new = "", nil
	it.Reason = reason
	it.ReasonPos = offsetPos(it.Pos, it.Legacy, off)
	if it.Kind == Structured {
		it.ReasonPos = it.Pos
		return
	}
	if out, ok, err := gotmpl.CanonicalDefaults(it.Legacy); err == nil && ok && it.node != nil {
		it.Rewritten = out
	}
}

// text is what an item's scalar becomes: its CEL, or its rewritten legacy
// template.
func (it *Item) text() string {
	if it.CEL != "" {
		return it.CEL
	}
	return it.Rewritten
}

// settleShared: a YAML node reached through an alias stands in several
// places; it is rewritten only when every place translates it alike.
func (m *migration) settleShared() {
	byNode := map[*yaml.Node][]*Item{}
	for _, it := range m.items {
		if it.node != nil {
			byNode[it.node] = append(byNode[it.node], it)
		}
	}
	for _, its := range byNode {
		if len(its) < 2 {
			continue
		}
		agree := true
		for _, it := range its[1:] {
			if it.CEL != its[0].CEL || it.CEL == "" {
				agree = false
			}
		}
		if its[0].CEL == "" {
			agree = false
		}
		if !agree {
			for _, it := range its {
				if it.CEL != "" {
					m.leave(it, 0, "the value is used in several places (a YAML anchor) that translate differently")
				}
			}
		}
	}
	for _, it := range m.items {
		if it.CEL != "" {
			m.res.Translated = append(m.res.Translated, it)
		} else {
			m.res.Left = append(m.res.Left, it)
		}
	}
	sortItems(m.res.Translated)
	sortItems(m.res.Left)
}

func usesRandom(cel string) bool {
	for _, f := range celengine.RandomFunctions {
		if strings.Contains(cel, f+"(") {
			return true
		}
	}
	return false
}

func describe(c *katalog.Condition) string {
	d := c.Field + " " + c.Operator
	if c.Operator != "exists" && c.Operator != "notExists" {
		d += " " + fmt.Sprintf("%q", c.Value)
	}
	if c.Negate {
		d = "not (" + d + ")"
	}
	return d
}

// offsetPos is the position of byte off of src written at base (a quoted
// scalar's content: columns count runes; a block scalar: by line).
func offsetPos(base katalog.Pos, src string, off int) katalog.Pos {
	off = max(0, min(off, len(src)))
	before := src[:off]
	nl := strings.LastIndexByte(before, '\n')
	if nl < 0 {
		return base.Offset(len([]rune(before)))
	}
	if base.Line == 0 {
		return base
	}
	p := base
	p.Line += strings.Count(before, "\n")
	p.Col = 1 + len([]rune(before[nl+1:]))
	return p
}

// ── schemas ─────────────────────────────────────────────────────────────────

type schemaInfo struct {
	crd     *katalog.CRD
	version string
	// objects as written or generated; defaulted: the same after the API
	// server's defaulting, as reconciled objects are seen.
	objects, defaulted []sample
}

// defaulted: the expression at ctx sees objects read from the API server,
// which are defaulted; the source objects of a conversion may not be.
func defaulted(ctx *engine.Context) bool {
	return !strings.HasPrefix(ctx.Field, "conversion.")
}

func (m *migration) indexSchemas() {
	m.schemas = map[*structuralschema.Structural]*schemaInfo{}
	for _, e := range m.k.CRDs {
		if e.CRD == nil {
			continue
		}
		for v, s := range e.CRD.Schemas {
			if _, ok := m.schemas[s]; !ok {
				m.schemas[s] = &schemaInfo{crd: e.CRD, version: v}
			}
		}
	}
}

// objectSchema is the schema of the objects an item is verified on: its
// self, or, where the compiler widened self for the item (a forEach
// declaration's item roots, the fields normalize adds), the version schema
// of its entry.
func (m *migration) objectSchema(ctx *engine.Context) *structuralschema.Structural {
	s := ctx.Self
	if _, ok := m.schemas[s]; ok {
		return s
	}
	if e := m.k.Entry(ctx.Entry); e != nil && e.Schema() != nil {
		return e.Schema()
	}
	return s
}

func (m *migration) namespaced(s *structuralschema.Structural) bool {
	if info := m.schemas[s]; info != nil {
		return info.crd.Object.Spec.Scope != apiextensionsv1.ClusterScoped
	}
	return false
}

// sortItems orders items by file and position.
func sortItems(its []*Item) {
	sort.SliceStable(its, func(i, j int) bool {
		a, b := its[i].Pos, its[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}

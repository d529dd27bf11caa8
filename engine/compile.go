package engine

import (
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/katalog"
)

// CompileOptions tune compilation.
type CompileOptions struct {
	// CostLimit is the static per-expression cost limit (0: backend default).
	CostLimit uint64
	// MaxForEach bounds the children of one forEach declaration whose field
	// has no maxItems/maxProperties (0: DefaultMaxForEach).
	MaxForEach int
	// StrictTotality makes a conversion expression that can fail on an
	// object its source schema accepts an error instead of a warning.
	StrictTotality bool
}

// MaxExpressions bounds the expressions one katalog compiles (conditions
// included): compilation stops at the entry that passes it.
const MaxExpressions = 5000

// Compile turns a loaded katalog into an immutable plan: every string value,
// condition and conversion path compiled and type-checked where it lands. All
// problems are reported, not only the first; the plan is usable only when the
// diagnostics hold no error.
func Compile(k *katalog.Katalog, b Backends, opts CompileOptions) (*Plan, katalog.Diagnostics) {
	c := &compiler{b: b, opts: opts, k: k}
	if len(k.Notes) > 0 {
		c.notes(k)
	}
	p := &Plan{Katalog: k, Conversions: map[schema.GroupKind]*Conversion{}}
	reconciler := reconcilingEntries(k)
	for _, src := range k.CRDs {
		if src.CRD == nil || src.Schema() == nil {
			continue // the loader reported why
		}
		e := c.entry(k, src, reconciler[src.CRD] == src)
		sc := compileScope{entry: src}
		if src.Conversion != nil {
			if conv := c.conversion(sc); conv != nil {
				p.Conversions[conv.GroupKind] = conv
				p.Stats.Paths += len(conv.Paths)
			}
		} else if len(src.CRD.Served) > 1 && e.Reconciles && !hasConversion(k, src.CRD) {
			c.warnf(sc, src.Pos, "", "CRD %s serves %d versions (%s) but no entry declares conversion; the API server will only rewrite apiVersion between them", src.CRD.Object.Name, len(src.CRD.Served), strings.Join(src.CRD.Served, ", "))
		}
		p.Entries = append(p.Entries, e)
		if c.exprs > MaxExpressions {
			c.errorf(sc, src.Pos, "", "the katalog has more than %d expressions (%d up to this entry), the limit of one katalog: each compiled expression keeps 2 to 35 KB; split the operator into several katalogs", MaxExpressions, c.exprs)
			break
		}
	}
	p.Stats.Entries = len(p.Entries)
	p.Stats.Expressions = c.exprs
	return p, c.diags
}

// entry compiles what an entry reconciles (normalize, children, gates,
// status) and its admission rules; reconciles says it is the entry of its
// CRD that reconciles.
func (c *compiler) entry(k *katalog.Katalog, src *katalog.CRDEntry, reconciles bool) *Entry {
	e := &Entry{
		Name:       src.Name,
		Source:     src,
		GVK:        src.GVK(),
		GVR:        src.GVR(),
		Namespaced: src.CRD.Object.Spec.Scope != apiextensionsv1.ClusterScoped,
		Enabled:    src.Enabled,
		Workers:    src.Workers,
		Resync:     src.Resync,
		Reconciles: reconciles,
		Schema:     src.Schema(),
		Hooks:      map[string][]*Resource{},
		Namespaces: src.Namespaces,
		DependsOn:  src.DependsOn,
	}
	// Normalize reads the custom resource as stored; everything after it
	// reads the view it makes. A normalize value that reads the clock
	// changes what the rest reads, so it is timed as theirs are.
	sc := compileScope{entry: src, self: src.Schema(), selfVersion: src.APITypes.Version, timed: &e.Timed}
	if src.Normalize != nil {
		e.Normalize, sc.self = c.normalize(sc)
	}
	sc.legacyRoot = auditRoot(src, sc.self)
	e.ReadsManagedFields, e.ReadsLastApplied = mentionsManagedFields(src, k.Notes), mentionsLastApplied(src, k.Notes)
	if e.ReadsChildren = mentionsChildren(src); e.ReadsChildren {
		// (An environment with children is built only where needed.)
		sc.vars = []Var{{Name: ChildrenVar, Schema: childrenSchema(k, src)}}
	}
	sc = c.live(sc, e)
	if src.Box != nil {
		c.box(sc, e, k.Finalizers)
	}
	e.Admission = c.admission(compileScope{entry: src, self: src.Schema(), selfVersion: src.APITypes.Version})
	return e
}

// box compiles an entry's operatorBox into e: children per hook, gates and
// status fields; finalizers is the katalog-wide default.
func (c *compiler) box(sc compileScope, e *Entry, finalizers []string) {
	box := sc.entry.Box
	e.HasBox = true
	e.Finalizers = box.Finalizers
	if len(e.Finalizers) == 0 {
		// spec.finalizers is the katalog-wide default (upstream).
		e.Finalizers = finalizers
	}
	for _, h := range katalog.Hooks {
		if hook := box.Hooks[h]; hook != nil {
			for _, r := range hook.Resources {
				if cr := c.resource(sc, r); cr != nil {
					e.Hooks[h] = append(e.Hooks[h], cr)
				}
			}
			c.checkIdentities(sc, e.Hooks[h])
		}
	}
	c.order(e)
	if g := box.Gates; g != nil {
		c.gates(sc, e, g)
	}
	if q := sc.entry.Queue; q != nil && q.Behaviour != nil {
		b := q.Behaviour
		e.QueueDrop = &QueueDrop{Source: b, When: c.conditions(sc, b.When, b.Or, b.Path)}
		if q.MaxDepth == 0 {
			c.warnf(sc, b.Pos, b.Path, "queue.behaviour drops nothing without queue.maxDepth (as upstream): set maxDepth, the depth its rule is measured against")
		}
	}
	if cl := box.Cleanup; cl != nil {
		if cond := c.conditions(sc, cl.When, cl.Or, "operatorBox.runtime.cleanup"); cond != nil {
			e.Cleanup = &Cleanup{Source: cl, When: cond}
		}
	}
	for _, ev := range box.Events {
		e.Events = append(e.Events, c.emitEvent(sc, ev))
	}
	if box.Status != nil {
		for i, f := range box.Status.Fields {
			if sf := c.statusField(sc, i, f); sf != nil {
				e.Status = append(e.Status, sf)
			}
		}
		e.Conditions = c.statusConditions(sc, box.Status.Conditions)
	}
}

// emitEvent compiles an operatorBox.emit.events entry: its message is text
// (as a status field the schema does not type) and its conditions those of
// a gate.
func (c *compiler) emitEvent(sc compileScope, ev *katalog.EmitEvent) *EmitEvent {
	field := ev.Field()
	return &EmitEvent{
		Source:  ev,
		Message: c.value(sc, ev.Message, nil, target{field: field + ".message", coerce: CoerceString}),
		When:    c.conditions(sc, ev.When, ev.Or, field),
	}
}

// notes gives the katalog's user-defined template functions to the legacy
// backend.
func (c *compiler) notes(k *katalog.Katalog) {
	nb, ok := c.b.Legacy.(NotesBackend)
	if !ok {
		c.errorf(compileScope{}, k.Notes[0].Pos, "notes", "notes: (user-defined template functions) need the legacy adapter, which is not enabled in this build")
		return
	}
	legacy, diags := nb.WithNotes(k.Notes)
	c.diags = append(c.diags, diags...)
	c.b.Legacy = legacy
}

func hasConversion(k *katalog.Katalog, crd *katalog.CRD) bool {
	for _, e := range k.CRDs {
		if e.CRD == crd && e.Conversion != nil {
			return true
		}
	}
	return false
}

// reconcilingEntries picks, per CRD, the entry that reconciles: the one at
// the storage version, else the first enabled entry. Each object is then
// reconciled once even when several entries serve its CRD.
func reconcilingEntries(k *katalog.Katalog) map[*katalog.CRD]*katalog.CRDEntry {
	out := map[*katalog.CRD]*katalog.CRDEntry{}
	for _, e := range k.CRDs {
		if e.CRD == nil || !e.Enabled {
			continue
		}
		cur, ok := out[e.CRD]
		if !ok || (cur.APITypes.Version != e.CRD.StorageVersion && e.APITypes.Version == e.CRD.StorageVersion) {
			out[e.CRD] = e
		}
	}
	return out
}

// compiler holds what is katalog-wide: the backends, the options, the
// diagnostics and the count of expressions. What an expression can read is
// its compileScope, passed down.
type compiler struct {
	// k is the katalog being compiled (its CRDs type custom children).
	k     *katalog.Katalog
	b     Backends
	opts  CompileOptions
	diags katalog.Diagnostics
	exprs int
	// imports are the compiled inputs of each motif import (inputs.go).
	imports map[*katalog.MotifImport]*Inputs
}

func (c *compiler) errorf(sc compileScope, pos katalog.Pos, field, format string, args ...any) {
	c.diags = append(c.diags, katalog.Diagnostic{Pos: pos, Entry: sc.entryName(), Field: field, Message: fmt.Sprintf(format, args...)})
}

func (c *compiler) warnf(sc compileScope, pos katalog.Pos, field, format string, args ...any) {
	c.diags = append(c.diags, katalog.Diagnostic{Pos: pos, Severity: katalog.Warning, Entry: sc.entryName(), Field: field, Message: fmt.Sprintf(format, args...)})
}

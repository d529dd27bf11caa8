package engine

import (
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
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
	c := &compiler{b: b, opts: opts}
	if len(k.Notes) > 0 {
		c.notes(k)
	}
	p := &Plan{Katalog: k, Conversions: map[schema.GroupKind]*Conversion{}}
	reconciler := reconcilingEntries(k)
	for _, src := range k.CRDs {
		if src.CRD == nil || src.Schema() == nil {
			continue // the loader reported why
		}
		c.entry = src.Name
		e := &Entry{
			Name:       src.Name,
			Source:     src,
			GVK:        src.GVK(),
			GVR:        src.GVR(),
			Namespaced: src.CRD.Object.Spec.Scope != apiextensionsv1.ClusterScoped,
			Enabled:    src.Enabled,
			Workers:    src.Workers,
			Resync:     src.Resync,
			Reconciles: reconciler[src.CRD] == src,
			Schema:     src.Schema(),
			Hooks:      map[string][]*Resource{},
			Namespaces: src.Namespaces,
			DependsOn:  src.DependsOn,
		}
		c.vars = nil
		c.view = src.Schema()
		if src.Normalize != nil {
			e.Normalize = c.normalize(src)
		}
		c.entryLegacySelf = auditRoot(src, c.view)
		c.legacySelf = c.entryLegacySelf
		if e.ReadsChildren = mentionsChildren(src); e.ReadsChildren {
			// (An environment with children is built only where needed.)
			c.vars = []Var{{Name: ChildrenVar, Schema: childrenSchema(k, src)}}
		}
		c.timed = nil
		if src.Box != nil {
			e.HasBox = true
			e.Finalizers = src.Box.Finalizers
			if len(e.Finalizers) == 0 {
				// spec.finalizers is the katalog-wide default (upstream).
				e.Finalizers = k.Finalizers
			}
			for _, h := range katalog.Hooks {
				if hook := src.Box.Hooks[h]; hook != nil {
					for _, r := range hook.Resources {
						if cr := c.resource(src, r); cr != nil {
							e.Hooks[h] = append(e.Hooks[h], cr)
						}
					}
					c.checkIdentities(e.Hooks[h])
				}
			}
			if g := src.Box.Gates; g != nil {
				e.Gate = c.conditions(src, g.ReconcileWhen, g.ReconcileOr, "operatorBox.preReconcile")
				e.EnqueueGate = c.conditions(src, g.EnqueueWhen, g.EnqueueOr, "operatorBox.preReconcile.enqueueGate")
			}
			if src.Box.Status != nil {
				for i, f := range src.Box.Status.Fields {
					if sf := c.statusField(src, i, f); sf != nil {
						e.Status = append(e.Status, sf)
					}
				}
			}
		}
		c.vars = nil // a conversion sees only the object converted
		c.legacySelf, c.entryLegacySelf, c.view = nil, nil, nil
		e.Admission = c.admission(src)
		e.Timed = c.timed
		if src.Conversion != nil {
			if conv := c.conversion(src); conv != nil {
				p.Conversions[conv.GroupKind] = conv
				p.Stats.Paths += len(conv.Paths)
			}
		} else if len(src.CRD.Served) > 1 && reconciler[src.CRD] == src && !hasConversion(k, src.CRD) {
			c.warnf(src.Pos, "", "CRD %s serves %d versions (%s) but no entry declares conversion; the API server will only rewrite apiVersion between them", src.CRD.Object.Name, len(src.CRD.Served), strings.Join(src.CRD.Served, ", "))
		}
		p.Entries = append(p.Entries, e)
		if c.exprs > MaxExpressions {
			c.errorf(src.Pos, "", "the katalog has more than %d expressions (%d up to this entry), the limit of one katalog: each compiled expression keeps 2 to 35 KB; split the operator into several katalogs", MaxExpressions, c.exprs)
			break
		}
	}
	c.entry = ""
	p.Stats.Entries = len(p.Entries)
	p.Stats.Expressions = c.exprs
	return p, c.diags
}

// notes gives the katalog's user-defined template functions to the legacy
// backend.
func (c *compiler) notes(k *katalog.Katalog) {
	nb, ok := c.b.Legacy.(NotesBackend)
	if !ok {
		c.errorf(k.Notes[0].Pos, "notes", "notes: (user-defined template functions) need the legacy adapter, which is not enabled in this build")
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

type compiler struct {
	b     Backends
	opts  CompileOptions
	entry string
	diags katalog.Diagnostics
	exprs int
	// vars are the variables CEL expressions of the current entry (and
	// forEach declaration) may read besides self; legacySelf, when set, is
	// the schema legacy templates see as their root instead of self (a
	// forEach declaration adds .item and friends to it).
	vars       []Var
	legacySelf *structuralschema.Structural
	// entryLegacySelf is the entry's own legacy root outside forEach: nil,
	// or self with ._normalizeChanges when normalize audits.
	entryLegacySelf *structuralschema.Structural
	// view is the schema of the custom resource as the entry's expressions
	// read it: the CRD version's, with the fields normalize adds.
	view *structuralschema.Structural
	// timed are the entry's values and conditions that read the clock.
	timed []Timed
}

// noteTimed records x when it reads the clock.
func (c *compiler) noteTimed(x any) {
	if t, ok := x.(Timed); ok && t.ReadsClock() {
		c.timed = append(c.timed, t)
	}
}

// selfFor is the root schema an expression of language lang sees.
func (c *compiler) selfFor(lang Language, self *structuralschema.Structural) *structuralschema.Structural {
	if lang == Legacy && c.legacySelf != nil {
		return c.legacySelf
	}
	return self
}

func (c *compiler) errorf(pos katalog.Pos, field, format string, args ...any) {
	c.diags = append(c.diags, katalog.Diagnostic{Pos: pos, Entry: c.entry, Field: field, Message: fmt.Sprintf(format, args...)})
}

func (c *compiler) warnf(pos katalog.Pos, field, format string, args ...any) {
	c.diags = append(c.diags, katalog.Diagnostic{Pos: pos, Severity: katalog.Warning, Entry: c.entry, Field: field, Message: fmt.Sprintf(format, args...)})
}

package engine

import (
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/katalog"
)

// compileScope is what the expressions being compiled can read. It is a
// value passed down: an entry's scope is derived for a forEach declaration
// (withForEach) or a conversion path (a scope of its own), never set on the
// compiler and reset by hand, so a nested declaration cannot leak its
// variables into the next one.
type compileScope struct {
	// entry is the CRD entry being compiled; nil outside one (notes).
	entry *katalog.CRDEntry
	// self types `self`: the custom resource as the entry's expressions read
	// it (its version's schema with the fields normalize adds), or the
	// source version of a conversion path; selfVersion names it.
	self        *structuralschema.Structural
	selfVersion string
	// legacyRoot is the root legacy templates see when it is not self: self
	// with ._normalizeChanges when normalize audits, and with .item and
	// friends in a forEach declaration.
	legacyRoot *structuralschema.Structural
	// vars are the variables CEL expressions may read besides self:
	// children, and a forEach declaration's item.
	vars []Var
	// timed collects the entry's values and conditions that read the clock
	// (nil: not collected).
	timed *[]Timed
}

// entryName is the entry's name for diagnostics ("" outside one).
func (sc compileScope) entryName() string {
	if sc.entry == nil {
		return ""
	}
	return sc.entry.Name
}

// rootFor is the root schema an expression of language lang sees.
func (sc compileScope) rootFor(lang Language) *structuralschema.Structural {
	if lang == Legacy && sc.legacyRoot != nil {
		return sc.legacyRoot
	}
	return sc.self
}

// context is the backend context of an expression of language lang at
// field, pos in this scope.
func (sc compileScope) context(lang Language, field string, pos katalog.Pos, costLimit uint64) *Context {
	return &Context{Entry: sc.entryName(), Field: field, Pos: pos, Self: sc.rootFor(lang), SelfVersion: sc.selfVersion, CostLimit: costLimit, Vars: sc.vars}
}

// noteTimed records x when it reads the clock.
func (sc compileScope) noteTimed(x any) {
	if t, ok := x.(Timed); ok && t.ReadsClock() && sc.timed != nil {
		*sc.timed = append(*sc.timed, t)
	}
}

// withForEach is the scope of a forEach declaration's expressions: the
// current item readable as CEL variables, and as the legacy root's extra
// keys (with several iterators: each alias, and index).
func (sc compileScope) withForEach(fe *ForEach) compileScope {
	integer := &structuralschema.Structural{Generic: structuralschema.Generic{Type: "integer"}}
	anyValue := structuralschema.Structural{Extensions: structuralschema.Extensions{XPreserveUnknownFields: true}}
	orAny := func(s *structuralschema.Structural) structuralschema.Structural {
		if s == nil {
			return anyValue
		}
		return *s
	}
	vars := append([]Var(nil), sc.vars...)
	vars = append(vars, Var{Name: IndexVar, Schema: integer})
	root := structuralschema.Structural{}
	if self := sc.rootFor(Legacy); self != nil {
		root = *self
	}
	props := make(map[string]structuralschema.Structural, len(root.Properties)+4)
	for k, v := range root.Properties {
		props[k] = v
	}
	props[IndexVar] = *integer
	if it := fe.Single(); it != nil {
		vars = append(vars, Var{Name: EachVar, Schema: it.itemSchema})
		props[LegacyItem] = orAny(it.itemSchema)
		if it.Map || it.Unknown {
			vars = append(vars, Var{Name: ValueVar, Schema: it.valueSchema})
			props[ValueVar] = orAny(it.valueSchema)
		}
		if it.As != "" {
			vars = append(vars, Var{Name: it.As, Schema: it.itemSchema})
			props[it.As] = orAny(it.itemSchema)
		}
	} else {
		for _, it := range fe.Iterators {
			vars = append(vars, Var{Name: it.As, Schema: it.itemSchema})
			props[it.As] = orAny(it.itemSchema)
		}
	}
	root.Properties = props
	out := sc
	out.vars, out.legacyRoot = vars, &root
	return out
}

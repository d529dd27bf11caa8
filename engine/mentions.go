package engine

import (
	"strings"

	"github.com/orkspace/orkestra-cel/katalog"
)

// What an entry's expressions may read is told from their text, before they
// compile: a false positive costs the operator a lookup or some memory,
// never a wrong result.

// AnnotationLastApplied is the annotation kubectl apply keeps the applied
// object in (a copy of the object, as large as the object itself).
const AnnotationLastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// mentionsChildren reports whether an expression of the entry mentions
// children (CEL children, legacy .children): the operator then reads them
// back, and only then do expressions compile against an environment that
// declares them.
func mentionsChildren(e *katalog.CRDEntry) bool {
	return entryMentions(e, nil, func(text string, key bool) bool {
		return !key && strings.Contains(text, ChildrenVar)
	})
}

// mentionsManagedFields reports whether the entry (or a note of the
// katalog) names metadata.managedFields: the operator's caches then keep it.
func mentionsManagedFields(e *katalog.CRDEntry, notes []*katalog.Note) bool {
	return entryMentions(e, notes, func(text string, _ bool) bool {
		return strings.Contains(text, "managedFields")
	})
}

// mentionsLastApplied reports whether the entry (or a note) may read the
// last-applied annotation — an expression reads annotations, or a value or
// a declared key names it: the operator's caches then keep it.
func mentionsLastApplied(e *katalog.CRDEntry, notes []*katalog.Note) bool {
	return entryMentions(e, notes, func(text string, key bool) bool {
		return (!key && strings.Contains(text, "annotations")) || strings.Contains(text, "last-applied-configuration")
	})
}

// entryMentions reports whether match holds for a text of the entry an
// expression may stand in: every string value and map key of its resources
// (key=true for keys), conditions (legacy condition fields included),
// readyWhen, forEach fields, status fields and conditions, preReconcile
// gates, watches' enqueueGates and normalize values —
// or of one of notes.
func entryMentions(e *katalog.CRDEntry, notes []*katalog.Note, match func(text string, key bool) bool) bool {
	found := false
	var walk func(v *katalog.Value)
	walk = func(v *katalog.Value) {
		if v == nil || found {
			return
		}
		if v.Kind == katalog.StringValue && match(v.Str, false) {
			found = true
		}
		for _, m := range v.Map {
			if match(m.Key, true) {
				found = true
			}
			walk(m.Value)
		}
		for _, it := range v.List {
			walk(it)
		}
		if v.Select != nil {
			walk(v.Select.Key)
			for _, c := range v.Select.Cases {
				walk(c.Value)
			}
		}
	}
	field := func(s string) {
		if !found && match(s, false) {
			found = true
		}
	}
	when := func(w *katalog.When) {
		if w == nil {
			return
		}
		for _, x := range w.Exprs {
			walk(x)
		}
		for _, c := range w.Conditions {
			field(c.Field)
		}
	}
	for _, n := range notes {
		walk(n.Expression)
	}
	if e.Normalize != nil {
		for _, f := range e.Normalize.Fields {
			walk(f.Value)
		}
	}
	if e.Box == nil {
		return found
	}
	for _, h := range e.Box.Hooks {
		for _, r := range h.Resources {
			walk(r.Fields)
			when(r.When)
			when(r.Or)
			when(r.ReadyWhen)
			for _, it := range r.ForEach {
				field(it.Field)
			}
		}
	}
	if e.Box.Status != nil {
		for _, f := range e.Box.Status.Fields {
			walk(f.Value)
			when(f.When)
		}
		for _, c := range e.Box.Status.Conditions {
			walk(c.Status)
			walk(c.Reason)
			walk(c.Message)
		}
	}
	if g := e.Box.Gates; g != nil {
		for _, w := range []*katalog.When{g.ReconcileWhen, g.ReconcileOr, g.EnqueueWhen, g.EnqueueOr} {
			when(w)
		}
	}
	for _, o := range e.Box.Observations {
		if g := o.Gate; g != nil {
			when(g.When)
			when(g.Or)
		}
	}
	if cl := e.Box.Cleanup; cl != nil {
		when(cl.When)
		when(cl.Or)
	}
	if q := e.Queue; q != nil && q.Behaviour != nil {
		when(q.Behaviour.When)
		when(q.Behaviour.Or)
	}
	for _, ev := range e.Box.Events {
		walk(ev.Message)
		when(ev.When)
		when(ev.Or)
	}
	return found
}

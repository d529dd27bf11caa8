package katalog

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// How a declared child is kept once it exists: reconcile: says whether it is
// drift-corrected, prune: whether it is deleted when its condition stops
// holding (and, for forEach, when its item is gone). The defaults are the
// original Orkestra's, learned from its resource runners
// (iAlexeze/orkestra pkg/runners/docs/01-runner-contract.md, section B4):
// a drift-corrected child whose condition fails is deleted when it is the
// runtime's and no passing declaration names it; a Job never is
// (pkg/runners/jobs.go); an onCreate child is left alone; forEach children of
// items that are gone are left (forEach only expands the current items:
// pkg/reconciler/docs/05-foreach.md). prune: on a declaration, its hook or
// operatorBox (the nearest wins) replaces the default.

// Switch is a boolean control key as written: its value and where it stands.
type Switch struct {
	Value bool
	Pos   Pos
	// Field is its path inside the entry, e.g. operatorBox.onReconcile.prune.
	Field string
}

func (s *Switch) String() string { return fmt.Sprintf("%s: %v (%s)", s.Field, s.Value, s.Pos) }

// Modes are how a declared child is kept, resolved from its keys and the
// defaults.
type Modes struct {
	// Reconcile: drift-corrected on every reconcile — declared under
	// onReconcile (unless reconcile: false), or under onCreate with
	// reconcile: true. Otherwise created once and never updated.
	Reconcile bool
	// ReconcileFrom is the reconcile: key that decided; nil: the hook's
	// default.
	ReconcileFrom *Switch
	// Prune: the object is deleted when the declaration's condition stops
	// holding (if it is the runtime's and no passing declaration names it).
	Prune bool
	// PruneItems: the children of forEach items that are gone are deleted.
	PruneItems bool
	// PruneFrom is the prune: key that decided; nil: the default.
	PruneFrom *Switch
}

// ModesOf resolves the modes of r, a declaration of box. onDelete children
// are neither reconciled nor pruned.
func (box *OperatorBox) ModesOf(r *Resource) Modes {
	var m Modes
	switch r.Hook {
	case OnDelete:
		return m
	case OnReconcile:
		m.Reconcile = true
	}
	if r.Reconcile != nil {
		m.Reconcile, m.ReconcileFrom = r.Reconcile.Value, r.Reconcile
	}
	p := r.Prune
	if h := box.Hooks[r.Hook]; p == nil && h != nil {
		p = h.Prune
	}
	if p == nil {
		p = box.Prune
	}
	if p != nil {
		m.Prune, m.PruneItems, m.PruneFrom = p.Value, p.Value, p
		return m
	}
	m.Prune = m.Reconcile && !ResourceKinds[r.Kind].CreateOnly
	return m
}

// PruneReason says why the modes prune as they do, for `orkestra render`.
func (m Modes) PruneReason(kind string) string {
	switch {
	case m.PruneFrom != nil:
		return m.PruneFrom.String()
	case ResourceKinds[kind].CreateOnly:
		return "default: " + kind + " are never deleted when their condition stops holding"
	case m.Prune:
		return "default: a drift-corrected child is deleted when its condition stops holding; the children of forEach items that are gone stay"
	}
	return "default: a child that is not drift-corrected stays when its condition stops holding"
}

// ReconcileReason says where Reconcile comes from, for `orkestra render`.
func (m Modes) ReconcileReason(hook, kind string) string {
	why := "default of " + hook
	if m.ReconcileFrom != nil {
		why = m.ReconcileFrom.String()
	}
	if m.Reconcile && ResourceKinds[kind].CreateOnly {
		why += "; " + kind + " are created once and never updated"
	}
	return why
}

// hookKeys are the keys of a hook block: its kinds and prune.
func hookKeys() []string { return append(kindKeys(), "prune") }

// switchKey decodes a boolean control key.
func (d *decoder) switchKey(n *yaml.Node, path string) *Switch {
	return &Switch{Value: d.boolean(n, path), Pos: d.pos(Resolve(n)), Field: path}
}

// reconcileKey decodes a declaration's reconcile:. Under onReconcile, false
// means here what the author wrote (created once, never updated); the
// original runtime reads the key as a plain boolean that only adds drift
// correction on onCreate, so it ignores false there: a warning says so where
// that changes something (Jobs are never updated by either).
func (d *decoder) reconcileKey(hook, kind string, n *yaml.Node, path string) *Switch {
	s := d.switchKey(n, path)
	if hook == OnReconcile && !s.Value && !ResourceKinds[kind].CreateOnly {
		d.warnf(n, path, "reconcile: false under onReconcile: the object is created once and never updated (as under onCreate), and stays when its condition stops holding unless prune: true; the original Orkestra ignores reconcile: false under onReconcile and keeps updating it — declare it under onCreate to mean the same in both")
	}
	return s
}

// pruneKey decodes prune: on a declaration, a hook or operatorBox (hook "").
func (d *decoder) pruneKey(hook string, n *yaml.Node, path string) *Switch {
	s := d.switchKey(n, path)
	if hook == OnDelete {
		d.errorf(n, path, "prune applies to onCreate and onReconcile children; onDelete children are created while the custom resource is deleted and go with it: remove prune here")
	}
	return s
}

package katalog

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// Move is a key of an entry that upstream's newest layout (v0.7.18) writes
// under another parent than its flat layout. Both spellings decode through
// one decoder; writing both is an error naming the two places.
type Move struct {
	// Flat and Newest are the key's paths within the entry (an entry's box
	// is operatorBox, or its older name reconciler).
	Flat, Newest string
}

// LayoutMoves is the one table of the keys the two layouts spell
// differently: the decoder derives the keys of admission:, runtime: and
// emit: from it, and `orkestra migrate --layout` moves keys by it.
var LayoutMoves = []Move{
	{"validation", "admission.validation"},
	{"mutation", "admission.mutation"},
	{"conversion", "admission.conversion"},
	{"allowedNamespaces", "operatorBox.runtime.allowedNamespaces"},
	{"operatorBox.finalizers", "operatorBox.runtime.finalizers"},
	{"operatorBox.status", "operatorBox.emit.status"},
	{"operatorBox.watch", "operatorBox.observe.watch"},
}

// Key is the moved key's own name.
func (m Move) Key() string { return m.Newest[strings.LastIndexByte(m.Newest, '.')+1:] }

// NewestParent is the path of the map the newest layout writes the key in.
func (m Move) NewestParent() string { return m.Newest[:strings.LastIndexByte(m.Newest, '.')] }

// FlatParent is the path of the map the flat layout writes the key in (""
// for the entry itself).
func (m Move) FlatParent() string {
	if i := strings.LastIndexByte(m.Flat, '.'); i >= 0 {
		return m.Flat[:i]
	}
	return ""
}

// movedInto lists the keys the newest layout writes in the map at parent,
// in table order.
func movedInto(parent string) []string {
	var keys []string
	for _, m := range LayoutMoves {
		if m.NewestParent() == parent {
			keys = append(keys, m.Key())
		}
	}
	return keys
}

// moveOf is the move of key into parent.
func moveOf(parent, key string) Move {
	for _, m := range LayoutMoves {
		if m.NewestParent() == parent && m.Key() == key {
			return m
		}
	}
	panic("katalog: no layout move of " + parent + "." + key)
}

// writtenTwice reports a moved key written in both layouts: at (the newest
// spelling, at path) and at flat.
func (d *decoder) writtenTwice(at *yaml.Node, path string, m Move, flat Pos) {
	d.errorf(at, path, "%s is written both here and at %s (%s, the flat layout); keep one (%s is the newer layout)", m.Key(), flat, m.Flat, m.Newest)
}

// BoxSpellings are the names of an entry's box, the newest first.
var BoxSpellings = []string{"operatorBox", "reconciler"}

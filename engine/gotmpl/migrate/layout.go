package migrate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/orkspace/orkestra-cel/katalog"
)

// Layouts `migrate --layout` writes.
const (
	LayoutFlat   = "flat"
	LayoutNewest = "newest"
)

// Moved is one key moved between the layouts.
type Moved struct {
	File  string
	Line  int // of the key, before the move
	Entry string
	From  string // the key's path within the entry, as written
	To    string
}

// Relayout rewrites the Katalog documents of one file into layout, moving
// the keys of katalog.LayoutMoves, one at a time. Each move cuts the key's
// block (with the comment lines just above it and inside it) out of the
// text, indents it for its new parent and splices it in; the text is then
// parsed again and compared with the tree the same move makes of the parsed
// original, so nothing but the move changes. A key that cannot be moved
// without changing what the katalog means, or without rewriting more than
// its own lines, is an error naming it, and the file is left as it was.
func Relayout(file string, src []byte, layout string) ([]byte, []Moved, error) {
	if layout != LayoutFlat && layout != LayoutNewest {
		return nil, nil, fmt.Errorf("unknown layout %q; use %s or %s", layout, LayoutNewest, LayoutFlat)
	}
	var done []Moved
	// Moves are reported at the key's line in the file as written.
	lines := map[string]int{}
	for {
		docs, err := parseDocs(src)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", file, err)
		}
		mv, err := nextMove(docs, layout)
		if err != nil {
			return nil, nil, fmt.Errorf("%s:%w", file, err) // err starts with the line
		}
		if mv == nil {
			slices.SortStableFunc(done, func(a, b Moved) int { return a.Line - b.Line })
			return src, done, nil
		}
		if len(done) == 0 {
			for _, m := range pending(docs, layout) {
				lines[m.id()] = m.key.Line
			}
		}
		line := lines[mv.id()]
		out, err := mv.apply(newSource(src))
		if err != nil {
			return nil, nil, fmt.Errorf("%s:%d: cannot move %s of entry %s to %s: %w", file, line, mv.from, mv.entry, mv.to, err)
		}
		mv.applyToTree()
		after, err := parseDocs(out)
		if err == nil {
			err = sameDocs(docs, after)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s:%d: moving %s of entry %s to %s changed more than the move (%w); nothing was written", file, line, mv.from, mv.entry, mv.to, err)
		}
		done = append(done, Moved{File: file, Line: line, Entry: mv.entry, From: mv.from, To: mv.to})
		src = out
	}
}

// parseDocs parses every document of a file.
func parseDocs(b []byte) ([]*yaml.Node, error) {
	var docs []*yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, &doc)
	}
}

func sameDocs(want, got []*yaml.Node) error {
	if len(want) != len(got) {
		return fmt.Errorf("%d documents, want %d", len(got), len(want))
	}
	for i := range want {
		if err := sameTree(want[i], got[i], fmt.Sprintf("document %d", i+1)); err != nil {
			return err
		}
	}
	return nil
}

// entries lists the entries of a Katalog document with their names.
func entries(doc *yaml.Node) (names []string, nodes []*yaml.Node) {
	if len(doc.Content) == 0 || !isKatalog(doc.Content[0]) {
		return nil, nil
	}
	crds := lookup(lookup(doc.Content[0], "spec"), "crds")
	switch {
	case crds == nil:
	case crds.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(crds.Content); i += 2 {
			if v := crds.Content[i+1]; v.Kind == yaml.MappingNode {
				names, nodes = append(names, crds.Content[i].Value), append(nodes, v)
			}
		}
	case crds.Kind == yaml.SequenceNode:
		for _, v := range crds.Content {
			if v.Kind == yaml.MappingNode {
				name := ""
				if n := lookup(v, "name"); n != nil {
					name = n.Value
				}
				names, nodes = append(names, name), append(nodes, v)
			}
		}
	}
	return names, nodes
}

// lookup is the value of key in mapping m (nil when m is not a mapping or
// has no such key).
func lookup(m *yaml.Node, key string) *yaml.Node {
	if i := keyIndex(m, key); i >= 0 {
		return m.Content[i+1]
	}
	return nil
}

func keyIndex(m *yaml.Node, key string) int {
	if m == nil || m.Kind != yaml.MappingNode {
		return -1
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i
		}
	}
	return -1
}

// step is one key's place: the mapping holding it and its index there.
type step struct {
	m   *yaml.Node
	i   int
	key string // as written (operatorBox may be spelled reconciler)
}

// walk follows path (dotted keys) from the entry; an entry's box is
// found under any of its spellings. It returns the steps found, which are
// fewer than the path's keys when the path stops existing.
func walk(entry *yaml.Node, path string) []step {
	var steps []step
	cur := entry
	for depth, k := range strings.Split(path, ".") {
		names := []string{k}
		if depth == 0 && k == katalog.BoxSpellings[0] {
			names = katalog.BoxSpellings
		}
		i := -1
		for _, n := range names {
			if i = keyIndex(cur, n); i >= 0 {
				k = n
				break
			}
		}
		if i < 0 {
			return steps
		}
		steps = append(steps, step{m: cur, i: i, key: k})
		cur = cur.Content[i+1]
	}
	return steps
}

func written(steps []step) string {
	var ks []string
	for _, s := range steps {
		ks = append(ks, s.key)
	}
	return strings.Join(ks, ".")
}

// move is one key to move in one entry.
type move struct {
	// doc and index: the entry's document and its place in spec.crds.
	doc, index int
	entry      string
	entryMap   *yaml.Node
	from, to   string
	key, val   *yaml.Node
	// src: the key's place; dst: the places of the target path that
	// exist (the target parent's, then its parent's …, up to the entry).
	src []step
	dst []step
	// toParent is the target parent's path, newKeys the parents to
	// create under the deepest existing one (outermost first).
	toParent string
	newKeys  []string
	flat     bool
	// width is the document's indentation step.
	width int
}

// nextMove finds the first key still to move.
func nextMove(docs []*yaml.Node, layout string) (*move, error) {
	mvs, err := find(docs, layout, true)
	if len(mvs) == 0 {
		return nil, err
	}
	return mvs[0], err
}

// pending lists the keys to move.
func pending(docs []*yaml.Node, layout string) []*move {
	mvs, _ := find(docs, layout, false)
	return mvs
}

// id names a move by its place: document, entry and key path.
func (mv *move) id() string { return fmt.Sprintf("%d/%d/%s", mv.doc, mv.index, mv.from) }

// find lists the keys to move, only the first when first is set.
func find(docs []*yaml.Node, layout string, first bool) ([]*move, error) {
	var out []*move
	for d, doc := range docs {
		names, nodes := entries(doc)
		for i, e := range nodes {
			for _, m := range katalog.LayoutMoves {
				from := m.Flat
				if layout == LayoutFlat {
					from = m.Newest
				}
				src := walk(e, from)
				if len(src) != strings.Count(from, ".")+1 {
					continue
				}
				mv := &move{doc: d, index: i, entry: names[i], entryMap: e, src: src, flat: layout == LayoutFlat, width: max(indentWidth(doc), 2)}
				last := src[len(src)-1]
				mv.key, mv.val = last.m.Content[last.i], last.m.Content[last.i+1]
				mv.from = written(src)
				parent := m.NewestParent()
				if mv.flat {
					parent = m.FlatParent()
				}
				if err := mv.target(parent); err != nil {
					return nil, fmt.Errorf("%d: cannot move %s of entry %s: %w", mv.key.Line, mv.from, mv.entry, err)
				}
				if out = append(out, mv); first {
					return out, nil
				}
			}
		}
	}
	return out, nil
}

// target resolves the target parent: the part of its path that exists,
// and the keys to create.
func (mv *move) target(parent string) error {
	mv.toParent = parent
	keys := []string{}
	if parent != "" {
		keys = strings.Split(parent, ".")
	}
	var dst []step
	if parent != "" {
		dst = walk(mv.entryMap, parent)
	}
	mv.newKeys = keys[len(dst):]
	mv.dst = dst
	mv.to = strings.Join(append(append(strings.Split(written(dst), "."), mv.newKeys...), mv.key.Value), ".")
	mv.to = strings.TrimPrefix(mv.to, ".")
	if len(dst) == 0 && len(keys) > 0 && keys[0] == katalog.BoxSpellings[0] {
		// A box would be created: the entry would start reconciling.
		return fmt.Errorf("the entry has no %s, and adding one would make it reconcile; declare %s by hand", katalog.BoxSpellings[0], mv.key.Value)
	}
	if p := mv.parentMap(); p != nil && p.Kind != yaml.MappingNode {
		return fmt.Errorf("%s is not a map", written(dst))
	}
	return nil
}

// parentMap is the existing target parent (nil when it is to be created).
func (mv *move) parentMap() *yaml.Node {
	if len(mv.newKeys) > 0 {
		return nil
	}
	if len(mv.dst) == 0 {
		return mv.entryMap
	}
	last := mv.dst[len(mv.dst)-1]
	return last.m.Content[last.i+1]
}

// holder is the deepest existing map of the target path: the parent
// itself, or the map the missing parents are created in.
func (mv *move) holder() *yaml.Node {
	if len(mv.dst) == 0 {
		return mv.entryMap
	}
	last := mv.dst[len(mv.dst)-1]
	return last.m.Content[last.i+1]
}

// emptied are the source's parents (innermost first) the flat direction
// leaves without keys; each is a map only the newest layout writes
// (admission, runtime, emit), removed with its last key. Leaving any
// other map empty is an error.
func (mv *move) emptied() ([]step, error) {
	if !mv.flat {
		return nil, nil
	}
	var out []step
	for j := len(mv.src) - 1; j > len(mv.dst); j-- {
		parent := mv.src[j-1]
		if len(parent.m.Content[parent.i+1].Content) > 2 {
			break
		}
		if !isLayoutParent(written(mv.src[:j])) {
			return nil, fmt.Errorf("it would leave %s empty", written(mv.src[:j]))
		}
		out = append(out, parent)
	}
	return out, nil
}

// isLayoutParent: path (as written) is a map the newest layout groups
// moved keys in.
func isLayoutParent(path string) bool {
	for _, m := range katalog.LayoutMoves {
		parent := m.NewestParent()
		if path == parent || strings.HasPrefix(parent, katalog.BoxSpellings[0]+".") && path == katalog.BoxSpellings[1]+strings.TrimPrefix(parent, katalog.BoxSpellings[0]) {
			return true
		}
	}
	return false
}

// applyToTree makes the move on the parsed tree, as apply does on the text.
func (mv *move) applyToTree() {
	last := mv.src[len(mv.src)-1]
	pair := []*yaml.Node{mv.key, mv.val}
	gone, _ := mv.emptied()
	h := mv.holder() // before the indexes shift
	last.m.Content = slices.Delete(last.m.Content, last.i, last.i+2)
	for _, s := range gone {
		s.m.Content = slices.Delete(s.m.Content, s.i, s.i+2)
	}
	if mv.flat {
		// before the key, in the target parent, that held the source
		owner := mv.src[len(mv.dst)]
		owner.m.Content = slices.Insert(owner.m.Content, owner.i, pair...)
		return
	}
	for j := len(mv.newKeys) - 1; j >= 0; j-- {
		pair = []*yaml.Node{
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: mv.newKeys[j]},
			{Kind: yaml.MappingNode, Tag: "!!map", Content: pair},
		}
	}
	if len(mv.newKeys) > 0 && h == last.m {
		// created where the key stood
		h.Content = slices.Insert(h.Content, last.i, pair...)
		return
	}
	h.Content = append(h.Content, pair...)
}

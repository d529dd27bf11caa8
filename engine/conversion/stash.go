package conversion

import (
	"fmt"
	"maps"
	"strings"
	"unsafe"

	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// stashEntry is what one version lost: values to set back and paths to
// remove (fields the way back adds that the original did not have).
//
// A value the way back computes from an expression is restored only while
// that expression's inputs still hold what they held when the entry was
// written (Guards, recorded for the way back's last hop, from Via): then
// nothing that decides the field was edited, and the original is exact.
// After an edit the computed value wins and the entry is dropped. Values the
// way back does not compute (fields it leaves unset or sets to a literal)
// are always restored: no edit at the other version can express them.
//
// An entry read from the annotation holds its values in Set, as a tree; one
// a conversion records holds them as leaves (set), which cost no map per
// level — the two are read alike (each) and encode alike.
type stashEntry struct {
	Set    map[string]any
	Unset  [][]string
	Via    string
	Guards []guard

	leaves []stashLeaf
	// leafPaths holds the leaves' paths one after the other; the inline
	// arrays hold the few a conversion usually records.
	leafPaths   []string
	inlineLeaf  [2]stashLeaf
	inlinePaths [8]string
	// walkPath is each's path, reused.
	walkPath [8]string
}

// stashLeaf is one value set: its path is leafPaths[from:to].
type stashLeaf struct {
	from, to int
	value    any
}

func (s *stashEntry) leafPath(l stashLeaf) []string { return s.leafPaths[l.from:l.to:l.to] }

// guard is what the expression at At (a target path of the way back's last
// hop) read when the entry was written.
type guard struct {
	At   []string
	Read []input
}

// input is one data path of the hop's source and its value (or absence).
type input struct {
	Path    []string
	Value   any
	Present bool
}

func (s *stashEntry) empty() bool { return len(s.Set) == 0 && len(s.leaves) == 0 && len(s.Unset) == 0 }

// set records orig's value v at path.
func (s *stashEntry) set(path []string, v any) {
	if s.leaves == nil {
		s.leaves, s.leafPaths = s.inlineLeaf[:0], s.inlinePaths[:0]
	}
	from := len(s.leafPaths)
	s.leafPaths = append(s.leafPaths, path...)
	s.leaves = append(s.leaves, stashLeaf{from, len(s.leafPaths), runtime.DeepCopyJSONValue(v)})
}

// setTree returns the entry's values as one tree, as Set holds them: the
// leaves set in order into the tree of Set.
func (s *stashEntry) setTree() map[string]any {
	if len(s.leaves) == 0 {
		return s.Set
	}
	tree := runtime.DeepCopyJSONValue(s.Set)
	m, _ := tree.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	for _, l := range s.leaves {
		path := s.leafPath(l)
		cur := m
		for _, k := range path[:len(path)-1] {
			next, ok := cur[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[k] = next
			}
			cur = next
		}
		cur[path[len(path)-1]] = l.value
	}
	return m
}

// each calls f for every change the entry holds: the leaves of Set (an
// empty map is a leaf) with their value, then the Unset paths (set=false).
// The path f gets is reused after f returns: f copies what it keeps.
func (s *stashEntry) each(f func(path []string, v any, set bool)) {
	if len(s.leaves) > 0 && len(s.Set) > 0 {
		tree := &stashEntry{Set: s.setTree(), Unset: s.Unset}
		tree.each(f)
		return
	}
	buf := s.walkPath[:]
	for k, v := range s.Set {
		buf[0] = k
		eachLeaf(buf[:1], v, f)
	}
	for _, l := range s.leaves {
		eachLeaf(append(buf[:0], s.leafPath(l)...), l.value, f)
	}
	for _, p := range s.Unset {
		f(p, nil, false)
	}
}

// eachLeaf calls f for every leaf of v, at path and below (an empty map is
// a leaf).
func eachLeaf(path []string, v any, f func(path []string, v any, set bool)) {
	if m, ok := v.(map[string]any); ok && len(m) > 0 {
		for k, x := range m {
			eachLeaf(append(path, k), x, f)
		}
		return
	}
	f(path, v, true)
}

// guard records, for every change the way back computes, what the
// computing expression read from src (the last hop's source).
func (c *Converter) guard(s *stashEntry, last *engine.Path, src map[string]any) {
	var seen map[*engine.Node]bool // most changes are not computed: no guard
	s.each(func(path []string, _ any, _ bool) {
		n, depth := c.computingNode(last, path)
		if n == nil || seen[n] {
			return
		}
		if seen == nil {
			seen = map[*engine.Node]bool{}
		}
		seen[n] = true
		g := guard{At: append([]string(nil), path[:depth]...)}
		for _, in := range c.inputs[n] {
			v, ok := lookup(src, in)
			g.Read = append(g.Read, input{Path: in, Value: v, Present: ok})
		}
		s.Guards = append(s.Guards, g)
	})
	if len(s.Guards) > 0 {
		s.Via = last.From
		// Deterministic output: guards in path order.
		sortGuards(s.Guards)
	}
}

// restore applies a stash entry to a converted object: values the last path
// does not compute always, computed ones while their guard holds on src
// (the last hop's source).
func (c *Converter) restore(obj map[string]any, s *stashEntry, last *engine.Path, src map[string]any) {
	holds := map[string]bool{}
	if s.Via == last.From {
		for _, g := range s.Guards {
			holds[pathKey(g.At)] = g.holds(src)
		}
	}
	applies := func(path []string) bool {
		n, depth := c.computingNode(last, path)
		return n == nil || holds[pathKey(path[:depth])] // else edited since, or stashed for another hop: the computed value wins
	}
	s.each(func(path []string, v any, set bool) {
		if set && applies(path) {
			setIn(obj, path, runtime.DeepCopyJSONValue(v))
		}
	})
	// Fields before the maps that hold them: a map the path always writes
	// goes only when nothing is left in it.
	for i := len(s.Unset) - 1; i >= 0; i-- {
		path := s.Unset[i]
		if n := nodeAt(last, path); n != nil && n.IsMap() {
			if v, ok := lookup(obj, path); ok {
				if m, isMap := v.(map[string]any); isMap && len(m) == 0 {
					deleteIn(obj, path)
				}
			}
			continue
		}
		if applies(path) {
			deleteIn(obj, path)
		}
	}
	meta, _ := obj["metadata"].(map[string]any)
	for _, key := range []string{"labels", "annotations"} {
		if m, ok := meta[key].(map[string]any); ok && len(m) == 0 && !explicitlyEmpty(s.setTree(), key) {
			deleteIn(obj, []string{"metadata", key})
		}
	}
}

func explicitlyEmpty(set map[string]any, key string) bool {
	meta, _ := set["metadata"].(map[string]any)
	m, ok := meta[key].(map[string]any)
	return ok && len(m) == 0
}

func (g *guard) holds(src map[string]any) bool {
	for _, in := range g.Read {
		v, ok := lookup(src, in.Path)
		if ok != in.Present || (ok && !jsonval.Equal(v, in.Value)) {
			return false
		}
	}
	return true
}

// nodeAt returns the node of path p that writes exactly the field at path,
// or nil.
func nodeAt(p *engine.Path, path []string) *engine.Node {
	n, rest := rootNode(p, path)
	for _, k := range rest {
		if n == nil || !n.IsMap() {
			return nil
		}
		n = n.Get(k)
	}
	return n
}

// rootNode is the tree of path p that writes path, and the rest of path
// within it.
func rootNode(p *engine.Path, path []string) (*engine.Node, []string) {
	switch path[0] {
	case "spec":
		return p.Spec, path[1:]
	case "status":
		return p.Status, path[1:]
	case "metadata":
		if len(path) >= 2 && path[1] == "labels" {
			return p.Labels, path[2:]
		}
		if len(path) >= 2 && path[1] == "annotations" {
			return p.Annotations, path[2:]
		}
	}
	return nil, nil
}

// computingNode returns the node of path p that computes the field at path
// (an expression, or a list holding expressions, at or above it) and the
// length of its own path, or nil when p leaves the field unset or writes a
// literal there.
func (c *Converter) computingNode(p *engine.Path, path []string) (*engine.Node, int) {
	n, rest := rootNode(p, path)
	depth := len(path) - len(rest)
	for i := 0; n != nil; i++ {
		if _, ok := c.inputs[n]; ok {
			return n, depth + i
		}
		if i >= len(rest) || !n.IsMap() {
			return nil, 0
		}
		n = n.Get(rest[i])
	}
	return nil, 0
}

// lookup reads the value at path in obj.
func lookup(obj map[string]any, path []string) (any, bool) {
	var cur any = obj
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func pathKey(p []string) string { return strings.Join(p, "\x00") }

// setIn writes v at path, copying the maps along the way: converted objects
// share unchanged subtrees with their source. (maps.Clone copies a small
// map's memory without rehashing its keys.)
func setIn(obj map[string]any, path []string, v any) {
	m := obj
	for _, k := range path[:len(path)-1] {
		next, _ := m[k].(map[string]any)
		cp := maps.Clone(next)
		if cp == nil {
			cp = make(map[string]any, 1)
		}
		m[k] = cp
		m = cp
	}
	m[path[len(path)-1]] = v
}

func deleteIn(obj map[string]any, path []string) {
	m := obj
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			return
		}
		cp := maps.Clone(next)
		if cp == nil {
			cp = map[string]any{}
		}
		m[k] = cp
		m = cp
	}
	delete(m, path[len(path)-1])
}

func annotations(obj map[string]any) map[string]any {
	meta, _ := obj["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	return ann
}

func readStash(obj map[string]any) (map[string]*stashEntry, error) {
	return stashIn(annotations(obj))
}

// stashIn reads the stash in an object's annotations.
func stashIn(ann map[string]any) (map[string]*stashEntry, error) {
	raw, ok := ann[StashAnnotation].(string)
	if !ok || raw == "" {
		return nil, nil // most objects carry no stash: allocate nothing
	}
	var wire map[string]*wireEntry
	// Numbers decode as the API server decodes objects (int64 or float64),
	// so restored values compare equal to the originals.
	if err := utiljson.Unmarshal([]byte(raw), &wire); err != nil {
		return nil, fmt.Errorf("annotation %s is not valid JSON (%w); remove it or restore it from the object's history", StashAnnotation, err)
	}
	out := make(map[string]*stashEntry, len(wire))
	for v, w := range wire {
		e, err := w.entry()
		if err != nil {
			return nil, fmt.Errorf("annotation %s: entry %q %w; remove the annotation or restore it from the object's history", StashAnnotation, v, err)
		}
		out[v] = e
	}
	return out, nil
}

// withoutStash returns obj without the stash annotation (shallow copies).
func withoutStash(obj map[string]any) map[string]any {
	ann := annotations(obj)
	if _, ok := ann[StashAnnotation]; !ok {
		return obj
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	deleteIn(out, []string{"metadata", "annotations", StashAnnotation})
	if len(annotations(out)) == 0 {
		deleteIn(out, []string{"metadata", "annotations"})
	}
	return out
}

// stashPath is where the stash annotation goes.
var stashPath = []string{"metadata", "annotations", StashAnnotation}

// stashValue encodes the entries (in version order) as the stash
// annotation's value; none is "" (no annotation: paths see objects without
// it).
func stashValue(entries []versionEntry, limit int) (string, error) {
	if len(entries) == 0 {
		return "", nil
	}
	raw, err := appendStash(make([]byte, 0, 128), entries)
	if err != nil {
		return "", fmt.Errorf("encoding the round-trip annotation: %w", err)
	}
	if len(raw) > limit {
		return "", fmt.Errorf("what the other versions cannot hold needs %d bytes in annotation %s, over the %d-byte limit (%s); add the fields to the target schema or map them in the path", len(raw), StashAnnotation, limit, stashSummary(entries))
	}
	// raw is not written to again: the string shares its bytes.
	return unsafe.String(unsafe.SliceData(raw), len(raw)), nil
}

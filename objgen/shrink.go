package objgen

import (
	"math"
	"slices"
	"unicode/utf8"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// maxShrinkPasses bounds Shrink; every accepted step makes the object strictly
// smaller, so this is a safety net only.
const maxShrinkPasses = 1000

// Shrink returns a smallest variant of obj for which fails still holds, for
// reporting "the smallest object found that breaks it". It repeatedly tries,
// until none succeeds:
//
//   - dropping optional fields, map entries, labels and annotations (never
//     apiVersion, kind, metadata.name or metadata.namespace);
//   - setting nullable fields to null;
//   - emptying lists and removing items (halves first, then single items);
//   - shortening strings (to "", else the shortest prefix that still fails),
//     choosing earlier enum values, turning int-or-string strings into 0;
//   - moving numbers toward 0, or the schema's minimum (maximum) when 0 is out
//     of range, by binary search, respecting multipleOf; true becomes false.
//
// When obj is valid against s, every step must keep it valid (Validate), so
// the result is a valid object too; when it is not, validity is not required.
// fails receives a copy it may modify. If fails(obj) does not hold, Shrink
// returns a copy of obj unchanged. obj itself is never modified.
func Shrink(s *structuralschema.Structural, obj map[string]any, fails func(map[string]any) bool) map[string]any {
	cur := deepCopyMap(obj)
	if !fails(deepCopyMap(cur)) {
		return cur
	}
	sh := &shrinker{s: s, fails: fails, cur: cur}
	if c, err := newChecker(s, true); err == nil {
		sh.chk = c
		sh.keepValid = len(c.validateObject(cur)) == 0
	}
	for pass := 0; pass < maxShrinkPasses && sh.pass(); pass++ {
	}
	return sh.cur
}

type shrinker struct {
	s         *structuralschema.Structural
	chk       *checker
	keepValid bool
	fails     func(map[string]any) bool
	cur       map[string]any
}

// path addresses a value: string keys and int indices.
type path []any

// accept reports whether cand still fails (and stays valid when required).
func (sh *shrinker) accept(cand map[string]any) bool {
	if sh.keepValid && len(sh.chk.validateObject(cand)) > 0 {
		return false
	}
	return sh.fails(deepCopyMap(cand))
}

// try applies edit to a copy of the current object and keeps it if accepted.
func (sh *shrinker) try(edit func(root map[string]any) bool) bool {
	cand := deepCopyMap(sh.cur)
	if !edit(cand) || !sh.accept(cand) {
		return false
	}
	sh.cur = cand
	return true
}

func (sh *shrinker) trySet(p path, v any) bool {
	return sh.try(func(root map[string]any) bool { return set(root, p, v) })
}

// pass tries every simplification once, reporting whether any was kept.
func (sh *shrinker) pass() bool {
	changed := false
	for _, p := range collectPaths(sh.cur, nil) {
		v, ok := get(sh.cur, p)
		if !ok {
			continue // removed with an ancestor
		}
		node, known := sh.nodeAt(p)
		if sh.deletable(p) && sh.try(func(root map[string]any) bool { return remove(root, p) }) {
			changed = true
			continue
		}
		if known && node != nil && node.Nullable && v != nil && sh.trySet(p, nil) {
			changed = true
			continue
		}
		switch x := v.(type) {
		case []any:
			changed = sh.shrinkList(p, len(x)) || changed
		case map[string]any, nil:
		default:
			if !sh.identity(p) {
				changed = sh.shrinkScalar(p, v, node) || changed
			}
		}
	}
	return changed
}

// collectPaths lists the paths of v's descendants, parents before children,
// map keys sorted.
func collectPaths(v any, prefix path) []path {
	var out []path
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			p := append(slices.Clone(prefix), k)
			out = append(out, p)
			out = append(out, collectPaths(x[k], p)...)
		}
	case []any:
		for i, e := range x {
			p := append(slices.Clone(prefix), i)
			out = append(out, p)
			out = append(out, collectPaths(e, p)...)
		}
	}
	return out
}

// nodeAt returns the schema of the value at p; known is false under
// metadata and where the schema leaves values open (node is nil then too).
func (sh *shrinker) nodeAt(p path) (node *structuralschema.Structural, known bool) {
	if len(p) > 0 && p[0] == "metadata" {
		return nil, false
	}
	node = sh.s
	for _, seg := range p {
		if node == nil {
			return nil, false
		}
		switch k := seg.(type) {
		case string:
			if prop, ok := node.Properties[k]; ok {
				node = &prop
			} else if node.AdditionalProperties != nil {
				node = node.AdditionalProperties.Structural
			} else {
				return nil, false
			}
		case int:
			node = node.Items
		}
	}
	return node, node != nil
}

// deletable reports whether the field at p may be dropped: any map entry
// that is not required by its schema and not part of the object's identity.
func (sh *shrinker) deletable(p path) bool {
	key, ok := p[len(p)-1].(string)
	if !ok {
		return false // list items are removed by shrinkList
	}
	if len(p) == 1 {
		return key != "apiVersion" && key != "kind" && key != "metadata"
	}
	if p[0] == "metadata" {
		return !(len(p) == 2 && (key == "name" || key == "namespace" || key == "generateName"))
	}
	parent, _ := sh.nodeAt(p[:len(p)-1])
	if parent != nil && parent.ValueValidation != nil && slices.Contains(parent.ValueValidation.Required, key) {
		return false
	}
	return true
}

// identity reports whether p is part of an object's identity, which Shrink
// leaves alone: metadata, and apiVersion and kind of the object and of
// embedded resources.
func (sh *shrinker) identity(p path) bool {
	if p[0] == "metadata" {
		return true
	}
	key, _ := p[len(p)-1].(string)
	if key != "apiVersion" && key != "kind" {
		return false
	}
	if len(p) == 1 {
		return true
	}
	parent, _ := sh.nodeAt(p[:len(p)-1])
	return parent != nil && parent.XEmbeddedResource
}

// shrinkList empties the list at p, else removes chunks of items, halves
// first.
func (sh *shrinker) shrinkList(p path, n int) bool {
	if n == 0 {
		return false
	}
	if sh.trySet(p, []any{}) {
		return true
	}
	changed := false
	for size := n / 2; size >= 1; size /= 2 {
		for start := 0; ; {
			v, _ := get(sh.cur, p)
			l, _ := v.([]any)
			if start+size > len(l) {
				break
			}
			cut := slices.Concat(l[:start:start], l[start+size:])
			if sh.trySet(p, cut) {
				changed = true
			} else {
				start += size
			}
		}
	}
	return changed
}

func (sh *shrinker) shrinkScalar(p path, v any, node *structuralschema.Structural) bool {
	// earlier enum values first
	if node != nil && node.ValueValidation != nil && len(node.ValueValidation.Enum) > 0 {
		cv := canonical(v)
		for _, e := range node.ValueValidation.Enum {
			ev := jsonval.Normalize(deepCopy(e.Object))
			if canonical(ev) == cv {
				return false
			}
			if sh.trySet(p, ev) {
				return true
			}
		}
		return false
	}
	switch x := v.(type) {
	case bool:
		return x && sh.trySet(p, false)
	case string:
		if node != nil && node.XIntOrString && sh.trySet(p, int64(0)) {
			return true
		}
		return sh.shrinkString(p, x)
	case int64:
		return sh.shrinkInt(p, x, node)
	case float64:
		t := numberTarget(node)
		if t != x && sh.trySet(p, jsonval.Normalize(t)) {
			return true
		}
		if tr := math.Trunc(x); tr != x && sh.trySet(p, jsonval.Normalize(tr)) {
			return true
		}
	}
	return false
}

// shrinkString tries "", then binary-searches the shortest failing prefix.
func (sh *shrinker) shrinkString(p path, v string) bool {
	if v == "" {
		return false
	}
	if sh.trySet(p, "") {
		return true
	}
	runes := []rune(v)
	lo, hi := 0, len(runes) // lo: known not to work; hi: works
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if sh.trySet(p, string(runes[:mid])) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi < utf8.RuneCountInString(v)
}

// shrinkInt moves v toward the schema's target (0 or the nearest bound) by
// binary search over multiples of multipleOf.
func (sh *shrinker) shrinkInt(p path, v int64, node *structuralschema.Structural) bool {
	step := int64(1)
	target := int64(0)
	if node != nil && (node.Type == "integer" || node.Type == "number" || node.XIntOrString) {
		if vv := node.ValueValidation; vv != nil && vv.MultipleOf != nil {
			if st, ok := integerStep(*vv.MultipleOf); ok {
				step = st
			}
		}
		lo, hi, hasLo, hasHi := integerBounds(node)
		switch {
		case hasLo && lo > 0:
			target = ceilDiv(lo, step) * step
		case hasHi && hi < 0:
			target = floorDiv(hi, step) * step
		}
	}
	if v%step != 0 || v == target {
		return false
	}
	if sh.trySet(p, target) {
		return true
	}
	// in units of step: lo is known not to work, hi works
	lo, hi := target/step, v/step
	changed := false
	for hi-lo > 1 || lo-hi > 1 {
		mid := lo + (hi-lo)/2
		if sh.trySet(p, mid*step) {
			hi = mid
			changed = true
		} else {
			lo = mid
		}
	}
	return changed
}

func numberTarget(node *structuralschema.Structural) float64 {
	if node == nil || node.ValueValidation == nil {
		return 0
	}
	vv := node.ValueValidation
	switch {
	case vv.Minimum != nil && *vv.Minimum > 0:
		return *vv.Minimum
	case vv.Maximum != nil && *vv.Maximum < 0:
		return *vv.Maximum
	}
	return 0
}

func get(root map[string]any, p path) (any, bool) {
	var cur any = root
	for _, seg := range p {
		switch k := seg.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[k]; !ok {
				return nil, false
			}
		case int:
			l, ok := cur.([]any)
			if !ok || k >= len(l) {
				return nil, false
			}
			cur = l[k]
		}
	}
	return cur, true
}

func set(root map[string]any, p path, v any) bool {
	parent, ok := get(root, p[:len(p)-1])
	if !ok {
		return false
	}
	switch k := p[len(p)-1].(type) {
	case string:
		m, ok := parent.(map[string]any)
		if !ok {
			return false
		}
		m[k] = v
	case int:
		l, ok := parent.([]any)
		if !ok || k >= len(l) {
			return false
		}
		l[k] = v
	}
	return true
}

func remove(root map[string]any, p path) bool {
	parent, ok := get(root, p[:len(p)-1])
	if !ok {
		return false
	}
	m, ok := parent.(map[string]any)
	if !ok {
		return false
	}
	delete(m, p[len(p)-1].(string))
	return true
}

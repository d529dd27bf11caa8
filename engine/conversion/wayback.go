package conversion

import (
	"reflect"
	"sort"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// wayBack computes what converting `converted` back to `from` would not
// reproduce of orig, and, for what the way back computes, the values its
// expressions read (the guards restore checks). It is diff(orig,
// route(converted, to→from)) without building the last hop's object: that
// hop's spec and status trees are compared against orig as they evaluate.
// The differences go into d, which is empty.
func (c *Converter) wayBack(conv *engine.Conversion, r *route, converted map[string]any, orig map[string]any, sc *engine.Scope, d *stashEntry) error {
	if r.back == nil {
		return noRoute(conv, r.to, r.from)
	}
	paths, skip := r.back.paths, r.skip
	cur := converted
	for _, p := range paths[:len(paths)-1] {
		next, err := c.apply(conv, p, cur, sc)
		if err != nil {
			return err
		}
		cur = next
	}
	last := paths[len(paths)-1]
	scope := pathScope(sc, cur)
	facts := c.facts[last]       // last.To is the hop's source version
	path := make([]string, 1, 8) // reused: copied only where a difference is recorded
	for _, key := range [...]string{"spec", "status"} {
		path[0] = key
		node := last.Spec
		if key == "status" {
			node = last.Status
		}
		ov, hasOrig := orig[key]
		cv, hasCur := cur[key]
		switch {
		case key == "spec" && node != nil && (hasSpec(cur) || facts.emptySpecValid):
			if err := diffSpec(d, path, conv, last, cur, scope, ov, hasOrig, skip); err != nil {
				return hopError(last, err)
			}
		case node != nil && hasCur:
			if err := diffNode(d, path, node, scope, ov, hasOrig, skip); err != nil {
				return hopError(last, err)
			}
		case key == "status" && hasCur:
			diffValue(d, path, ov, pruned(cv, &facts.status), hasOrig, true)
		default:
			diffValue(d, path, ov, cv, hasOrig, hasCur)
		}
	}
	// Labels and annotations a path maps come back too.
	om, _ := orig["metadata"].(map[string]any)
	back := cur
	if last.Labels != nil || last.Annotations != nil {
		meta, err := mappedMetadata(last, cur, scope)
		if err != nil {
			return hopError(last, err)
		}
		back = map[string]any{"metadata": meta}
	}
	bm, _ := back["metadata"].(map[string]any)
	for _, key := range []string{"labels", "annotations"} {
		diffMeta(d, key, om, bm)
	}
	if len(d.Unset) > 1 {
		sort.Slice(d.Unset, func(i, j int) bool { return strings.Join(d.Unset[i], "\x00") < strings.Join(d.Unset[j], "\x00") })
	}
	c.guard(d, last, cur)
	return nil
}

// diffMeta compares orig's labels or annotations with the way back's key by
// key, so that each key is restored (or not) on its own.
func diffMeta(d *stashEntry, key string, orig, back map[string]any) {
	path := make([]string, 2, 8) // reused: copied only where a difference is recorded
	path[0], path[1] = "metadata", key
	ov, hasOrig := orig[key]
	bv, hasBack := back[key]
	om, oIsMap := ov.(map[string]any)
	bm, bIsMap := bv.(map[string]any)
	switch {
	case hasOrig && !oIsMap, hasBack && !bIsMap:
		diffValue(d, path, ov, bv, hasOrig, hasBack)
	case hasOrig && len(om) == 0 && !hasBack:
		d.set(path, om) // an explicit empty map comes back as it was
	default:
		diffValue(d, path, om, bm, true, true)
	}
}

// diffSpec compares the spec the last hop writes with orig's, as apply
// writes it. Where the spec may not be written (a source without spec, a
// result that may be empty) it is evaluated first; otherwise it is compared
// as it evaluates.
func diffSpec(d *stashEntry, path []string, conv *engine.Conversion, last *engine.Path, src map[string]any, scope *engine.Scope, orig any, hasOrig bool, skip map[*engine.Node]bool) error {
	n := last.Spec
	if hasSpec(src) && !canBeEmpty(n) {
		return diffNode(d, path, n, scope, orig, hasOrig, skip)
	}
	v, present, err := n.Eval(scope)
	if err != nil {
		return err
	}
	diffTree(d, path, n, v, specWritten(conv, last, src, v, present), orig, hasOrig)
	return nil
}

// diffTree records the differences between orig and v, the value node n
// evaluated to, walking map nodes like diffNode.
func diffTree(d *stashEntry, path []string, n *engine.Node, v any, present bool, orig any, hasOrig bool) {
	vm, isMap := v.(map[string]any)
	if !n.IsMap() || !present || !isMap {
		diffValue(d, path, orig, v, hasOrig, present)
		return
	}
	om, origIsMap := orig.(map[string]any)
	if hasOrig && !origIsMap {
		d.set(path, orig)
		return
	}
	if !hasOrig {
		d.Unset = append(d.Unset, append([]string(nil), path...))
	}
	for _, f := range n.Fields {
		fv, has := vm[f.Key]
		ov, ho := om[f.Key]
		diffTree(d, append(path, f.Key), f.Value, fv, has, ov, ho)
	}
	for k, ov := range om {
		if n.Get(k) == nil {
			d.set(append(path, k), ov)
		}
	}
}

// diffNode records the differences between orig and what node n evaluates
// to, without building maps for map nodes.
func diffNode(d *stashEntry, path []string, n *engine.Node, scope *engine.Scope, orig any, hasOrig bool, skip map[*engine.Node]bool) error {
	if !n.IsMap() {
		// An identity leaf gives orig back — except a null, which a plain
		// reference reads as absent, and an absent field, which the target's
		// default may have filled.
		if skip[n] && hasOrig && orig != nil {
			return nil
		}
		v, present, err := n.Eval(scope)
		if err != nil {
			return err
		}
		diffValue(d, path, orig, v, hasOrig, present)
		return nil
	}
	// A map node is always present. Where orig lacks it, each field it
	// writes is recorded, so that each is removed (or kept, after an edit)
	// on its own; the map itself goes when nothing is left in it.
	om, isMap := orig.(map[string]any)
	switch {
	case !hasOrig:
		d.Unset = append(d.Unset, append([]string(nil), path...))
	case !isMap:
		d.set(path, orig)
		return nil
	}
	seen := 0
	for _, f := range n.Fields {
		ov, ho := om[f.Key]
		if ho {
			seen++
		}
		if err := diffNode(d, append(path, f.Key), f.Value, scope, ov, ho, skip); err != nil {
			return err
		}
	}
	if seen < len(om) {
		for k, ov := range om {
			if n.Get(k) == nil {
				d.set(append(path, k), ov)
			}
		}
	}
	return nil
}

func diffValue(d *stashEntry, path []string, a, b any, hasA, hasB bool) {
	switch {
	case !hasA && !hasB:
		return
	case !hasA:
		d.Unset = append(d.Unset, append([]string(nil), path...))
		return
	case !hasB:
		d.set(path, a)
		return
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok && sameMap(am, bm) {
		return // shared with the original: a converted object keeps what no path writes
	}
	if aok && bok {
		// Keys of orig first, then those only the way back has; the unset
		// list is sorted where it is recorded, so output stays deterministic.
		for k, av := range am {
			bv, hb := bm[k]
			diffValue(d, append(path, k), av, bv, true, hb)
		}
		for k, bv := range bm {
			if _, ha := am[k]; !ha {
				diffValue(d, append(path, k), nil, bv, false, true)
			}
		}
		return
	}
	if !jsonval.Equal(a, b) {
		d.set(path, a)
	}
}

// sameMap reports whether a and b are the same map (not only equal ones).
func sameMap(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// settle does to an object what the API server does before it stores or
// returns it, where that changes anything: the schema's defaults. Inputs
// are read, and the way back computed, as a client will see them.
func (c *Converter) settle(s *structuralschema.Structural, obj map[string]any) map[string]any {
	d := c.defaults[s]
	if d == nil || !d.needed(obj) {
		return obj
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	for _, k := range []string{"spec", "status"} {
		if v, ok := out[k]; ok {
			out[k] = runtime.DeepCopyJSONValue(v)
		}
	}
	defaulting.Default(out, s)
	return out
}

// defaultsTree is the part of a schema that leads to defaults, built once:
// checking whether an object lacks one walks only it.
type defaultsTree struct {
	props map[string]*defaultsTree
	// fields are props as a list, in key order (walked on every object).
	fields     []defaultsField
	hasDefault bool
	nullable   bool
	items      *defaultsTree
	additional *defaultsTree
}

// buildDefaults returns the defaults tree of s, nil when s has none.
func buildDefaults(s *structuralschema.Structural) *defaultsTree {
	if s == nil {
		return nil
	}
	d := &defaultsTree{hasDefault: s.Default.Object != nil, nullable: s.Nullable}
	found := d.hasDefault
	for k := range s.Properties {
		p := s.Properties[k]
		if pd := buildDefaults(&p); pd != nil {
			if d.props == nil {
				d.props = map[string]*defaultsTree{}
			}
			d.props[k] = pd
			found = true
		}
	}
	if d.items = buildDefaults(s.Items); d.items != nil {
		found = true
	}
	if s.AdditionalProperties != nil {
		if d.additional = buildDefaults(s.AdditionalProperties.Structural); d.additional != nil {
			found = true
		}
	}
	if !found {
		return nil
	}
	for k, pd := range d.props {
		d.fields = append(d.fields, defaultsField{k, pd})
	}
	sort.Slice(d.fields, func(i, j int) bool { return d.fields[i].key < d.fields[j].key })
	return d
}

type defaultsField struct {
	key  string
	tree *defaultsTree
}

// missing reports whether a value found (or not) here would be defaulted.
func (d *defaultsTree) missing(v any, found bool) bool {
	return d.hasDefault && (!found || (v == nil && !d.nullable))
}

// needed reports whether defaulting.Default would change x.
func (d *defaultsTree) needed(x any) bool {
	switch x := x.(type) {
	case map[string]any:
		for _, f := range d.fields {
			v, found := x[f.key]
			if f.tree.missing(v, found) || (found && f.tree.needed(v)) {
				return true
			}
		}
		if d.additional != nil {
			for k, v := range x {
				if _, declared := d.props[k]; declared {
					continue
				}
				if d.additional.missing(v, true) || d.additional.needed(v) {
					return true
				}
			}
		}
	case []any:
		if d.items != nil {
			for _, v := range x {
				if d.items.missing(v, true) || d.items.needed(v) {
					return true
				}
			}
		}
	}
	return false
}

// pruned returns v without the fields schema s cannot hold. v is shared
// (read-only) when there is nothing to prune, which is the common case.
func pruned(v any, s *structuralschema.Structural) any {
	if !needsPrune(v, s) {
		return v
	}
	cp := runtime.DeepCopyJSONValue(v)
	pruning.Prune(cp, s, false)
	return cp
}

// needsPrune reports whether pruning v against s would remove anything. It
// answers true for what it does not model (embedded resources), which only
// costs a copy.
func needsPrune(v any, s *structuralschema.Structural) bool {
	if s == nil || s.XEmbeddedResource {
		return s != nil
	}
	switch x := v.(type) {
	case map[string]any:
		if s.Properties != nil {
			for k, e := range x {
				p, ok := s.Properties[k]
				if !ok {
					if !s.XPreserveUnknownFields {
						return true
					}
					continue
				}
				if needsPrune(e, &p) {
					return true
				}
			}
			return false
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
			for _, e := range x {
				if needsPrune(e, s.AdditionalProperties.Structural) {
					return true
				}
			}
			return false
		}
		return !s.XPreserveUnknownFields && len(x) > 0
	case []any:
		if s.Items == nil {
			return false
		}
		for _, e := range x {
			if needsPrune(e, s.Items) {
				return true
			}
		}
	}
	return false
}

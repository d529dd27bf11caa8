// Package conversion executes a plan's conversion paths on objects: the
// semantics behind `orkestra convert` and the /convert webhook.
//
// A path replaces spec (and status, when it maps status) with its evaluated
// output, merges the labels and annotations it maps, and leaves every other
// part of the object alone; apiVersion becomes the target. Where no direct
// path exists the object goes through the storage version. Round trips are
// lossless: what the target version cannot hold travels in one annotation
// (StashAnnotation) and is restored when the object converts back, filling
// only fields the path sets to a literal or leaves unset.
package conversion

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/orkspace/orkestra-cel/engine"
)

// StashAnnotation holds, per version, what a conversion could not carry —
// spec, status, labels and annotations that the way back would not
// reproduce: JSON {"<version>": {"set": {...}, "unset": [[path…]…]}}.
const StashAnnotation = "conversion.orkestra.orkspace.io/stash"

// DefaultMaxStashBytes bounds the stash annotation (the API server allows
// 256 KiB for all annotations together).
const DefaultMaxStashBytes = 64 << 10

// Options tune the converter.
type Options struct {
	// MaxStashBytes bounds the stash annotation; 0 means DefaultMaxStashBytes.
	MaxStashBytes int
}

// Converter converts objects of the CRDs a plan declares conversion for. It
// is immutable and safe for concurrent use.
type Converter struct {
	plan *engine.Plan
	opts Options
	// identity holds the way-back leaves that provably give the original
	// back: a path B→A reading B's field s into A's field t, where the path
	// A→B wrote s by reading t. The way back skips them.
	identity map[*engine.Node]bool
}

// New returns a converter over plan.
func New(plan *engine.Plan, opts Options) *Converter {
	if opts.MaxStashBytes <= 0 {
		opts.MaxStashBytes = DefaultMaxStashBytes
	}
	return &Converter{plan: plan, opts: opts, identity: identityLeaves(plan)}
}

// identityLeaves finds, for every pair of direct paths A→B and B→A, the
// leaves of B→A's spec that read back exactly what A→B copied.
func identityLeaves(plan *engine.Plan) map[*engine.Node]bool {
	out := map[*engine.Node]bool{}
	for _, conv := range plan.Conversions {
		for pair, back := range conv.Paths {
			fwd := conv.Paths[[2]string{pair[1], pair[0]}]
			if fwd == nil || fwd.Spec == nil || back.Spec == nil {
				continue
			}
			var walk func(n *engine.Node, target []string)
			walk = func(n *engine.Node, target []string) {
				switch {
				case n.IsMap():
					for _, f := range n.Fields {
						walk(f.Value, append(target, f.Key))
					}
				case n.IsExpr():
					src := fieldPath(n)
					if len(src) < 2 || src[0] != "spec" {
						return
					}
					w := fwd.Spec
					for _, k := range src[1:] {
						if w == nil || !w.IsMap() {
							return
						}
						w = w.Get(k)
					}
					if w != nil && w.IsExpr() && slices.Equal(fieldPath(w), target) {
						out[n] = true
					}
				}
			}
			walk(back.Spec, []string{"spec"})
		}
	}
	return out
}

func fieldPath(n *engine.Node) []string {
	if r, ok := n.Expr.(engine.FieldRef); ok {
		return r.FieldPath()
	}
	return nil
}

// Handles reports whether the converter knows the group/kind.
func (c *Converter) Handles(gk schema.GroupKind) bool {
	_, ok := c.plan.Conversions[gk]
	return ok
}

// Error is a failed conversion: it names the object, the path and, when an
// expression failed, the field and the expression.
type Error struct {
	Object   string // kind namespace/name
	From, To string
	Err      error
}

func (e *Error) Error() string {
	path := ""
	if e.From != "" {
		path = fmt.Sprintf(" from %s to %s", e.From, e.To)
	}
	return fmt.Sprintf("converting %s%s: %v", e.Object, path, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

func describe(obj *unstructured.Unstructured) string {
	name := obj.GetName()
	if ns := obj.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	if name == "" {
		name = "<unnamed>"
	}
	return obj.GetKind() + " " + name
}

// Convert converts obj to desiredAPIVersion (group/version). The input is not
// modified. The same version returns obj unchanged.
func (c *Converter) Convert(obj *unstructured.Unstructured, desiredAPIVersion string) (*unstructured.Unstructured, error) {
	fail := func(from, to string, err error) (*unstructured.Unstructured, error) {
		return nil, &Error{Object: describe(obj), From: from, To: to, Err: err}
	}
	srcGV, err := schema.ParseGroupVersion(obj.GetAPIVersion())
	if err != nil || srcGV.Version == "" {
		return fail("", "", fmt.Errorf("apiVersion %q is not group/version", obj.GetAPIVersion()))
	}
	dstGV, err := schema.ParseGroupVersion(desiredAPIVersion)
	if err != nil || dstGV.Version == "" {
		return fail("", "", fmt.Errorf("desired apiVersion %q is not group/version", desiredAPIVersion))
	}
	if srcGV.Group != dstGV.Group {
		return fail(srcGV.Version, dstGV.Version, fmt.Errorf("cannot convert between groups %q and %q", srcGV.Group, dstGV.Group))
	}
	gk := schema.GroupKind{Group: srcGV.Group, Kind: obj.GetKind()}
	conv := c.plan.Conversions[gk]
	if conv == nil {
		return fail(srcGV.Version, dstGV.Version, fmt.Errorf("the katalog declares no conversion for %s; add a conversion block to its entry", gk))
	}
	from, to := srcGV.Version, dstGV.Version
	if from == to {
		return obj, nil
	}
	for _, v := range []string{from, to} {
		if conv.Schemas[v] == nil {
			return fail(from, to, fmt.Errorf("version %q is not served by CRD %s (served: %s)", v, conv.CRD.Object.Name, strings.Join(conv.Versions, ", ")))
		}
	}
	// What the original cannot get back from the converted object travels in
	// the stash; what an earlier conversion stashed for `to` comes back.
	stash, err := readStash(obj.Object)
	if err != nil {
		return fail(from, to, err)
	}
	out, last, err := c.route(conv, obj.Object, from, to)
	if err != nil {
		return fail(from, to, err)
	}
	if own, ok := stash[to]; ok {
		restore(out, own, last)
		delete(stash, to)
	}
	// Identity leaves hold only when both directions are single direct paths.
	var skip map[*engine.Node]bool
	if conv.Paths[[2]string{from, to}] != nil && conv.Paths[[2]string{to, from}] != nil {
		skip = c.identity
	}
	d, err := wayBack(conv, withoutStash(out), to, from, withoutStash(obj.Object), skip)
	if err != nil {
		return fail(from, to, fmt.Errorf("checking the way back from %s: %w", to, err))
	}
	if !d.empty() {
		if stash == nil {
			stash = map[string]*stashEntry{from: d}
		} else {
			stash[from] = d
		}
	} else {
		delete(stash, from)
	}
	if err := writeStash(out, stash, c.opts.MaxStashBytes); err != nil {
		return fail(from, to, err)
	}
	return &unstructured.Unstructured{Object: out}, nil
}

// route applies the paths from → to on a copy of obj and returns the result
// and the last path applied.
func (c *Converter) route(conv *engine.Conversion, obj map[string]any, from, to string) (map[string]any, *engine.Path, error) {
	paths, ok := conv.Route(from, to)
	if !ok {
		return nil, nil, fmt.Errorf("no conversion path from %s to %s (and none through the storage version %s); add one to the katalog", from, to, conv.StorageVersion)
	}
	cur := obj
	for _, p := range paths {
		next, err := apply(conv, p, cur)
		if err != nil {
			return nil, nil, err
		}
		cur = next
	}
	return cur, paths[len(paths)-1], nil
}

// apply runs one path: a new object whose spec/status are the path's output
// (or the source's, passed through), with apiVersion set to the target.
func apply(conv *engine.Conversion, p *engine.Path, src map[string]any) (map[string]any, error) {
	scope := engine.NewScope(src)
	out := make(map[string]any, len(src))
	for k, v := range src {
		out[k] = v // shallow: replaced parts get new values, the rest is shared read-only
	}
	out["apiVersion"] = p.ToAPIVersion
	// A path maps the source's spec and status: an object without them gets
	// none, rather than one holding only the path's literals.
	_, hasSpec := src["spec"]
	if p.Spec != nil && hasSpec {
		v, ok, err := p.Spec.Eval(scope)
		if err != nil {
			return nil, hopError(p, err)
		}
		setOrDelete(out, "spec", v, ok)
	}
	target := conv.Schemas[p.To]
	_, hasStatus := src["status"]
	if p.Status != nil && hasStatus {
		v, ok, err := p.Status.Eval(scope)
		if err != nil {
			return nil, hopError(p, err)
		}
		setOrDelete(out, "status", v, ok)
	} else if st, ok := src["status"]; ok && p.Status == nil {
		// Status passes through, minus what the target's schema cannot hold.
		out["status"] = pruned(st, target.Properties["status"])
	}
	if p.Labels != nil || p.Annotations != nil {
		meta, _ := src["metadata"].(map[string]any)
		newMeta := make(map[string]any, len(meta))
		for k, v := range meta {
			newMeta[k] = v
		}
		for _, m := range metaNodes(p) {
			if m.node == nil {
				continue
			}
			merged, err := mergeMeta(newMeta[m.key], m.node, scope)
			if err != nil {
				return nil, hopError(p, err)
			}
			newMeta[m.key] = merged
		}
		out["metadata"] = newMeta
	}
	return out, nil
}

// hopError names the path an evaluation error happened on.
func hopError(p *engine.Path, err error) error {
	return fmt.Errorf("(path %s→%s) %w", p.From, p.To, err)
}

type metaNode struct {
	key  string
	node *engine.Node
}

func metaNodes(p *engine.Path) [2]metaNode {
	return [2]metaNode{{"labels", p.Labels}, {"annotations", p.Annotations}}
}

// mergeMeta merges what a path maps into existing labels or annotations.
func mergeMeta(old any, n *engine.Node, scope *engine.Scope) (map[string]any, error) {
	v, _, err := n.Eval(scope)
	if err != nil {
		return nil, err
	}
	merged := map[string]any{}
	if old, ok := old.(map[string]any); ok {
		for k, x := range old {
			merged[k] = x
		}
	}
	if set, ok := v.(map[string]any); ok {
		for k, x := range set {
			merged[k] = x
		}
	}
	return merged, nil
}

// wayBack computes what converting `converted` back to `from` would not
// reproduce of orig. It is diff(orig, route(converted, to→from)) without
// building the last hop's object: that hop's spec and status trees are
// compared against orig as they evaluate.
func wayBack(conv *engine.Conversion, converted map[string]any, to, from string, orig map[string]any, skip map[*engine.Node]bool) (*stashEntry, error) {
	paths, ok := conv.Route(to, from)
	if !ok {
		return nil, fmt.Errorf("no conversion path from %s to %s (and none through the storage version %s); add one to the katalog", to, from, conv.StorageVersion)
	}
	cur := converted
	for _, p := range paths[:len(paths)-1] {
		next, err := apply(conv, p, cur)
		if err != nil {
			return nil, err
		}
		cur = next
	}
	last := paths[len(paths)-1]
	scope := engine.NewScope(cur)
	d := &stashEntry{}
	path := make([]string, 1, 8) // reused: copied only where a difference is recorded
	for _, top := range []struct {
		key    string
		node   *engine.Node
		schema structuralschema.Structural
	}{{"spec", last.Spec, structuralschema.Structural{}}, {"status", last.Status, conv.Schemas[from].Properties["status"]}} {
		path[0] = top.key
		ov, hasOrig := orig[top.key]
		cv, hasCur := cur[top.key]
		switch {
		case top.node != nil && hasCur:
			if err := diffNode(d, path, top.node, scope, ov, hasOrig, skip); err != nil {
				return nil, hopError(last, err)
			}
		case top.key == "status" && hasCur:
			diffValue(d, path, ov, pruned(cv, top.schema), hasOrig, true)
		default:
			diffValue(d, path, ov, cv, hasOrig, hasCur)
		}
	}
	// Labels and annotations a path maps come back too.
	om, _ := orig["metadata"].(map[string]any)
	cm, _ := cur["metadata"].(map[string]any)
	for _, m := range metaNodes(last) {
		back, hasBack := cm[m.key]
		if m.node != nil {
			merged, err := mergeMeta(back, m.node, scope)
			if err != nil {
				return nil, hopError(last, err)
			}
			back, hasBack = merged, true
		}
		ov, hasOrig := om[m.key]
		diffValue(d, []string{"metadata", m.key}, ov, back, hasOrig, hasBack)
	}
	if len(d.Unset) > 1 {
		sort.Slice(d.Unset, func(i, j int) bool { return strings.Join(d.Unset[i], "\x00") < strings.Join(d.Unset[j], "\x00") })
	}
	return d, nil
}

// diffNode records the differences between orig and what node n evaluates
// to, without building maps for map nodes.
func diffNode(d *stashEntry, path []string, n *engine.Node, scope *engine.Scope, orig any, hasOrig bool, skip map[*engine.Node]bool) error {
	if !n.IsMap() {
		// An identity leaf gives orig back — except a null, which a plain
		// reference reads as absent.
		if skip[n] && (!hasOrig || orig != nil) {
			return nil
		}
		v, present, err := n.Eval(scope)
		if err != nil {
			return err
		}
		diffValue(d, path, orig, v, hasOrig, present)
		return nil
	}
	// A map node is always present.
	om, isMap := orig.(map[string]any)
	switch {
	case !hasOrig:
		d.Unset = append(d.Unset, append([]string(nil), path...))
		return nil
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

func setOrDelete(m map[string]any, key string, v any, present bool) {
	if present && v != nil {
		m[key] = v
	} else {
		delete(m, key)
	}
}

// pruned returns v without the fields schema s cannot hold. v is shared
// (read-only) when there is nothing to prune, which is the common case.
func pruned(v any, s structuralschema.Structural) any {
	if !needsPrune(v, &s) {
		return v
	}
	cp := runtime.DeepCopyJSONValue(v)
	pruning.Prune(cp, &s, false)
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

// stashEntry is what one version lost: values to set back and paths to
// remove (fields the way back adds that the original did not have).
type stashEntry struct {
	Set   map[string]any `json:"set,omitempty"`
	Unset [][]string     `json:"unset,omitempty"`
}

func (s *stashEntry) empty() bool { return len(s.Set) == 0 && len(s.Unset) == 0 }

func hasKey(m map[string]any, k string) bool { _, ok := m[k]; return ok }

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
	if !equal(a, b) {
		d.set(path, a)
	}
}

// equal compares JSON values, treating int64 and whole float64 alike.
func equal(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case int64:
		switch y := b.(type) {
		case int64:
			return x == y
		case float64:
			return float64(x) == y
		}
		return false
	case float64:
		switch y := b.(type) {
		case float64:
			return x == y
		case int64:
			return x == float64(y)
		}
		return false
	case nil:
		return b == nil
	}
	return reflect.DeepEqual(a, b)
}

// set records orig's value v at path.
func (s *stashEntry) set(path []string, v any) {
	if s.Set == nil {
		s.Set = map[string]any{}
	}
	m := s.Set
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = runtime.DeepCopyJSONValue(v)
}

// restore applies a stash to a converted object. A field the last path
// computes from self keeps its computed value; literal and unset fields take
// the stashed one.
func restore(obj map[string]any, s *stashEntry, last *engine.Path) {
	var walk func(path []string, v any)
	walk = func(path []string, v any) {
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			for k, x := range m {
				walk(append(path, k), x)
			}
			return
		}
		if computed(last, path) {
			return
		}
		setIn(obj, path, runtime.DeepCopyJSONValue(v))
	}
	for k, v := range s.Set {
		walk([]string{k}, v)
	}
	for _, p := range s.Unset {
		if !computed(last, p) {
			deleteIn(obj, p)
		}
	}
}

// computed reports whether the path's output at field path comes from an
// expression (itself or an enclosing node).
func computed(p *engine.Path, path []string) bool {
	var n *engine.Node
	start := 1
	switch path[0] {
	case "spec":
		n = p.Spec
	case "status":
		n = p.Status
	case "metadata":
		if len(path) > 1 && path[1] == "labels" {
			n = p.Labels
		} else if len(path) > 1 && path[1] == "annotations" {
			n = p.Annotations
		}
		start = 2
	}
	for i := start; n != nil; i++ {
		if n.IsExpr() {
			return true
		}
		if i >= len(path) || !n.IsMap() {
			return false
		}
		n = n.Get(path[i])
	}
	return false
}

// setIn writes v at path, copying the maps along the way: converted objects
// share unchanged subtrees with their source.
func setIn(obj map[string]any, path []string, v any) {
	m := obj
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		cp := make(map[string]any, len(next)+1)
		if ok {
			for kk, vv := range next {
				cp[kk] = vv
			}
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
		cp := make(map[string]any, len(next))
		for kk, vv := range next {
			cp[kk] = vv
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
	raw, ok := annotations(obj)[StashAnnotation].(string)
	if !ok || raw == "" {
		return nil, nil // most objects carry no stash: allocate nothing
	}
	out := map[string]*stashEntry{}
	// Numbers decode as the API server decodes objects (int64 or float64),
	// so restored values compare equal to the originals.
	if err := utiljson.Unmarshal([]byte(raw), &out); err != nil {
		return nil, fmt.Errorf("annotation %s is not valid JSON (%v); remove it or restore it from the object's history", StashAnnotation, err)
	}
	for version, e := range out {
		if e == nil {
			return nil, fmt.Errorf("annotation %s holds a null entry; remove it", StashAnnotation)
		}
		if bad := stashOutside(e); bad != "" {
			return nil, fmt.Errorf("annotation %s: its %s entry holds %s, which no conversion writes (only spec, status, metadata.labels and metadata.annotations); remove the annotation or restore it from the object's history", StashAnnotation, version, bad)
		}
	}
	return out, nil
}

// stashOutside returns the first path of e outside what a conversion stashes,
// "" when there is none: restoring it would change the object's identity or
// index an empty path.
func stashOutside(e *stashEntry) string {
	for k, v := range e.Set {
		switch k {
		case "spec", "status":
			continue
		case "metadata":
			m, ok := v.(map[string]any)
			if !ok {
				return "metadata"
			}
			for mk := range m {
				if mk != "labels" && mk != "annotations" {
					return "metadata." + mk
				}
			}
			continue
		}
		return strconv.Quote(k)
	}
	for _, p := range e.Unset {
		switch {
		case len(p) == 0:
			return "an empty unset path"
		case p[0] == "spec" || p[0] == "status":
		case p[0] == "metadata" && len(p) >= 2 && (p[1] == "labels" || p[1] == "annotations"):
		default:
			return "unset path " + strings.Join(p, ".")
		}
	}
	return ""
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

func writeStash(obj map[string]any, stash map[string]*stashEntry, limit int) error {
	if len(stash) == 0 {
		if _, ok := annotations(obj)[StashAnnotation]; ok {
			deleteIn(obj, []string{"metadata", "annotations", StashAnnotation})
			if len(annotations(obj)) == 0 {
				deleteIn(obj, []string{"metadata", "annotations"})
			}
		}
		return nil
	}
	raw, err := encodeStash(stash)
	if err != nil {
		return fmt.Errorf("encoding the round-trip annotation: %v", err)
	}
	if len(raw) > limit {
		return fmt.Errorf("the fields the target version cannot hold need %d bytes in annotation %s, over the %d-byte limit; add them to the target schema or map them in the path", len(raw), StashAnnotation, limit)
	}
	setIn(obj, []string{"metadata", "annotations", StashAnnotation}, string(raw))
	return nil
}

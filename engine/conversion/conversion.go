// Package conversion executes a plan's conversion paths on objects: the
// semantics behind `orkestra convert` and the /convert webhook.
//
// A path replaces spec (and status, when it maps status) with its evaluated
// output, merges the labels and annotations it maps (a key mapped to null is
// removed), and leaves every other part of the object alone; apiVersion
// becomes the target. Where no direct path exists the object goes through
// the storage version.
//
// Round trips are exact: what the way back would not reproduce travels in
// one annotation (StashAnnotation) and is restored when the object converts
// back. A field the way back computes is restored only while the fields its
// expression reads still hold what this conversion produced — an edit made
// at the other version since then wins (see stash.go).
package conversion

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// StashAnnotation holds, per version, what a conversion could not carry —
// spec, status, labels and annotations that the way back would not
// reproduce: JSON {"<version>": {"set": {...}, "unset": [[path…]…],
// "via": "<version>", "if": [{"at": [path…], "read": [[[path…], value]…]}]}}.
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
	// inputs are, per computing node of every path (an expression, or a
	// list holding expressions), the data paths of self it reads.
	inputs map[*engine.Node][][]string
	// defaults holds, per schema with defaults, where they are: the
	// converter applies them as the API server does before it computes
	// the way back.
	defaults map[*structuralschema.Structural]*defaultsTree
	// facts holds, per path, what applying it reads besides the object.
	facts map[*engine.Path]*pathFacts
	// routes holds, per conversion, engine.Conversion.Route of every
	// version pair, made once (a CRD serves a few versions: a list).
	routes map[*engine.Conversion][]*route
	// metaKeys holds, per CRD, the metadata its conversions read (metakeys.go).
	metaKeys map[schema.GroupKind]metaKeys
}

// route is engine.Conversion.Route(from, to) with what a hop along it
// reads, worked out once: looking schemas up by version name on every
// object cost more than the rest of a simple conversion.
type route struct {
	from, to string
	paths    []*engine.Path
	// back is the route to → from, nil where there is none
	back *route
	// skip holds the way back's identity leaves (Converter.identity) when
	// both directions are single direct paths, else nil
	skip           map[*engine.Node]bool
	fromSch, toSch *structuralschema.Structural
}

// pathFacts are what applying a path reads besides the object.
type pathFacts struct {
	// apiVersion is the target's, an interface value made once: storing the
	// string in an object would allocate.
	apiVersion any
	// emptySpecValid: at the source version (emptySpecValid)
	emptySpecValid bool
	// status is the target's status schema
	status structuralschema.Structural
}

// routeFor is the route from → to, nil where there is none.
func (c *Converter) routeFor(conv *engine.Conversion, from, to string) *route {
	for _, r := range c.routes[conv] {
		if r.from == from && r.to == to {
			return r
		}
	}
	return nil
}

// routeOf is conv.Route(from, to), without allocating.
func (c *Converter) routeOf(conv *engine.Conversion, from, to string) ([]*engine.Path, bool) {
	if r := c.routeFor(conv, from, to); r != nil {
		return r.paths, true
	}
	return nil, false
}

// addRoutes works out the routes of conv and the facts of their paths.
func (c *Converter) addRoutes(conv *engine.Conversion) {
	for _, from := range conv.Versions {
		for _, to := range conv.Versions {
			paths, ok := conv.Route(from, to)
			if !ok {
				continue
			}
			c.routes[conv] = append(c.routes[conv], &route{from: from, to: to, paths: paths, fromSch: conv.Schemas[from], toSch: conv.Schemas[to]})
			for _, p := range paths {
				c.facts[p] = &pathFacts{apiVersion: p.ToAPIVersion, emptySpecValid: emptySpecValid(conv.Schemas[p.From]), status: conv.Schemas[p.To].Properties["status"]}
			}
		}
	}
	for _, r := range c.routes[conv] {
		r.back = c.routeFor(conv, r.to, r.from)
		if r.back != nil && len(r.paths) == 1 && len(r.back.paths) == 1 { // a route of one path is a direct one
			r.skip = c.identity
		}
	}
}

// New returns a converter over plan.
func New(plan *engine.Plan, opts Options) *Converter {
	if opts.MaxStashBytes <= 0 {
		opts.MaxStashBytes = DefaultMaxStashBytes
	}
	c := &Converter{plan: plan, opts: opts, identity: identityLeaves(plan), inputs: nodeInputs(plan),
		defaults: map[*structuralschema.Structural]*defaultsTree{}, facts: map[*engine.Path]*pathFacts{}, routes: map[*engine.Conversion][]*route{},
		metaKeys: map[schema.GroupKind]metaKeys{}}
	for gk, conv := range plan.Conversions {
		for _, s := range conv.Schemas {
			if d := buildDefaults(s); d != nil {
				c.defaults[s] = d
			}
		}
		c.addRoutes(conv)
		c.metaKeys[gk] = c.conversionMetaKeys(conv)
	}
	return c
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
	out, stash, err := c.ConvertApart(obj, desiredAPIVersion)
	if err == nil && stash != "" {
		setIn(out.Object, stashPath, stash)
	}
	return out, err
}

// ApartAnnotation is the annotation ConvertApart returns apart:
// StashAnnotation.
func (c *Converter) ApartAnnotation() string { return StashAnnotation }

// ConvertApart is Convert with the round-trip annotation kept apart: the
// object returned lacks StashAnnotation, and stash is the value Convert
// would give it ("" for none: the object has no stash). A same-version
// request returns obj as it is, with stash "". An encoder that writes the
// object as JSON puts the annotation in place without the two metadata maps
// Convert builds for it — the /convert handler does
// (webhook.AnnotatingConverter).
func (c *Converter) ConvertApart(obj *unstructured.Unstructured, desiredAPIVersion string) (res *unstructured.Unstructured, stash string, err error) {
	fail := func(from, to string, err error) (*unstructured.Unstructured, string, error) {
		return nil, "", &Error{Object: describe(obj), From: from, To: to, Err: err}
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
		return obj, "", nil
	}
	r := c.routeFor(conv, from, to) // between served versions only
	if r == nil {
		for _, v := range []string{from, to} {
			if conv.Schemas[v] == nil {
				return fail(from, to, fmt.Errorf("version %q is not served by CRD %s (served: %s)", v, conv.CRD.Object.Name, strings.Join(conv.Versions, ", ")))
			}
		}
		return fail(from, to, noRoute(conv, from, to))
	}
	src := obj.Object
	// Through the storage version, the object converts there and on: what
	// an earlier conversion stashed for the storage version comes back on
	// the way, as it would in two requests.
	if len(r.paths) == 2 {
		there, on := c.routeFor(conv, from, conv.StorageVersion), c.routeFor(conv, conv.StorageVersion, to)
		if there == nil || on == nil { // a route of two paths goes through the storage version
			return fail(from, to, noRoute(conv, from, to))
		}
		mid, midStash, err := c.hop(conv, there, src)
		if err != nil {
			return fail(from, to, err)
		}
		if midStash != "" {
			setIn(mid, stashPath, midStash) // the second hop reads it there
		}
		src, r = mid, on
	}
	out, stash, err := c.hop(conv, r, src)
	if err != nil {
		return fail(srcGV.Version, to, err)
	}
	return &unstructured.Unstructured{Object: out}, stash, nil
}

// hop converts obj along route r, from r.from to r.to. Paths never see the
// stash; what an earlier conversion stashed for r.to comes back, and what
// r.from cannot get back from the result is stashed for it: the result's
// stash annotation is returned apart ("" for none), the result has none.
func (c *Converter) hop(conv *engine.Conversion, r *route, obj map[string]any) (map[string]any, string, error) {
	from, to := r.from, r.to
	ann := annotations(obj)
	stash, err := stashIn(ann)
	if err != nil {
		return nil, "", err
	}
	src := obj
	if _, ok := ann[StashAnnotation]; ok {
		src = withoutStash(obj)
	}
	src = c.settle(r.fromSch, src)
	x := scratchPool.Get().(*hopScratch)
	defer x.release()
	// One scope serves every evaluation of the hop, one after the other.
	sc := &x.scope
	out, last, lastSrc, err := c.run(conv, r.paths, src, sc)
	if err != nil {
		return nil, "", err
	}
	if own, ok := stash[to]; ok {
		c.restore(out, own, last, lastSrc)
		delete(stash, to)
	}
	out = c.settle(r.toSch, out)
	d := &x.entry
	if err := c.wayBack(conv, r, out, src, sc, d); err != nil {
		return nil, "", fmt.Errorf("checking the way back from %s: %w", to, err)
	}
	if stash == nil {
		// The common case: nothing stashed before, at most this entry now.
		if d.empty() {
			return out, "", nil
		}
		s, err := stashValue([]versionEntry{{from, d}}, c.opts.MaxStashBytes)
		return out, s, err
	}
	if !d.empty() {
		stash[from] = d
	} else {
		delete(stash, from)
	}
	for v, e := range stash {
		if v != from && c.redundant(conv, out, to, v, e) {
			delete(stash, v)
		}
	}
	s, err := stashValue(sortedEntries(stash), c.opts.MaxStashBytes)
	return out, s, err
}

// hopScratch holds what a hop needs only while it runs, reused: nothing the
// hop returns points into it (the stash entry is encoded into the stash
// value).
type hopScratch struct {
	scope engine.Scope
	entry stashEntry
}

var scratchPool = sync.Pool{New: func() any { return new(hopScratch) }}

func (x *hopScratch) release() {
	*x = hopScratch{}
	scratchPool.Put(x)
}

// redundant reports whether stash entry e, kept for version v by an earlier
// conversion, would change nothing when obj (at version at) converts to v:
// that conversion gives back what e holds, and e can go.
func (c *Converter) redundant(conv *engine.Conversion, obj map[string]any, at, v string, e *stashEntry) bool {
	res, last, lastSrc, err := c.route(conv, obj, at, v, new(engine.Scope))
	if err != nil {
		return false
	}
	res = c.settle(conv.Schemas[v], res)
	restored := make(map[string]any, len(res))
	for k, x := range res {
		restored[k] = x
	}
	c.restore(restored, e, last, lastSrc)
	return jsonval.Equal(restored, res)
}

// route applies the paths from → to on obj and returns the result, the last
// path applied and that path's source object.
//
// The paths evaluate in scope sc, which they reset.
func (c *Converter) route(conv *engine.Conversion, obj map[string]any, from, to string, sc *engine.Scope) (out map[string]any, last *engine.Path, lastSrc map[string]any, err error) {
	paths, ok := c.routeOf(conv, from, to)
	if !ok {
		return nil, nil, nil, noRoute(conv, from, to)
	}
	return c.run(conv, paths, obj, sc)
}

func noRoute(conv *engine.Conversion, from, to string) error {
	return fmt.Errorf("no conversion path from %s to %s (and none through the storage version %s); add one to the katalog", from, to, conv.StorageVersion)
}

// run applies paths (a route) on obj, as route does.
func (c *Converter) run(conv *engine.Conversion, paths []*engine.Path, obj map[string]any, sc *engine.Scope) (out map[string]any, last *engine.Path, lastSrc map[string]any, err error) {
	cur := obj
	for _, p := range paths {
		next, err := c.apply(conv, p, cur, sc)
		if err != nil {
			return nil, nil, nil, err
		}
		lastSrc, cur = cur, next
	}
	return cur, paths[len(paths)-1], lastSrc, nil
}

// apply runs one path: a new object whose spec/status are the path's output
// (or the source's, passed through), with apiVersion set to the target. It
// evaluates in scope sc, which it resets.
func (c *Converter) apply(conv *engine.Conversion, p *engine.Path, src map[string]any, sc *engine.Scope) (map[string]any, error) {
	scope := pathScope(sc, src)
	// Shallow (maps.Clone copies a small map's memory, without rehashing):
	// replaced parts get new values, the rest is shared read-only.
	out := maps.Clone(src)
	if out == nil {
		out = map[string]any{}
	}
	facts := c.facts[p]
	out["apiVersion"] = facts.apiVersion
	if p.Spec != nil && (hasSpec(src) || facts.emptySpecValid) {
		v, ok, err := p.Spec.Eval(scope)
		if err != nil {
			return nil, hopError(p, err)
		}
		setOrDelete(out, "spec", v, specWritten(conv, p, src, v, ok))
	}
	_, hasStatus := src["status"]
	if p.Status != nil && hasStatus {
		v, ok, err := p.Status.Eval(scope)
		if err != nil {
			return nil, hopError(p, err)
		}
		setOrDelete(out, "status", v, ok)
	} else if st, ok := src["status"]; ok && p.Status == nil {
		// Status passes through, minus what the target's schema cannot hold.
		out["status"] = pruned(st, &facts.status)
	}
	if p.Labels != nil || p.Annotations != nil {
		meta, err := mappedMetadata(p, src, scope)
		if err != nil {
			return nil, hopError(p, err)
		}
		out["metadata"] = meta
	}
	return out, nil
}

func hasSpec(obj map[string]any) bool { return obj["spec"] != nil }

// emptySpecValid reports whether an empty spec is valid at a version: then
// an object without spec converts as if it had an empty one. Otherwise the
// path's expressions may rely on the fields spec requires, and an object
// without spec converts without one.
func emptySpecValid(s *structuralschema.Structural) bool {
	spec, ok := s.Properties["spec"]
	return !ok || spec.ValueValidation == nil || len(spec.ValueValidation.Required) == 0
}

// specWritten decides whether a path writes the spec it evaluated: an
// object without spec gets one only when an expression writes into it (the
// path's literals alone do not make one), and an empty spec only where the
// target's spec declares fields (or the target requires a spec) — a spec
// that can hold nothing is left out.
func specWritten(conv *engine.Conversion, p *engine.Path, src map[string]any, v any, present bool) bool {
	if !present || v == nil || (!hasSpec(src) && !computes(p.Spec, v)) {
		return false
	}
	if m, ok := v.(map[string]any); ok && len(m) == 0 {
		return holdsFields(conv.Schemas[p.To])
	}
	return true
}

// holdsFields reports whether a version's spec can hold anything, or the
// version requires a spec.
func holdsFields(s *structuralschema.Structural) bool {
	if s.ValueValidation != nil && slices.Contains(s.ValueValidation.Required, "spec") {
		return true
	}
	spec, ok := s.Properties["spec"]
	return !ok || len(spec.Properties) > 0 || spec.AdditionalProperties != nil || spec.XPreserveUnknownFields
}

// computes reports whether value v, which node n evaluated to, holds
// anything an expression produced.
func computes(n *engine.Node, v any) bool {
	switch {
	case n.IsExpr():
		return true
	case n.IsMap():
		m, _ := v.(map[string]any)
		for _, f := range n.Fields {
			if fv, ok := m[f.Key]; ok && computes(f.Value, fv) {
				return true
			}
		}
	case n.IsList():
		found := false
		n.Walk(func(x *engine.Node) { found = found || x.IsExpr() })
		return found
	}
	return false
}

// canBeEmpty reports whether map node n may evaluate to an empty map:
// every field is an expression, which may be absent.
func canBeEmpty(n *engine.Node) bool {
	if !n.IsMap() {
		return false
	}
	for _, f := range n.Fields {
		if !f.Value.IsExpr() {
			return false
		}
	}
	return true
}

// pathScope resets sc to what a path's expressions see: the source object,
// with an absent (or null) spec read as an empty object, so that
// `self.spec.?x` works on objects created without spec.
func pathScope(sc *engine.Scope, src map[string]any) *engine.Scope {
	if hasSpec(src) {
		*sc = engine.Scope{Self: src}
		return sc
	}
	withSpec := make(map[string]any, len(src)+1)
	for k, v := range src {
		withSpec[k] = v
	}
	withSpec["spec"] = map[string]any{}
	*sc = engine.Scope{Self: withSpec}
	return sc
}

// PathError is a path's evaluation failing on an object. It says whether
// the path declares that it may fail (mayFail): an acknowledged failure is
// one the katalog's author expects for some valid objects; any other is a
// failure `orkestra check --strict` warns about, or a defect.
type PathError struct {
	Path *engine.Path
	Err  error
}

func (e *PathError) Error() string {
	if reason := e.Path.MayFail(); reason != "" {
		return fmt.Sprintf("path %s→%s failed (acknowledged: mayFail %q): %v", e.Path.From, e.Path.To, reason, e.Err)
	}
	return fmt.Sprintf("path %s→%s failed (not acknowledged: the path has no mayFail): %v", e.Path.From, e.Path.To, e.Err)
}

func (e *PathError) Unwrap() error { return e.Err }

// Acknowledged reports whether the path declares it may fail.
func (e *PathError) Acknowledged() bool { return e.Path.MayFail() != "" }

// hopError names the path an evaluation error happened on.
func hopError(p *engine.Path, err error) error {
	return &PathError{Path: p, Err: err}
}

func setOrDelete(m map[string]any, key string, v any, present bool) {
	if present && v != nil {
		m[key] = v
	} else {
		delete(m, key)
	}
}

// Package objgen generates custom-resource objects from the structural schema
// of a CRD version, deterministically from a seed, checks objects against that
// schema with the API server's own validation machinery, and shrinks a failing
// object to a smallest one that still fails.
//
// It serves property tests of conversion round trips, `orkestra migrate`'s
// equivalence proof and the conformance suite:
//
//	objs := objgen.Generate(s, gvk, 500, objgen.Options{Seed: 1})
//	for _, o := range objs {
//		if !roundTrips(o) {
//			t.Fatalf("smallest failing object: %v", objgen.Shrink(s, o, func(o map[string]any) bool { return !roundTrips(o) }))
//		}
//	}
//
// Objects are plain JSON values as apimachinery decodes them: map[string]any,
// []any, string, bool, int64 and float64 (a number with an integral value is an
// int64, as k8s.io/apimachinery/pkg/util/json would decode it), so they survive
// a JSON round trip unchanged.
package objgen

import (
	"fmt"
	"math/rand/v2"
	"sort"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// Defaults of Options.
const (
	DefaultMaxDepth            = 4
	DefaultMaxItems            = 3
	DefaultMaxProperties       = 3
	DefaultOptionalProbability = 0.6
	DefaultNamespace           = "default"
)

const (
	// attempts bounds generate-and-verify loops (patterns, formats, uniqueness,
	// CEL rules, allOf/anyOf/oneOf/not).
	attempts = 64
	// nullProbability is the chance a present nullable field is null.
	nullProbability = 0.1
	// defaultOmitProbability is the chance an optional field with a default is
	// left out (so that the API server's defaulting is exercised).
	defaultOmitProbability = 1.0 / 3
	// defaultValueProbability is the chance a present defaulted field carries
	// exactly its default.
	defaultValueProbability = 0.5
)

// Options tune generation. The zero value is usable: every zero field takes
// its default.
type Options struct {
	// Seed selects the objects: the same schema, kind, count and options give
	// identical objects. Object i depends only on Seed and i, so a longer run
	// starts with the objects of a shorter one.
	Seed int64
	// MaxDepth bounds nesting of values the schema leaves open
	// (x-kubernetes-preserve-unknown-fields, untyped additionalProperties).
	// 0 means DefaultMaxDepth.
	MaxDepth int
	// MaxItems bounds list lengths where the schema gives no maxItems (and
	// never forces more than minItems). 0 means DefaultMaxItems; negative
	// means 0 (lists get exactly minItems items).
	MaxItems int
	// MaxProperties bounds map sizes (additionalProperties, unknown fields)
	// likewise. 0 means DefaultMaxProperties; negative means 0.
	MaxProperties int
	// OptionalProbability is the chance an optional field without a default
	// is present. 0 means DefaultOptionalProbability; negative means never
	// (objects hold only required fields, defaulted fields and what
	// minProperties forces); 1 or more means always. Where a value must
	// satisfy rules the generator only verifies (x-kubernetes-validations,
	// allOf/anyOf/oneOf/not), retries vary the probability, so a rule that
	// needs an optional field present (or absent) can still be met.
	OptionalProbability float64
	// Namespace for metadata.namespace. "" means DefaultNamespace.
	Namespace string
	// ClusterScoped leaves metadata.namespace unset.
	ClusterScoped bool
}

func (o Options) withDefaults() Options {
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	switch {
	case o.MaxItems == 0:
		o.MaxItems = DefaultMaxItems
	case o.MaxItems < 0:
		o.MaxItems = 0
	}
	switch {
	case o.MaxProperties == 0:
		o.MaxProperties = DefaultMaxProperties
	case o.MaxProperties < 0:
		o.MaxProperties = 0
	}
	switch {
	case o.OptionalProbability == 0:
		o.OptionalProbability = DefaultOptionalProbability
	case o.OptionalProbability < 0:
		o.OptionalProbability = 0
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	return o
}

// Generate returns n objects of kind gvk valid against s. Each has apiVersion
// (group/version), kind, metadata (a unique DNS-1123 name, the namespace unless
// Options.ClusterScoped, sometimes labels and annotations) and fields drawn
// from the schema: required fields always, optional ones with
// Options.OptionalProbability, defaulted ones sometimes left out, sometimes
// set to their default and sometimes to another value.
//
// Generate panics when the schema admits no object it can construct (a
// required field whose constraints it cannot satisfy, say minLength above
// maxLength or a pattern it fails to match); TryGenerate returns that error
// instead. An optional field it cannot satisfy is left out.
func Generate(s *structuralschema.Structural, gvk schema.GroupVersionKind, n int, opts Options) []map[string]any {
	objs, err := TryGenerate(s, gvk, n, opts)
	if err != nil {
		panic(err)
	}
	return objs
}

// TryGenerate is Generate returning an error instead of panicking.
func TryGenerate(s *structuralschema.Structural, gvk schema.GroupVersionKind, n int, opts Options) ([]map[string]any, error) {
	o := opts.withDefaults()
	e := newEnv(s)
	names := map[string]bool{}
	out := make([]map[string]any, 0, max(n, 0))
	for i := 0; i < n; i++ {
		g := &generator{
			r:   rand.New(rand.NewPCG(uint64(o.Seed), uint64(i))),
			o:   o,
			env: e,
		}
		obj, err := g.root(s, gvk, i, names)
		if err != nil {
			return nil, fmt.Errorf("objgen: cannot generate %s object %d (seed %d): %w", gvkString(gvk), i, o.Seed, err)
		}
		out = append(out, obj)
	}
	return out, nil
}

func gvkString(gvk schema.GroupVersionKind) string {
	return gvk.GroupVersion().String() + ", Kind=" + gvk.Kind
}

// generator draws the values of one object.
type generator struct {
	r   *rand.Rand
	o   Options
	env *env
}

// loc is where a value stands: its field path (for messages) and its schema
// path (the cache key of per-node checkers; indices and map keys erased).
type loc struct {
	fp  *field.Path
	key string
}

func (l loc) child(name string) loc { return loc{l.fp.Child(name), l.key + "." + name} }
func (l loc) index(i int) loc       { return loc{l.fp.Index(i), l.key + "[]"} }
func (l loc) mapKey(k string) loc   { return loc{l.fp.Key(k), l.key + "{}"} }

func (l loc) String() string {
	if s := l.fp.String(); s != "" {
		return s
	}
	return "<root>"
}

func (g *generator) chance(p float64) bool { return g.r.Float64() < p }

// between returns a uniform int in [lo, hi] (lo <= hi).
func (g *generator) between(lo, hi int) int {
	if hi <= lo {
		return lo
	}
	return lo + g.r.IntN(hi-lo+1)
}

// root generates a whole object.
func (g *generator) root(s *structuralschema.Structural, gvk schema.GroupVersionKind, i int, names map[string]bool) (map[string]any, error) {
	tries := 1
	if g.env.needsCheck(s) {
		tries = attempts
	}
	var lastErr error
	keep := g.o.OptionalProbability
	defer func() { g.o.OptionalProbability = keep }()
	for a := 0; a < tries; a++ {
		if a > 0 {
			g.o.OptionalProbability = g.r.Float64() // as in value
		}
		obj := map[string]any{}
		if s != nil {
			fields, err := g.objectFields(s, loc{}, 0, true, nil)
			if err != nil {
				lastErr = err
				continue
			}
			obj = fields
		}
		obj["apiVersion"] = gvk.GroupVersion().String()
		obj["kind"] = gvk.Kind
		meta, name, err := g.rootMeta(s, gvk, i, names)
		if err != nil {
			lastErr = err
			continue
		}
		obj["metadata"] = meta
		if tries > 1 {
			if errs := g.env.checkRoot(obj); len(errs) > 0 {
				lastErr = errs.ToAggregate()
				continue
			}
		}
		names[name] = true
		return obj, nil
	}
	return nil, lastErr
}

// value generates a value for schema s at l, retrying where the generator
// cannot construct a valid value directly and must verify it (allOf, anyOf,
// oneOf, not, x-kubernetes-validations).
func (g *generator) value(s *structuralschema.Structural, l loc, depth int) (any, error) {
	if !g.env.needsCheck(s) {
		return g.valueOnce(s, l, depth)
	}
	var lastErr error
	keep := g.o.OptionalProbability
	defer func() { g.o.OptionalProbability = keep }()
	for a := 0; a < attempts; a++ {
		if a > 0 {
			// vary which optional fields appear: rules such as oneOf may
			// need fields absent (or present) that the setting rarely gives
			g.o.OptionalProbability = g.r.Float64()
		}
		v, err := g.valueOnce(s, l, depth)
		if err != nil {
			lastErr = err
			continue
		}
		if errs := g.env.checkNode(s, l, v); len(errs) > 0 {
			lastErr = fmt.Errorf("%s: no generated value satisfied the schema after %d attempts, last: %w", l, attempts, errs.ToAggregate())
			continue
		}
		return v, nil
	}
	return nil, lastErr
}

func (g *generator) valueOnce(s *structuralschema.Structural, l loc, depth int) (any, error) {
	if s == nil {
		return g.arbitrary(depth), nil
	}
	if s.Nullable && g.chance(nullProbability) {
		return nil, nil
	}
	if vv := s.ValueValidation; vv != nil && len(vv.Enum) > 0 {
		return jsonval.Normalize(deepCopy(vv.Enum[g.r.IntN(len(vv.Enum))].Object)), nil
	}
	if s.XIntOrString {
		return g.intOrString(s, l)
	}
	switch s.Type {
	case "object":
		if s.XEmbeddedResource {
			return g.embedded(s, l, depth)
		}
		return g.objectFields(s, l, depth, false, nil)
	case "array":
		return g.array(s, l, depth)
	case "string":
		return g.str(s, l)
	case "integer":
		return g.integer(s, l)
	case "number":
		return g.number(s, l)
	case "boolean":
		return g.chance(0.5), nil
	case "":
		// Only x-kubernetes-preserve-unknown-fields (or int-or-string,
		// handled above) may leave the type open.
		return g.arbitrary(depth), nil
	}
	return nil, fmt.Errorf("%s: unsupported type %q", l, s.Type)
}

// metaKeys are the keys of the root and of embedded resources that are not
// generated from the schema's properties.
var metaKeys = map[string]bool{"apiVersion": true, "kind": true, "metadata": true}

// objectFields generates an object with properties, a map (additionalProperties)
// or an open object (x-kubernetes-preserve-unknown-fields). resourceLike skips
// apiVersion, kind and metadata, which the caller sets, but counts them for
// min/maxProperties. force lists properties that must be present (list-map
// keys).
func (g *generator) objectFields(s *structuralschema.Structural, l loc, depth int, resourceLike bool, force map[string]bool) (map[string]any, error) {
	out := map[string]any{}
	vv := s.ValueValidation
	minP, maxP := 0, -1
	var required map[string]bool
	if vv != nil {
		if vv.MinProperties != nil {
			minP = int(*vv.MinProperties)
		}
		if vv.MaxProperties != nil {
			maxP = int(*vv.MaxProperties)
		}
		required = make(map[string]bool, len(vv.Required))
		for _, r := range vv.Required {
			required[r] = true
		}
	}
	reserved := 0 // apiVersion, kind, metadata set by the caller
	if resourceLike {
		reserved = 3
	}

	// Which declared properties are present.
	var present, absent []string
	mandatory := map[string]bool{}
	for _, k := range sortedKeys(s.Properties) {
		if resourceLike && metaKeys[k] {
			continue
		}
		p := s.Properties[k]
		switch {
		case required[k] || force[k]:
			present = append(present, k)
			mandatory[k] = true
		case p.Default.Object != nil:
			if g.chance(defaultOmitProbability) {
				absent = append(absent, k)
			} else {
				present = append(present, k)
			}
		case g.chance(g.o.OptionalProbability):
			present = append(present, k)
		default:
			absent = append(absent, k)
		}
	}
	for reserved+len(present) < minP && len(absent) > 0 {
		j := g.r.IntN(len(absent))
		present = append(present, absent[j])
		absent = append(absent[:j], absent[j+1:]...)
	}
	for maxP >= 0 && reserved+len(present) > maxP {
		var optional []int
		for j, k := range present {
			if !mandatory[k] {
				optional = append(optional, j)
			}
		}
		if len(optional) == 0 {
			return nil, fmt.Errorf("%s: %d required properties exceed maxProperties %d", l, len(present), maxP)
		}
		j := optional[g.r.IntN(len(optional))]
		present = append(present[:j], present[j+1:]...)
	}
	sort.Strings(present)
	for _, k := range present {
		p := s.Properties[k]
		var v any
		var err error
		if p.Default.Object != nil && g.chance(defaultValueProbability) {
			v = jsonval.Normalize(deepCopy(p.Default.Object))
		} else {
			v, err = g.value(&p, l.child(k), depth+1)
		}
		if err != nil {
			if mandatory[k] {
				return nil, err
			}
			continue // an optional field we cannot satisfy is left out
		}
		out[k] = v
	}

	// Maps, and unknown fields where the schema preserves them.
	var extraSchema *structuralschema.Structural
	extra := 0
	count := reserved + len(out)
	room := func(want int) int {
		if maxP >= 0 && count+want > maxP {
			return max(maxP-count, 0)
		}
		return want
	}
	switch {
	case s.AdditionalProperties != nil && (s.AdditionalProperties.Bool || s.AdditionalProperties.Structural != nil):
		extraSchema = s.AdditionalProperties.Structural
		lo := max(minP-count, 0)
		hi := max(lo, g.o.MaxProperties)
		extra = room(g.between(lo, hi))
	case s.XPreserveUnknownFields && len(s.Properties) == 0:
		lo := max(minP-count, 0)
		hi := max(lo, g.o.MaxProperties)
		extra = room(g.between(lo, hi))
	case s.XPreserveUnknownFields:
		extra = max(minP-count, 0)
		if g.chance(0.3) {
			extra += g.between(1, 2)
		}
		extra = room(extra)
	}
	skip := func(k string) bool {
		if _, ok := s.Properties[k]; ok {
			return true
		}
		_, ok := out[k]
		return ok || (resourceLike && metaKeys[k])
	}
	for a, limit := 0, extra*attempts; extra > 0 && a < limit; a++ {
		k := g.mapKey()
		if skip(k) {
			continue
		}
		var v any
		var err error
		switch {
		case extraSchema != nil:
			v, err = g.value(extraSchema, l.mapKey(k), depth+1)
		case s.AdditionalProperties != nil:
			// additionalProperties: true without a schema: the API server
			// prunes everything inside nested objects, so only scalars.
			v = g.arbitrary(g.o.MaxDepth)
		default:
			v = g.arbitrary(depth + 1)
		}
		if err != nil {
			if reserved+len(out) < minP {
				return nil, err
			}
			break
		}
		out[k] = v
		extra--
	}
	if n := reserved + len(out); n < minP {
		return nil, fmt.Errorf("%s: cannot reach minProperties %d (have %d properties)", l, minP, n)
	}
	return out, nil
}

// array generates a list honouring min/maxItems, uniqueItems and
// x-kubernetes-list-type set/map.
func (g *generator) array(s *structuralschema.Structural, l loc, depth int) ([]any, error) {
	vv := s.ValueValidation
	lo, hi := 0, -1
	unique := false
	if vv != nil {
		if vv.MinItems != nil {
			lo = int(*vv.MinItems)
		}
		if vv.MaxItems != nil {
			hi = int(*vv.MaxItems)
		}
		unique = vv.UniqueItems
	}
	listType := ""
	if s.XListType != nil {
		listType = *s.XListType
	}
	unique = unique || listType == "set"
	var mapKeys map[string]bool
	if listType == "map" && len(s.XListMapKeys) > 0 {
		mapKeys = map[string]bool{}
		for _, k := range s.XListMapKeys {
			mapKeys[k] = true
		}
	}
	capN := max(lo, g.o.MaxItems)
	if hi < 0 || hi > capN {
		hi = capN
	}
	if hi < lo {
		return nil, fmt.Errorf("%s: minItems %d exceeds maxItems %d", l, lo, hi)
	}
	n := g.between(lo, hi)
	items := make([]any, 0, n)
	seen := map[string]bool{}
	var lastErr error
	for a := 0; len(items) < n && a < (n+1)*attempts; a++ {
		il := l.index(len(items))
		var v any
		var err error
		if mapKeys != nil && s.Items != nil && s.Items.Type == "object" {
			v, err = g.listMapItem(s.Items, il, depth+1, mapKeys)
		} else {
			v, err = g.value(s.Items, il, depth+1)
		}
		if err != nil {
			lastErr = err
			if len(items) >= lo {
				break // an optional further item we cannot satisfy
			}
			continue
		}
		if unique || mapKeys != nil {
			var k string
			// compare as the API server does: after defaulting
			dv := serverView(v, s.Items)
			if mapKeys != nil {
				k = listMapKey(dv, s.XListMapKeys)
			} else {
				k = canonical(dv)
			}
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		items = append(items, v)
	}
	if len(items) < lo {
		if lastErr != nil {
			return nil, lastErr
		}
		return nil, fmt.Errorf("%s: cannot generate %d distinct items (minItems)", l, lo)
	}
	return items, nil
}

// listMapItem generates an item of an x-kubernetes-list-type: map list with
// every key field present and non-null.
func (g *generator) listMapItem(s *structuralschema.Structural, l loc, depth int, keys map[string]bool) (any, error) {
	var lastErr error
	for a := 0; a < attempts; a++ {
		var v any
		var err error
		if g.env.needsCheck(s) {
			// value retries against the item's rules; force the keys after.
			v, err = g.value(s, l, depth)
		} else {
			v, err = g.objectFields(s, l, depth, false, keys)
		}
		if err != nil {
			lastErr = err
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			lastErr = fmt.Errorf("%s: list-map item is not an object", l)
			continue
		}
		complete := true
		for k := range keys {
			if m[k] == nil {
				complete = false
			}
		}
		if complete {
			return m, nil
		}
		lastErr = fmt.Errorf("%s: could not set every x-kubernetes-list-map-keys field", l)
	}
	return nil, lastErr
}

func listMapKey(v any, keys []string) string {
	m, _ := v.(map[string]any)
	parts := make([]any, len(keys))
	for i, k := range keys {
		parts[i] = m[k]
	}
	return canonical(parts)
}

// intOrString generates a value for x-kubernetes-int-or-string.
func (g *generator) intOrString(s *structuralschema.Structural, l loc) (any, error) {
	if g.chance(0.5) {
		if v, err := g.integer(s, l); err == nil {
			return v, nil
		}
	}
	if hasStringConstraints(s) {
		return g.str(s, l)
	}
	switch g.r.IntN(3) {
	case 0:
		return fmt.Sprintf("%d%%", g.r.IntN(101)), nil
	case 1:
		return []string{"http", "https", "metrics", "grpc"}[g.r.IntN(4)], nil
	default:
		return fmt.Sprint(g.between(1, 65535)), nil
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func hasValueValidation(s *structuralschema.Structural) bool {
	vv := s.ValueValidation
	if vv == nil {
		return len(s.XValidations) > 0
	}
	return vv.Format != "" || vv.Pattern != "" || vv.MinLength != nil || vv.MaxLength != nil || len(vv.Enum) > 0 ||
		len(vv.AllOf) > 0 || len(vv.AnyOf) > 0 || len(vv.OneOf) > 0 || vv.Not != nil || len(s.XValidations) > 0
}

func hasStringConstraints(s *structuralschema.Structural) bool {
	vv := s.ValueValidation
	return vv != nil && (vv.Format != "" || vv.Pattern != "" || vv.MinLength != nil || vv.MaxLength != nil)
}

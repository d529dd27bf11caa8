package engine

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/katalog"
)

// DefaultMaxForEach bounds the children of one forEach declaration whose
// fields the schema does not bound (maxItems, maxProperties): kro's default
// cap of a collection.
const DefaultMaxForEach = 1000

// Names of the current forEach item. CEL reads `each` (or the alias),
// `index`, and `value` for map entries; legacy templates read `.item` (or
// the alias), `.index` and `.value`, as upstream (pkg/types/foreach.go).
// With several iterators (foreach_product.go) only the aliases and `index`.
const (
	EachVar    = "each"
	IndexVar   = "index"
	ValueVar   = "value"
	LegacyItem = "item"
)

// ForEach is a compiled forEach: one child per item of a list field, or per
// entry of a map field (sorted by key) of the custom resource; with several
// iterators, one per combination of their items.
type ForEach struct {
	// Iterators in order: the first is the outer loop.
	Iterators []*Iterator
	// Field names what is iterated, for messages: spec.regions, or
	// spec.regions × spec.tiers.
	Field string
	// Limit is the most children: the product of the fields'
	// maxItems/maxProperties when every one is Bounded, else the compile
	// option's cap (checked when rendering).
	Limit   int
	Bounded bool
}

// Iterator is one field a forEach iterates.
type Iterator struct {
	// Field is the path as written, Path its segments.
	Field string
	Path  []string
	// As is the alias of the current item, "" when none.
	As string
	// Map is true for a map field: the item is the key, value the entry.
	// Unknown is true when the schema does not say (either works).
	Map, Unknown bool
	// Limit and Bounded: the field's maxItems/maxProperties, when it has one.
	Limit   int
	Bounded bool
	Source  *katalog.ForEach
	// itemSchema and valueSchema type the item and a map entry's value
	// (nil: any).
	itemSchema, valueSchema *structuralschema.Structural
}

// Single returns the forEach's iterator when it has one only, else nil.
func (fe *ForEach) Single() *Iterator {
	if len(fe.Iterators) == 1 {
		return fe.Iterators[0]
	}
	return nil
}

// Untyped is the forEach of srcs without a schema: every field may hold a
// list or a map (migrate's equivalence proof evaluates with it).
func Untyped(srcs []*katalog.ForEach) *ForEach {
	fe := &ForEach{Limit: DefaultMaxForEach}
	for _, src := range srcs {
		fe.Iterators = append(fe.Iterators, &Iterator{Field: src.Field, Path: src.Path, As: src.As, Unknown: true, Source: src})
	}
	fe.Field = fieldsOf(fe.Iterators)
	return fe
}

// forEach resolves a declaration's forEach fields in the entry's schema.
func (c *compiler) forEach(sc compileScope, r *katalog.Resource, base string) *ForEach {
	fe := &ForEach{Bounded: true, Limit: 1}
	for i, src := range r.ForEach {
		field := base + ".forEach"
		if len(r.ForEach) > 1 {
			field = fmt.Sprintf("%s[%d]", field, i)
		}
		it := c.iterator(sc, src, field)
		if it == nil {
			return nil
		}
		fe.Iterators = append(fe.Iterators, it)
		if !it.Bounded {
			fe.Bounded = false
		} else if fe.Bounded {
			fe.Limit = satMulInt(fe.Limit, it.Limit)
		}
	}
	if !fe.Bounded {
		fe.Limit = c.opts.MaxForEach
		if fe.Limit <= 0 {
			fe.Limit = DefaultMaxForEach
		}
	}
	fe.Field = fieldsOf(fe.Iterators)
	return fe
}

func fieldsOf(its []*Iterator) string {
	fields := make([]string, len(its))
	for i, it := range its {
		fields[i] = it.Field
	}
	return strings.Join(fields, " × ")
}

// satMulInt multiplies, saturating at the largest int.
func satMulInt(a, b int) int {
	const maxInt = int(^uint(0) >> 1)
	if a != 0 && b > maxInt/a {
		return maxInt
	}
	return a * b
}

// iterator resolves one forEach field in the entry's schema.
func (c *compiler) iterator(sc compileScope, src *katalog.ForEach, field string) *Iterator {
	it := &Iterator{Field: src.Field, Path: src.Path, As: src.As, Source: src}
	s := sc.self
	for i, seg := range src.Path {
		if s == nil || s.XPreserveUnknownFields && property(s, seg) == nil {
			s = nil
			break
		}
		next := property(s, seg)
		if next == nil {
			c.errorf(sc, src.FieldPos, field+".field", "%s is not in the schema of %s%s", strings.Join(src.Path[:i+1], "."), sc.selfVersion, katalog.DidYouMean(seg, PropertyNames(s)))
			return nil
		}
		s = next
	}
	switch {
	case s == nil || s.XIntOrString || s.Type == "" && s.XPreserveUnknownFields:
		it.Unknown = true
	case s.Type == "array":
		if s.ValueValidation != nil && s.ValueValidation.MaxItems != nil {
			it.Limit, it.Bounded = int(*s.ValueValidation.MaxItems), true
		}
	case s.Type == "object" && s.AdditionalProperties != nil:
		it.Map = true
		if s.ValueValidation != nil && s.ValueValidation.MaxProperties != nil {
			it.Limit, it.Bounded = int(*s.ValueValidation.MaxProperties), true
		}
	default:
		c.errorf(sc, src.FieldPos, field+".field", "%s is %s; forEach iterates a list (one child per item) or a map (one child per entry)", src.Field, DescribeSchema(s))
		return nil
	}
	it.itemSchema, it.valueSchema = itemSchemas(s, it)
	return it
}

// itemSchemas are the schemas of the current item and, for maps, value.
func itemSchemas(s *structuralschema.Structural, it *Iterator) (item, value *structuralschema.Structural) {
	switch {
	case it.Unknown:
		return nil, nil
	case it.Map:
		str := structuralschema.Structural{Generic: structuralschema.Generic{Type: "string"}}
		return &str, s.AdditionalProperties.Structural
	}
	return s.Items, nil
}

// checkItemIdentity fails a forEach declaration whose name and namespace do
// not tell its children apart: with one iterator they must read the item;
// with several, index or every alias.
func (c *compiler) checkItemIdentity(sc compileScope, r *katalog.Resource, out *Resource, fe *ForEach, base string) {
	var srcs []string
	for _, key := range []string{"name", "namespace"} {
		if n := out.Fields.Get(key); n != nil && n.IsExpr() {
			srcs = append(srcs, n.Expr.Source())
		}
	}
	reads := func(names, legacy []string) bool {
		for _, s := range srcs {
			if readsAny(s, names, legacy) {
				return true
			}
		}
		return false
	}
	pos := r.Pos
	if e := r.Fields.Entry("name"); e != nil {
		pos = e.Value.Pos
	}
	if it := fe.Single(); it != nil {
		names, legacy := []string{EachVar, IndexVar, ValueVar}, []string{LegacyItem, IndexVar, ValueVar}
		if it.As != "" {
			names, legacy = append(names, it.As), append(legacy, it.As)
		}
		if reads(names, legacy) {
			return
		}
		alias := ""
		if it.As != "" {
			alias = " or " + it.As
		}
		c.errorf(sc, pos, base+".name", "forEach makes one child per item of %s, but the name does not depend on the item, so every item would name the same object; use it in the name, e.g. name: \"${self.metadata.name}-${each}\" (CEL: each%s, index; legacy: {{ .item }}, {{ .index }})", it.Field, alias)
		return
	}
	if reads([]string{IndexVar}, []string{IndexVar}) {
		return
	}
	var missing []string
	for _, it := range fe.Iterators {
		if !reads([]string{it.As}, []string{it.As}) {
			missing = append(missing, it.As)
		}
	}
	if len(missing) > 0 {
		c.errorf(sc, pos, base+".name", "forEach makes one child per combination of %s, but the name (or namespace) does not read %s, so two combinations can name the same object; use every alias in the name, e.g. name: \"${self.metadata.name}-%s\", or index (the combination's position)", fe.Field, strings.Join(missing, ", "), aliasesInName(fe))
	}
}

func aliasesInName(fe *ForEach) string {
	parts := make([]string, len(fe.Iterators))
	for i, it := range fe.Iterators {
		parts[i] = "${" + it.As + "}"
	}
	return strings.Join(parts, "-")
}

// readsAny reports whether an expression's source reads one of the CEL
// variables names or the legacy roots legacy.
func readsAny(src string, names, legacy []string) bool {
	re := regexp.MustCompile(fmt.Sprintf(`(^|[^.\w])(%s)\b|(^|[^\w\])])\.(%s)\b`, strings.Join(names, "|"), strings.Join(legacy, "|")))
	return re.MatchString(src)
}

// Item is one item of a forEach: a list item, or a map entry (Each its key,
// Value its value); with several iterators, one combination (Of: each
// iterator's item, in order; Index: the combination's position).
type Item struct {
	Index int
	Each  any
	Value any
	Map   bool
	Of    []Item
}

// Items lists the items of fe in obj: a list's items in order, a map's
// entries by key, several iterators' combinations with the first as the
// outer loop. An absent field has no items. It fails when a field is not
// what the schema declares, or neither a list nor a map, and with
// *TooManyItemsError past Limit (before making the combinations).
func (fe *ForEach) Items(obj map[string]any) ([]Item, error) {
	if it := fe.Single(); it != nil {
		items, err := it.items(obj)
		if err == nil && len(items) > fe.Limit {
			err = &TooManyItemsError{ForEach: fe, Count: len(items)}
		}
		return items, err
	}
	return fe.product(obj)
}

// items lists one iterator's items.
func (it *Iterator) items(obj map[string]any) ([]Item, error) {
	var cur any = obj
	for _, seg := range it.Path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, nil
		}
		cur = m[seg]
	}
	var items []Item
	switch x := cur.(type) {
	case nil:
	case []any:
		if it.Map {
			return nil, fmt.Errorf("%s is a list, but the schema declares a map", it.Field)
		}
		for i, v := range x {
			items = append(items, Item{Index: i, Each: v})
		}
	case map[string]any:
		if !it.Map && !it.Unknown {
			return nil, fmt.Errorf("%s is a map, but the schema declares a list", it.Field)
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			items = append(items, Item{Index: i, Each: k, Value: x[k], Map: true})
		}
	default:
		return nil, &NotIterableError{Field: it.Field, Value: cur}
	}
	return items, nil
}

// NotIterableError: a forEach field holds neither a list nor a map.
type NotIterableError struct {
	Field string
	Value any
}

func (e *NotIterableError) Error() string {
	return fmt.Sprintf("%s is %T; forEach iterates a list or a map", e.Field, e.Value)
}

// TooManyItemsError: a forEach has more items (combinations) than its
// Limit.
type TooManyItemsError struct {
	ForEach *ForEach
	// Count is how many there are (saturated for a product).
	Count int
}

func (e *TooManyItemsError) Error() string {
	return fmt.Sprintf("%s has %d items; one forEach declaration makes at most %d children", e.ForEach.Field, e.Count, e.ForEach.Limit)
}

// Scope is the scope of one item over base: CEL reads each (or the alias),
// index and, for a map, value; a legacy template reads .item (or the
// alias), .index and .value at the root of the object, as upstream. With
// several iterators: each alias, and index.
func (fe *ForEach) Scope(base *Scope, it Item) *Scope {
	self := make(map[string]any, len(base.Self)+4)
	for k, v := range base.Self {
		self[k] = v
	}
	vars := make(map[string]any, len(base.Vars)+4)
	for k, v := range base.Vars {
		vars[k] = v
	}
	index := int64(it.Index)
	self[IndexVar], vars[IndexVar] = index, index
	if one := fe.Single(); one != nil {
		self[LegacyItem], vars[EachVar] = it.Each, it.Each
		if it.Map || one.Unknown {
			self[ValueVar], vars[ValueVar] = it.Value, it.Value
		}
		if one.As != "" {
			self[one.As], vars[one.As] = it.Each, it.Each
		}
	} else {
		for i, iter := range fe.Iterators {
			self[iter.As], vars[iter.As] = it.Of[i].Each, it.Of[i].Each
		}
	}
	s := NewScope(self)
	s.Children, s.Vars, s.Roots = base.Children, vars, base.Roots
	return s
}

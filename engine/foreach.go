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
// field the schema does not bound (maxItems, maxProperties).
const DefaultMaxForEach = 100

// Names of the current forEach item. CEL reads `each` (or the alias),
// `index`, and `value` for map entries; legacy templates read `.item` (or
// the alias), `.index` and `.value`, as upstream (pkg/types/foreach.go).
const (
	EachVar    = "each"
	IndexVar   = "index"
	ValueVar   = "value"
	LegacyItem = "item"
)

// ForEach is a compiled forEach: one child per item of a list field, or per
// entry of a map field (sorted by key) of the custom resource.
type ForEach struct {
	// Field is the path as written, Path its segments.
	Field string
	Path  []string
	// As is the alias of the current item, "" when none.
	As string
	// Map is true for a map field: the item is the key, value the entry.
	// Unknown is true when the schema does not say (either works).
	Map, Unknown bool
	// Limit is the most items: the field's maxItems/maxProperties when
	// Bounded, else the compile option's cap (checked when rendering).
	Limit   int
	Bounded bool
	Source  *katalog.ForEach
	// itemSchema and valueSchema type the item and a map entry's value
	// (nil: any).
	itemSchema, valueSchema *structuralschema.Structural
}

// forEach resolves a declaration's forEach field in the entry's schema.
func (c *compiler) forEach(sc compileScope, r *katalog.Resource, base string) *ForEach {
	src := r.ForEach
	fe := &ForEach{Field: src.Field, Path: src.Path, As: src.As, Source: src}
	fe.Limit = c.opts.MaxForEach
	if fe.Limit <= 0 {
		fe.Limit = DefaultMaxForEach
	}
	s := sc.self
	for i, seg := range src.Path {
		if s == nil || s.XPreserveUnknownFields && property(s, seg) == nil {
			s = nil
			break
		}
		next := property(s, seg)
		if next == nil {
			c.errorf(sc, src.FieldPos, base+".forEach.field", "%s is not in the schema of %s%s", strings.Join(src.Path[:i+1], "."), sc.selfVersion, katalog.DidYouMean(seg, PropertyNames(s)))
			return nil
		}
		s = next
	}
	switch {
	case s == nil || s.XIntOrString || s.Type == "" && s.XPreserveUnknownFields:
		fe.Unknown = true
	case s.Type == "array":
		if s.ValueValidation != nil && s.ValueValidation.MaxItems != nil {
			fe.Limit, fe.Bounded = int(*s.ValueValidation.MaxItems), true
		}
	case s.Type == "object" && s.AdditionalProperties != nil:
		fe.Map = true
		if s.ValueValidation != nil && s.ValueValidation.MaxProperties != nil {
			fe.Limit, fe.Bounded = int(*s.ValueValidation.MaxProperties), true
		}
	default:
		c.errorf(sc, src.FieldPos, base+".forEach.field", "%s is %s; forEach iterates a list (one child per item) or a map (one child per entry)", src.Field, DescribeSchema(s))
		return nil
	}
	fe.itemSchema, fe.valueSchema = itemSchemas(s, fe)
	return fe
}

// itemSchemas are the schemas of the current item and, for maps, value.
func itemSchemas(s *structuralschema.Structural, fe *ForEach) (item, value *structuralschema.Structural) {
	switch {
	case fe.Unknown:
		return nil, nil
	case fe.Map:
		str := structuralschema.Structural{Generic: structuralschema.Generic{Type: "string"}}
		return &str, s.AdditionalProperties.Structural
	}
	return s.Items, nil
}

// checkItemIdentity fails a forEach declaration whose name and namespace do
// not depend on the item: every item would name the same object.
func (c *compiler) checkItemIdentity(sc compileScope, r *katalog.Resource, out *Resource, fe *ForEach, base string) {
	for _, key := range []string{"name", "namespace"} {
		if n := out.Fields.Get(key); n != nil && n.IsExpr() && readsItem(n.Expr.Source(), fe.As) {
			return
		}
	}
	pos := r.Pos
	if e := r.Fields.Entry("name"); e != nil {
		pos = e.Value.Pos
	}
	alias := ""
	if fe.As != "" {
		alias = " or " + fe.As
	}
	c.errorf(sc, pos, base+".name", "forEach makes one child per item of %s, but the name does not depend on the item, so every item would name the same object; use it in the name, e.g. name: \"${self.metadata.name}-${each}\" (CEL: each%s, index; legacy: {{ .item }}, {{ .index }})", fe.Field, alias)
}

// readsItem reports whether an expression's source reads the current item.
func readsItem(src, as string) bool {
	names := []string{EachVar, IndexVar, ValueVar}
	legacy := []string{LegacyItem, IndexVar, ValueVar}
	if as != "" {
		names, legacy = append(names, as), append(legacy, as)
	}
	re := regexp.MustCompile(fmt.Sprintf(`(^|[^.\w])(%s)\b|(^|[^\w\])])\.(%s)\b`, strings.Join(names, "|"), strings.Join(legacy, "|")))
	return re.MatchString(src)
}

// Item is one item of a forEach field: a list item, or a map entry (Each
// its key, Value its value).
type Item struct {
	Index int
	Each  any
	Value any
	Map   bool
}

// Items lists the items of fe's field in obj, a map's entries by key; none
// when the field is absent. It fails when the field is not what the
// schema declares, or neither a list nor a map.
func (fe *ForEach) Items(obj map[string]any) ([]Item, error) {
	var cur any = obj
	for _, seg := range fe.Path {
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
		if fe.Map {
			return nil, fmt.Errorf("%s is a list, but the schema declares a map", fe.Field)
		}
		for i, v := range x {
			items = append(items, Item{Index: i, Each: v})
		}
	case map[string]any:
		if !fe.Map && !fe.Unknown {
			return nil, fmt.Errorf("%s is a map, but the schema declares a list", fe.Field)
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
		return nil, &NotIterableError{Field: fe.Field, Value: cur}
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

// Scope is the scope of one item over base: CEL reads each (or the alias),
// index and, for a map, value; a legacy template reads .item (or the
// alias), .index and .value at the root of the object, as upstream.
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
	self[LegacyItem], self[IndexVar] = it.Each, index
	vars[EachVar], vars[IndexVar] = it.Each, index
	if it.Map || fe.Unknown {
		self[ValueVar], vars[ValueVar] = it.Value, it.Value
	}
	if fe.As != "" {
		self[fe.As], vars[fe.As] = it.Each, it.Each
	}
	s := NewScope(self)
	s.Children, s.Vars = base.Children, vars
	return s
}

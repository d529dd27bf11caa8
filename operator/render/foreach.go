package render

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/orkspace/orkestra-cel/engine"
)

// LabelDeclaration marks the children of a forEach declaration with the
// declaration (onReconcile.deployments.0): the operator deletes those of
// items that are gone.
const LabelDeclaration = "orkestra.orkspace.io/declaration"

// declaration evaluates one declaration into its children: one, or one per
// forEach item, each written to every toNamespaces namespace.
func (r *renderer) declaration(rs *engine.Resource) ([]*Child, error) {
	if rs.ForEach == nil {
		c, err := r.evaluate(rs, r.scope)
		if err != nil {
			return nil, err
		}
		return r.toNamespaces(c)
	}
	items, err := r.forEachItems(rs)
	if err != nil {
		return nil, err
	}
	var out []*Child
	for _, it := range items {
		c, err := r.evaluate(rs, r.itemScope(rs.ForEach, it))
		if err != nil {
			return nil, err
		}
		c.Declaration, c.Item = DeclarationOf(rs), it.describe()
		cs, err := r.toNamespaces(c)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

// DeclarationOf is the declaration label value of a forEach declaration.
func DeclarationOf(rs *engine.Resource) string {
	return rs.Hook + "." + rs.Kind.Key + "." + strconv.Itoa(rs.Source.Index)
}

// item is one forEach step: a list item, or a map entry (key and value).
type item struct {
	index int
	each  any
	value any
	isMap bool
}

func (it item) describe() string {
	if it.isMap {
		return fmt.Sprintf("entry %v", it.each)
	}
	return fmt.Sprintf("item %d", it.index)
}

// forEachItems reads the forEach field of the custom resource: a list's
// items in order, a map's entries by key. An absent field has no items.
func (r *renderer) forEachItems(rs *engine.Resource) ([]item, error) {
	fe := rs.ForEach
	field := rs.Fields.Field + ".forEach"
	var cur any = r.scope.Self
	for _, seg := range fe.Path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, nil
		}
		cur = m[seg]
	}
	var items []item
	switch x := cur.(type) {
	case nil:
	case []any:
		if fe.Map {
			return nil, r.errorf(field, fmt.Errorf("%s is a list, but the schema declares a map", fe.Field))
		}
		for i, v := range x {
			items = append(items, item{index: i, each: v})
		}
	case map[string]any:
		if !fe.Map && !fe.Unknown {
			return nil, r.errorf(field, fmt.Errorf("%s is a map, but the schema declares a list", fe.Field))
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			items = append(items, item{index: i, each: k, value: x[k], isMap: true})
		}
	default:
		return nil, r.errorf(field, fmt.Errorf("%s is %s; forEach iterates a list or a map", fe.Field, describe(cur)))
	}
	if len(items) > fe.Limit {
		how := "bound " + fe.Field + " with maxItems (or maxProperties) in the CRD, or raise --max-foreach"
		if fe.Bounded {
			how = "the schema's bound of " + fe.Field
		}
		return nil, r.errorf(field, fmt.Errorf("%s has %d items; one forEach declaration makes at most %d children (%s)", fe.Field, len(items), fe.Limit, how))
	}
	return items, nil
}

// itemScope is the scope of one item: CEL reads each (or the alias), index
// and, for a map, value; a legacy template reads .item (or the alias),
// .index and .value at the root of the object, as upstream.
func (r *renderer) itemScope(fe *engine.ForEach, it item) *engine.Scope {
	self := make(map[string]any, len(r.scope.Self)+4)
	for k, v := range r.scope.Self {
		self[k] = v
	}
	vars := make(map[string]any, len(r.scope.Vars)+4)
	for k, v := range r.scope.Vars {
		vars[k] = v
	}
	index := int64(it.index)
	self[engine.LegacyItem], self[engine.IndexVar] = it.each, index
	vars[engine.EachVar], vars[engine.IndexVar] = it.each, index
	if it.isMap || fe.Unknown {
		self[engine.ValueVar], vars[engine.ValueVar] = it.value, it.value
	}
	if fe.As != "" {
		self[fe.As], vars[fe.As] = it.each, it.each
	}
	s := engine.NewScope(self)
	s.Children, s.Vars = r.scope.Children, vars
	return s
}

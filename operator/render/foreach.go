package render

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/orkspace/orkestra-cel/engine"
)

// LabelDeclaration marks the children of a forEach declaration with the
// declaration (onReconcile.deployments.0): the operator deletes those of
// items that are gone.
const LabelDeclaration = "orkestra.orkspace.io/declaration"

// declaration evaluates one declaration into its children: one, or one per
// forEach item (combination), each written to every toNamespaces namespace.
func (r *renderer) declaration(rs *engine.Resource) ([]*Child, error) {
	base := r.scope
	if rs.Inputs != nil {
		s, err := rs.Inputs.Scope(r.scope)
		if err != nil {
			return nil, r.errorf(rs.Fields.Field+".imports.with", err)
		}
		base = s
	}
	if rs.ForEach == nil {
		c, err := r.evaluate(rs, base)
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
		c, err := r.evaluate(rs, rs.ForEach.Scope(base, it))
		if err != nil {
			return nil, err
		}
		c.Declaration, c.Item, c.item = DeclarationOf(rs), rs.ForEach.Describe(it), &it
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

// forEachItems reads the forEach fields of the custom resource (as the
// entry's expressions see it): a list's items in order, a map's entries by
// key, several fields' combinations. An absent field has no items.
func (r *renderer) forEachItems(rs *engine.Resource) ([]engine.Item, error) {
	fe := rs.ForEach
	field := rs.Fields.Field + ".forEach"
	items, err := fe.Items(r.scope.Self)
	var ni *engine.NotIterableError
	var many *engine.TooManyItemsError
	switch {
	case errors.As(err, &ni):
		return nil, r.errorf(field, fmt.Errorf("%s is %s; forEach iterates a list or a map", ni.Field, describe(ni.Value)))
	case errors.As(err, &many):
		how := "bound " + fe.Field + " with maxItems (or maxProperties) in the CRD, or raise --max-foreach"
		if fe.Bounded {
			how = "the schema's bound of " + fe.Field
		}
		what := "items"
		if fe.Single() == nil {
			what = "combinations"
		}
		return nil, r.errorf(field, fmt.Errorf("%s has %d %s; one forEach declaration makes at most %d children (%s)", fe.Field, many.Count, what, fe.Limit, how))
	case err != nil:
		return nil, r.errorf(field, err)
	}
	return items, nil
}

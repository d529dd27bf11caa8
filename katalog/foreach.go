package katalog

import (
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// forEach decodes a declaration's forEach (upstream: pkg/types/foreach.go,
// pkg/runtime/reconciler/docs/05-foreach.md): one iterator, or a list of
// iterators whose items combine (the cartesian product, as kro's forEach
// with several iterators). An iterator is `{field: spec.regions, as:
// region}` — field a dot path to a list or map field of the custom resource
// (a leading `.` or `self.` is accepted), as an optional alias of its item —
// or kro's single-entry form `{region: spec.regions}` (the value may be
// written `${self.spec.regions}`). Several iterators each need an alias, all
// different: `each` and `value` would not say which item they mean.
func (d *decoder) forEach(n *yaml.Node, path string) []*ForEach {
	n = Resolve(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		if f := d.iterator(n, path); f != nil {
			return []*ForEach{f}
		}
		return nil
	}
	if len(n.Content) == 0 {
		d.errorf(n, path, "forEach lists no iterator; give one ({field: spec.regions, as: region}) or remove forEach")
		return nil
	}
	var out []*ForEach
	seen := map[string]*ForEach{}
	for i, item := range n.Content {
		ipath := fmt.Sprintf("%s[%d]", path, i)
		f := d.iterator(item, ipath)
		if f == nil {
			continue
		}
		if len(n.Content) > 1 {
			switch prev := seen[f.As]; {
			case f.As == "":
				d.errorf(item, ipath, "with several iterators each needs an alias (as: region, or {region: %s}): each and value would not say which item they mean", f.Field)
				continue
			case prev != nil:
				d.errorAt(f.AsPos, ipath+".as", "the alias %q is already the item of %s; give each iterator its own", f.As, prev.Field)
				continue
			}
			seen[f.As] = f
		}
		out = append(out, f)
	}
	if len(out) != len(n.Content) {
		return nil
	}
	return out
}

// iterator decodes one iterator: {field, as} or {alias: field}.
func (d *decoder) iterator(n *yaml.Node, path string) *ForEach {
	n = Resolve(n)
	if n != nil && n.Kind == yaml.MappingNode && len(n.Content) == 2 && !contains(forEachKeys, n.Content[0].Value) {
		// kro's form: the alias is the key.
		k, v := n.Content[0], n.Content[1]
		f := &ForEach{Pos: d.pos(n)}
		if !d.iteratorField(f, v, join(path, k.Value)) {
			return nil
		}
		f.As, f.AsPos = k.Value, d.pos(k)
		if !d.checkAlias(f, k, join(path, k.Value)) {
			return nil
		}
		return f
	}
	o := d.mapping(n, path, forEachKeys, nil)
	f := &ForEach{Pos: d.pos(n)}
	if !o.has("field") {
		d.errorf(n, path, "forEach needs field: the dot path of a list or map field of the custom resource, e.g. spec.regions (several iterators: a list of them, or kro's form - region: spec.regions)")
		return nil
	}
	if !d.iteratorField(f, o["field"].value, path+".field") {
		return nil
	}
	if a, ok := o["as"]; ok {
		f.As, f.AsPos = d.str(a.value, path+".as"), d.pos(a.value)
		if !d.checkAlias(f, a.value, path+".as") {
			return nil
		}
	}
	return f
}

// iteratorField reads the field an iterator iterates: a dot path, or a CEL
// reference to it (${self.spec.regions}).
func (d *decoder) iteratorField(f *ForEach, v *yaml.Node, path string) bool {
	f.Field, f.FieldPos = d.str(v, path), d.pos(v)
	p := strings.TrimSpace(f.Field)
	if m := celFieldRef.FindStringSubmatch(p); m != nil {
		p = m[1]
	}
	p = strings.TrimPrefix(strings.TrimPrefix(p, "self."), ".")
	if p == "" || strings.Contains(p, "{{") || strings.Contains(p, "${") || !dotPath.MatchString(p) {
		d.errorf(v, path, "forEach iterates a field of the custom resource, a dot path such as spec.regions (or ${self.spec.regions}), not an expression; got %q. To leave items out, give the declaration a when: over the item", f.Field)
		return false
	}
	f.Path = strings.Split(p, ".")
	return true
}

func (d *decoder) checkAlias(f *ForEach, n *yaml.Node, path string) bool {
	switch {
	case !identifier.MatchString(f.As):
		d.errorf(n, path, "forEach alias %q must be an identifier (letters, digits, _), such as region", f.As)
		return false
	case contains(reservedItemNames, f.As):
		d.errorf(n, path, "forEach alias %q would hide %s; choose another name", f.As, reservedWhat(f.As))
		return false
	}
	return true
}

var (
	identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// celFieldRef is ${self.a.b}: a plain reference, the field it names.
	celFieldRef = regexp.MustCompile(`^\$\{\s*(self(?:\.[A-Za-z_][A-Za-z0-9_-]*)+)\s*\}$`)
	dotPath     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*$`)
)

// reservedItemNames are the roots and variables an alias may not hide.
var reservedItemNames = []string{"self", "spec", "status", "metadata", "apiVersion", "kind", "children", "each", "index", "value"}

func reservedWhat(name string) string {
	switch name {
	case "each", "index", "value":
		return "forEach's own " + name
	case "self", "children":
		return name
	}
	return "the custom resource's ." + name
}

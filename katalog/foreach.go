package katalog

import (
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// forEach decodes a declaration's forEach (upstream: pkg/types/foreach.go,
// pkg/runtime/reconciler/docs/05-foreach.md): `field` is a dot path to a list
// or map field of the custom resource (spec.regions; a leading `.` or
// `self.` is accepted), `as` an optional alias of the current item.
func (d *decoder) forEach(n *yaml.Node, path string) *ForEach {
	o := d.mapping(n, path, forEachKeys, nil)
	f := &ForEach{Pos: d.pos(resolve(n))}
	if !o.has("field") {
		d.errorf(n, path, "forEach needs field: the dot path of a list or map field of the custom resource, e.g. spec.regions")
		return nil
	}
	f.Field, f.FieldPos = d.str(o["field"].value, path+".field"), d.pos(o["field"].value)
	p := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(f.Field), "self."), ".")
	if p == "" || strings.Contains(p, "{{") || strings.Contains(p, "${") {
		d.errorf(o["field"].value, path+".field", "forEach.field is a dot path such as spec.regions, not an expression; got %q", f.Field)
		return nil
	}
	f.Path = strings.Split(p, ".")
	if a, ok := o["as"]; ok {
		f.As, f.AsPos = d.str(a.value, path+".as"), d.pos(a.value)
		switch {
		case !identifier.MatchString(f.As):
			d.errorf(a.value, path+".as", "forEach.as %q must be an identifier (letters, digits, _), such as region", f.As)
		case contains(reservedItemNames, f.As):
			d.errorf(a.value, path+".as", "forEach.as %q would hide %s; choose another name", f.As, reservedWhat(f.As))
		}
	}
	return f
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

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

package katalog

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// Normalize is an entry's normalize block, as upstream declares it
// (examples/use-cases/normalize in iAlexeze/orkestra; the resolver step is
// pkg/resources/template/resolver_normalize.go): spec fields rewritten on a
// copy of the custom resource before anything of the entry evaluates. Every
// value reads the object as stored; the rewritten fields are never written
// back to the cluster.
type Normalize struct {
	Pos Pos
	// Audit exposes what changed to legacy templates as ._normalizeChanges
	// (a list of {field, from, to}; absent when nothing changed).
	Audit  bool
	Fields []*NormalizeField
}

// NormalizeField rewrites one spec field.
type NormalizeField struct {
	Pos Pos
	// Path is relative to spec, dotted as written (resources.requests.cpu).
	Path  string
	Value *Value
	// Type is the field's declared type (types:), "" when none.
	Type string
}

var (
	normalizeKeys  = []string{"audit", "spec", "types"}
	normalizeTypes = []string{"string", "int", "integer", "float", "number", "bool", "boolean"}
)

// NormalizeChangesRoot is the legacy template root holding the audit.
const NormalizeChangesRoot = "_normalizeChanges"

func (d *decoder) normalize(e *CRDEntry, f field) {
	o := d.mapping(f.value, "normalize", normalizeKeys, nil)
	nz := &Normalize{Pos: d.pos(f.key)}
	if o.has("audit") {
		nz.Audit = d.boolean(o["audit"].value, "normalize.audit")
	}
	spec := Resolve(o["spec"].value)
	if spec == nil || spec.Kind != yaml.MappingNode || len(spec.Content) == 0 {
		d.errorf(f.key, "normalize.spec", "normalize needs spec: a map of spec field paths to the value each is rewritten to, e.g. spec: {environment: '{{ .spec.environment | toLower }}'}")
		return
	}
	byPath := map[string]*NormalizeField{}
	for i := 0; i+1 < len(spec.Content); i += 2 {
		k := spec.Content[i]
		path := "normalize.spec." + k.Value
		if msg := checkDotPath(k.Value); msg != "" {
			d.errorf(k, path, "%s", msg)
			continue
		}
		if prev := byPath[k.Value]; prev != nil {
			d.errorf(k, path, "spec.%s is normalized twice (first at %s); keep one", k.Value, prev.Pos)
			continue
		}
		nf := &NormalizeField{Pos: d.pos(k), Path: k.Value, Value: d.value(spec.Content[i+1], path)}
		byPath[k.Value] = nf
		nz.Fields = append(nz.Fields, nf)
	}
	for name, t := range d.stringMap(o["types"].value, "normalize.types") {
		nf := byPath[name]
		switch {
		case nf == nil:
			d.errorf(o["types"].value, "normalize.types."+name, "types names spec.%s, which normalize.spec does not rewrite", name)
		case !contains(normalizeTypes, t):
			d.errorf(o["types"].value, "normalize.types."+name, "type %q is not one of %s", t, strings.Join(normalizeTypes, ", "))
		default:
			nf.Type = t
		}
	}
	e.Normalize = nz
}

// checkDotPath says what is wrong with a dotted field path ("" if nothing).
func checkDotPath(p string) string {
	for _, seg := range strings.Split(p, ".") {
		if seg == "" {
			return fmt.Sprintf("field path %q has an empty segment; write it as a.b.c relative to spec", p)
		}
	}
	return ""
}

// stringMap decodes a map of strings.
func (d *decoder) stringMap(n *yaml.Node, path string) map[string]string {
	n = Resolve(n)
	if n == nil || isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "must be a map of strings, got %s", describe(n))
		return nil
	}
	out := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		out[n.Content[i].Value] = d.str(n.Content[i+1], join(path, n.Content[i].Value))
	}
	return out
}

package katalog

import (
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// Motif inputs (upstream: pkg/types/motif.go MotifInput, MotifImport.With):
// a motif declares inputs; the import that uses it binds them with with:
// (values are literals or expressions over the importing entry's custom
// resource); the motif's templates read them as .inputs.NAME (or index
// .inputs "NAME"), its CEL expressions as inputs.NAME, typed by the input's
// type. A required input the import does not bind, a with: key the motif
// does not declare, and a value of the wrong type are errors where written.

// MotifImport is one import of a motif by an entry, with its inputs bound.
type MotifImport struct {
	// File is the motif; Pos and Path the import item.
	File string
	Pos  Pos
	Path string
	// Inputs are the motif's declarations, in order.
	Inputs []*MotifInput
	// With holds the import's values by input name.
	With map[string]*Value
}

// MotifInput is one declared input of a motif.
type MotifInput struct {
	Name, Description string
	// Type is string (the default), integer, number or boolean.
	Type     string
	Required bool
	// Default is the value when the import binds none (nil: none).
	Default *Value
	Pos     Pos
}

// Value is what the import binds the input to: its with: value, else its
// default; nil when neither.
func (m *MotifImport) Value(in *MotifInput) *Value {
	if v := m.With[in.Name]; v != nil {
		return v
	}
	return in.Default
}

// inputTypes are the types an input may declare, by spelling.
var inputTypes = map[string]string{
	"": "string", "string": "string", "str": "string",
	"integer": "integer", "int": "integer",
	"number": "number", "float": "number",
	"boolean": "boolean", "bool": "boolean",
}

var inputKeys = []string{"name", "description", "required", "type", "default"}

// inputs decodes a motif's inputs: block (in the motif's decoder).
func (d *decoder) inputs(n *yaml.Node) []*MotifInput {
	var out []*MotifInput
	seen := map[string]*MotifInput{}
	for i, item := range d.list(n, "inputs") {
		path := fmt.Sprintf("inputs[%d]", i)
		o := d.mapping(item, path, inputKeys, nil)
		in := &MotifInput{Name: d.str(o["name"].value, path+".name"), Description: d.str(o["description"].value, path+".description"), Pos: d.pos(Resolve(item))}
		if in.Name == "" {
			d.errorf(item, path, "an input needs name:")
			continue
		}
		if prev := seen[in.Name]; prev != nil {
			d.errorf(o["name"].value, path+".name", "input %q is declared twice: here and at %s", in.Name, prev.Pos)
			continue
		}
		typ := d.str(o["type"].value, path+".type")
		canon, ok := inputTypes[strings.ToLower(typ)]
		if !ok {
			d.errorf(o["type"].value, path+".type", "an input's type is string, integer, number or boolean, got %q", typ)
		}
		in.Type = canon
		in.Required = d.boolean(o["required"].value, path+".required")
		if f, ok := o["default"]; ok {
			if in.Required {
				d.errorf(f.key, path+".default", "input %q is required, so its default never applies; remove one (upstream: a default is only valid when required is false)", in.Name)
			}
			in.Default = d.value(f.value, path+".default")
		}
		seen[in.Name] = in
		out = append(out, in)
	}
	return out
}

// bind checks an import's with: against the motif's inputs: every key
// declared, every required input bound.
func (d *decoder) bind(imp *MotifImport, with field, path string) {
	imp.With = map[string]*Value{}
	names := make([]string, len(imp.Inputs))
	declared := map[string]bool{}
	for i, in := range imp.Inputs {
		names[i] = in.Name
		declared[in.Name] = true
	}
	if with.value != nil {
		w := Resolve(with.value)
		if w.Kind != yaml.MappingNode {
			d.errorf(w, path+".with", "with: maps the motif's inputs to values, got %s", describe(w))
			return
		}
		for i := 0; i+1 < len(w.Content); i += 2 {
			k := w.Content[i]
			if !declared[k.Value] {
				hint := DidYouMean(k.Value, names)
				if hint == "" {
					hint = "; its inputs: " + strings.Join(names, ", ")
					if len(names) == 0 {
						hint = "; it declares none"
					}
				}
				d.errorf(k, path+".with."+k.Value, "the motif %s has no input %q%s", imp.File, k.Value, hint)
				continue
			}
			imp.With[k.Value] = d.value(w.Content[i+1], path+".with."+k.Value)
		}
	}
	for _, in := range imp.Inputs {
		if in.Required && imp.With[in.Name] == nil {
			at := orNode(with.key, nil)
			if at == nil {
				d.errorAt(imp.Pos, path, "the motif %s requires input %q; bind it with with: {%s: …}", imp.File, in.Name, in.Name)
			} else {
				d.errorf(at, path+".with", "the motif %s requires input %q; bind it with with: {%s: …}", imp.File, in.Name, in.Name)
			}
		}
	}
}

// inputRef matches a template that is one read of an input:
// {{ .inputs.NAME }} or {{ index .inputs "NAME" }}.
var inputRef = regexp.MustCompile(`^\{\{-?\s*(?:\.inputs\.([A-Za-z_][A-Za-z0-9_]*)|index\s+\.inputs\s+"([^"\\]+)")\s*-?\}\}$`)

// literalInput returns the literal an expression stands for when it is one
// read of an input bound to a literal (with: or default); ok is false
// otherwise. Settings read when the katalog loads (rotateAfter, a profile's
// name) take inputs this way.
func (m *MotifImport) literalInput(s string) (string, bool) {
	if m == nil {
		return "", false
	}
	sm := inputRef.FindStringSubmatch(strings.TrimSpace(s))
	if sm == nil {
		return "", false
	}
	name := sm[1] + sm[2]
	for _, in := range m.Inputs {
		if in.Name != name {
			continue
		}
		v := m.Value(in)
		if v == nil || v.Kind == MapValue || v.Kind == ListValue || v.Kind == NullValue || v.Kind == StringValue && isExpression(v.Str) {
			return "", false
		}
		return v.Str, true
	}
	return "", false
}

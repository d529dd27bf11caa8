package katalog

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

func (d *decoder) status(n *yaml.Node, path string) *Status {
	o := d.mapping(n, path, statusKeys, unimplementedStatus)
	s := &Status{Pos: d.pos(Resolve(n))}
	if f, ok := o["conditions"]; ok {
		d.statusConditions(s, f.value, path+".conditions")
	}
	var items []*yaml.Node
	if f, ok := o["include"]; ok {
		items = d.includedFields(f.value, path+".include")
	}
	if list := Resolve(o["fields"].value); list != nil && !isNull(list) {
		if list.Kind != yaml.SequenceNode {
			d.errorf(list, path+".fields", "must be a list of `- path: … / value: …` entries")
			return s
		}
		items = append(items, list.Content...)
	}
	for i, item := range items {
		ipath := fmt.Sprintf("%s.fields[%d]", path, i)
		fo := d.mapping(item, ipath, statusFieldKeys, nil)
		f := &StatusField{Pos: d.pos(Resolve(item))}
		f.Path = strings.TrimPrefix(d.str(fo["path"].value, ipath+".path"), "status.")
		if f.Path == "" {
			d.errorf(item, ipath, "a status field needs `path:` (relative to status, e.g. phase)")
			continue
		}
		if !fo.has("value") {
			d.errorf(item, ipath, "a status field needs `value:`")
			continue
		}
		f.Value = d.value(fo["value"].value, ipath+".value")
		if fo.has("type") {
			t := d.str(fo["type"].value, ipath+".type")
			canon, ok := statusTypes[strings.ToLower(t)]
			if !ok {
				d.errorf(fo["type"].value, ipath+".type", "type must be string (or str, default), int (integer), float, bool (boolean) or auto, got %q", t)
			}
			f.Type = canon
		}
		if fo.has("when") {
			f.When = d.when(fo["when"].value, ipath+".when")
		}
		if c, ok := fo["clearOnFalse"]; ok {
			f.ClearOnFalse = d.boolean(c.value, ipath+".clearOnFalse")
			if f.ClearOnFalse && f.When.Empty() {
				d.errorf(c.key, ipath+".clearOnFalse", "clearOnFalse clears the field while its when: does not hold; add a when:")
			}
		}
		s.Fields = append(s.Fields, f)
	}
	d.shadowedStatus(s.Fields, path)
	return s
}

// shadowedStatus warns about a status field that never shows: one path may
// be declared several times (each under its own when:, the last that holds
// wins, as upstream), but a declaration followed by an unconditional one of
// the same path is always overwritten.
func (d *decoder) shadowedStatus(fields []*StatusField, path string) {
	for i, f := range fields {
		for _, later := range fields[i+1:] {
			if later.Path == f.Path && later.When.Empty() {
				*d.diags = append(*d.diags, Diagnostic{Pos: f.Pos, Severity: Warning, Entry: d.entry, Field: fmt.Sprintf("%s.fields[%d]", path, i),
					Message: fmt.Sprintf("status.%s is set again unconditionally at %s, so this declaration never shows; remove it, or give the later one a when:", f.Path, later.Pos)})
				break
			}
		}
	}
}

// includedFields reads the status fields of a fragment file (`include:
// ./status.yaml`, a document with `fields:`), which come before the block's
// own (orkspace/orkestra examples/intermediate/08-state-machine).
func (d *decoder) includedFields(n *yaml.Node, path string) []*yaml.Node {
	fd, root := d.fragment(n, path, "status fragment")
	if root == nil {
		return nil
	}
	var list *yaml.Node
	if root.Kind == yaml.MappingNode {
		list = Resolve(fd.mapping(root, "", []string{"fields"}, nil)["fields"].value)
	}
	if list == nil || list.Kind != yaml.SequenceNode {
		fd.errorf(root, "fields", "a status fragment needs `fields:`, a list of `- path: … / value: …` entries")
		return nil
	}
	return list.Content
}

// statusTypes are the original's spellings of a status field's type
// (case-insensitive), canonical. "string", "str" and "default" all mean a
// string, as does no type at all.
var statusTypes = map[string]string{
	"string": "string", "str": "string", "default": "string",
	"int": "int", "integer": "int",
	"bool": "bool", "boolean": "bool",
	"float": "float", "auto": "auto",
}

package katalog

import (
	"fmt"
	"regexp"
	"slices"

	"gopkg.in/yaml.v3"
)

var noteNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// notes decodes the top-level `notes:` of the original format: a list of
// {name, description, expression}, or {functions: [that list]}. A note named
// like an imported one replaces it when overriding (the document imports
// others: a Komposer's own notes win, as upstream documents in
// examples/intermediate/09-notes/04-komposer), as does a later imported
// file's; two of one file are an error.
func (d *decoder) notes(k *Katalog, n *yaml.Node, overriding bool) {
	n = Resolve(n)
	if n == nil || isNull(n) {
		return
	}
	list, path := n, "notes"
	if n.Kind == yaml.MappingNode {
		o := d.mapping(n, "notes", []string{"functions"}, []string{"include"})
		list, path = Resolve(o["functions"].value), "notes.functions"
		if list == nil || isNull(list) {
			return
		}
	}
	if list.Kind != yaml.SequenceNode {
		d.errorf(list, path, "notes must be a list of `- name: … / expression: …` entries (or functions: with that list)")
		return
	}
	for i, item := range list.Content {
		ipath := fmt.Sprintf("%s[%d]", path, i)
		o := d.mapping(item, ipath, noteKeys, nil)
		note := &Note{Name: d.str(o["name"].value, ipath+".name"), Description: d.str(o["description"].value, ipath+".description"), Pos: d.pos(Resolve(item))}
		note.Shadow = d.boolean(o["shadow"].value, ipath+".shadow")
		note.NamePos = d.pos(o["name"].value)
		switch {
		case !o.has("name"):
			d.errorf(item, ipath, "a note needs name: (the function name templates call it by)")
			continue
		case !noteNameRE.MatchString(note.Name):
			d.errorf(o["name"].value, ipath+".name", "note name %q is not a template function name (letters, digits and _)", note.Name)
			continue
		case !o.has("expression"):
			d.errorf(item, ipath, "the note %s needs expression: (a template such as \"{{ .metadata.name }}.svc\")", note.Name)
			continue
		}
		if i := slices.IndexFunc(k.Notes, func(p *Note) bool { return p.Name == note.Name }); i >= 0 {
			prev := k.Notes[i]
			if prev.Pos.File == d.file || !overriding && len(d.loader.stack) == 0 {
				d.errorf(o["name"].value, ipath+".name", "a second note named %s; the first is at %s", note.Name, prev.Pos)
			}
			k.Notes = slices.Delete(k.Notes, i, i+1)
		}
		note.Expression = d.value(o["expression"].value, ipath+".expression")
		if note.Expression.Kind != StringValue {
			d.errorf(o["expression"].value, ipath+".expression", "the note %s's expression must be a string (a legacy template)", note.Name)
			continue
		}
		k.Notes = append(k.Notes, note)
	}
}

package katalog

import "gopkg.in/yaml.v3"

// DecodeWhen decodes a `when:` or `or:` block written in another document
// (an E2E spec's expectation) with the katalog's syntax: CEL strings and
// structured conditions. file names the document for positions.
func DecodeWhen(file string, n *yaml.Node, path string) (*When, Diagnostics) {
	var diags Diagnostics
	d := &decoder{file: file, diags: &diags, loader: &loader{}}
	return d.when(n, path), diags
}

// DecodeNotes decodes a `notes:` block written in another document with the
// katalog's syntax: user-defined template functions.
func DecodeNotes(file string, n *yaml.Node) ([]*Note, Diagnostics) {
	var diags Diagnostics
	d := &decoder{file: file, diags: &diags, loader: &loader{}}
	k := &Katalog{}
	d.notes(k, n, false)
	return k.Notes, diags
}

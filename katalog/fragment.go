package katalog

import (
	"gopkg.in/yaml.v3"
)

// fragment reads a file another file names by a path relative to itself —
// a motif, or the fragment of an include: — and returns its first non-empty
// document with that file's decoder; nil when it cannot be read (the
// diagnostic says why). The file must be inside the katalog's boundary
// (boundary.go), and it is recorded among the files the katalog needs
// (Katalog.Included), which `orkestra manifests` ships.
func (d *decoder) fragment(n *yaml.Node, path, what string) (*decoder, *yaml.Node) {
	file := resolvePath(d.dirOf(n, ""), d.str(n, path))
	if file == "" {
		return nil, nil
	}
	l := d.loader
	if err := l.confine(file); err != nil {
		d.errorf(n, path, "%s %v", what, err)
		return nil, nil
	}
	for _, doc := range l.parse(file, n, d.fileOf(n)) {
		root := Resolve(doc)
		if root == nil || isNull(root) {
			continue
		}
		if !contains(l.k.Included, file) && !contains(l.k.Files, file) {
			l.k.Included = append(l.k.Included, file)
		}
		fd := l.decoder(file)
		fd.entry, fd.owner = d.entry, d.owner
		return fd, root
	}
	return nil, nil
}

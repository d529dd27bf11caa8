package compat

import (
	"bytes"
	"os"

	"gopkg.in/yaml.v3"

	"github.com/orkspace/orkestra-cel/katalog"
)

// manifest is a CRD manifest file parsed with positions, to point findings
// at the line they are about.
type manifest struct {
	file string
	root *yaml.Node // the CRD's document; nil when it cannot be read
}

// readManifest finds the document of the CRD named name in file.
func readManifest(file, name string) manifest {
	m := manifest{file: file}
	data, err := os.ReadFile(file)
	if err != nil {
		return m
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			return m // io.EOF, or a file the loader already accepted is unreadable now
		}
		root := &doc
		if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
			root = root.Content[0]
		}
		if value(root, "kind") != nil && value(root, "kind").Value == "CustomResourceDefinition" &&
			value(value(root, "metadata"), "name") != nil && value(value(root, "metadata"), "name").Value == name {
			m.root = root
			return m
		}
	}
}

// value returns the value of key in mapping n, or nil.
func value(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// keyOf returns the key node of key in mapping n, or nil.
func keyOf(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i]
		}
	}
	return nil
}

// version returns the spec.versions item named name, or nil.
func (m manifest) version(name string) *yaml.Node {
	list := value(value(m.root, "spec"), "versions")
	if list == nil || list.Kind != yaml.SequenceNode {
		return nil
	}
	for _, item := range list.Content {
		if n := value(item, "name"); n != nil && n.Value == name {
			return item
		}
	}
	return nil
}

func (m manifest) pos(n *yaml.Node) katalog.Pos {
	if n == nil {
		return katalog.Pos{File: m.file}
	}
	return katalog.Pos{File: m.file, Line: n.Line, Col: n.Column}
}

// versionsPos is where spec.versions starts.
func (m manifest) versionsPos() katalog.Pos {
	if k := keyOf(value(m.root, "spec"), "versions"); k != nil {
		return m.pos(k)
	}
	return m.pos(m.root)
}

// versionPos is where the version named name is declared (its name), else
// spec.versions.
func (m manifest) versionPos(name string) katalog.Pos {
	if v := m.version(name); v != nil {
		return m.pos(value(v, "name"))
	}
	return m.versionsPos()
}

// versionKeyPos is where key of the version named name is, else the
// version.
func (m manifest) versionKeyPos(name, key string) katalog.Pos {
	if k := keyOf(m.version(name), key); k != nil {
		return m.pos(k)
	}
	return m.versionPos(name)
}

// fieldPos is where the schema of version declares the field at path (a
// field path such as [spec tls secretName], "[*]" for list items): the
// deepest schema node of the path that exists, so a removed field points
// at the properties it is missing from.
func (m manifest) fieldPos(version string, path []string) katalog.Pos {
	n := value(value(m.version(version), "schema"), "openAPIV3Schema")
	if n == nil {
		return m.versionPos(version)
	}
	at := n
	for _, step := range path {
		var next, key *yaml.Node
		if step == "[*]" {
			key, next = keyOf(at, "items"), value(at, "items")
		} else {
			props := value(at, "properties")
			key, next = keyOf(props, step), value(props, step)
			if next == nil && props != nil {
				return m.pos(keyOf(at, "properties"))
			}
		}
		if next == nil {
			return m.pos(at)
		}
		at = next
		n = key
	}
	return m.pos(n)
}

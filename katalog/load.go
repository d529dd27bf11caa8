package katalog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Keys of the original katalog format that this runtime does not implement.
// They load with a warning so that existing katalogs keep loading.
var (
	unimplementedTop   = []string{"security", "gateway", "providers", "crossAccess", "notification", "notifications", "controlCenter", "konfig", "observability"}
	unimplementedSpec  = []string{"providers", "crossAccess", "notification", "notifications", "gateway", "defaults", "external", "hooks"}
	unimplementedEntry = []string{"mode", "dependsOn", "queue", "validation", "mutation", "admission", "crossAccess", "providers", "notification", "notifications", "gateway", "external", "goHooks", "hooks", "leaderElection", "finalizerPolicy"}
	unimplementedBox   = []string{"preReconcile", "postReconcile", "when", "or", "goHooks", "hooks", "timeouts", "children"}
)

// Load reads a katalog from one or more paths. A path may be a file (every
// YAML document in it must be a Katalog) or a directory (its *.yaml and *.yml
// files are read; documents of other kinds, such as CRD manifests, are
// skipped). The documents' spec.crds are merged. Diagnostics hold every
// problem found (errors and warnings); the returned Katalog is usable only
// when there are no errors.
func Load(paths ...string) (*Katalog, Diagnostics) {
	var diags Diagnostics
	if len(paths) == 0 {
		return nil, Diagnostics{{Message: "no katalog given; pass -f KATALOG.yaml"}}
	}
	k := &Katalog{File: paths[0]}
	crds := map[string]*CRD{}
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			diags = append(diags, Diagnostic{Pos: Pos{File: p}, Message: fmt.Sprintf("cannot read katalog: %v", errors.Unwrap(err))})
			continue
		}
		if !info.IsDir() {
			loadFile(k, p, true, crds, &diags)
			continue
		}
		files, _ := filepath.Glob(filepath.Join(p, "*.yaml"))
		more, _ := filepath.Glob(filepath.Join(p, "*.yml"))
		files = append(files, more...)
		sort.Strings(files)
		before := len(k.Docs)
		for _, f := range files {
			loadFile(k, f, false, crds, &diags)
		}
		if len(k.Docs) == before {
			diags = append(diags, Diagnostic{Pos: Pos{File: p}, Message: "the directory holds no document of kind Katalog"})
		}
	}
	if len(k.CRDs) == 0 && !diags.HasErrors() {
		diags = append(diags, Diagnostic{Pos: Pos{File: k.File}, Message: "the katalog declares no CRD entries; add spec.crds"})
	}
	checkConversions(k, &diags)
	k.Warnings = diags.Warnings()
	return k, diags
}

func loadFile(k *Katalog, path string, strict bool, crds map[string]*CRD, diags *Diagnostics) {
	data, err := os.ReadFile(path)
	if err != nil {
		*diags = append(*diags, Diagnostic{Pos: Pos{File: path}, Message: fmt.Sprintf("cannot read katalog: %v", err)})
		return
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			*diags = append(*diags, yamlError(path, err))
			return
		}
		root := resolve(&doc)
		if root == nil || isNull(root) {
			continue
		}
		if !strict && !isKatalogDoc(root) {
			continue
		}
		k.Docs = append(k.Docs, &Document{File: path, Root: &doc})
		if !contains(k.Files, path) {
			k.Files = append(k.Files, path)
		}
		d := &decoder{file: path, diags: diags}
		d.katalog(k, root, filepath.Dir(path), crds)
	}
}

func isKatalogDoc(n *yaml.Node) bool {
	if n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "kind" {
			return n.Content[i+1].Value == "Katalog"
		}
	}
	return false
}

// yamlError turns a yaml.v3 syntax error ("yaml: line 7: …") into a
// positioned diagnostic.
func yamlError(path string, err error) Diagnostic {
	msg := err.Error()
	line := 0
	if _, scanErr := fmt.Sscanf(strings.TrimPrefix(msg, "yaml: "), "line %d:", &line); scanErr == nil {
		if i := strings.Index(msg, ": "); i >= 0 {
			rest := msg[i+2:]
			if j := strings.Index(rest, ": "); j >= 0 {
				msg = rest[j+2:]
			}
		}
		// yaml.v3 numbers parser errors ("did not find expected …") from 0
		// and scanner errors ("found …") from 1.
		if strings.HasPrefix(msg, "did not find") {
			line++
		}
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	col := 1
	if line == 0 {
		col = 0
	}
	return Diagnostic{Pos: Pos{File: path, Line: line, Col: col}, Message: "YAML syntax error: " + msg}
}

func (d *decoder) katalog(k *Katalog, root *yaml.Node, dir string, crds map[string]*CRD) {
	top := d.mapping(root, "", []string{"apiVersion", "kind", "metadata", "spec", "notes"}, unimplementedTop)
	if top.has("notes") {
		d.notes(k, top["notes"].value)
	}
	apiVersion := d.str(top["apiVersion"].value, "apiVersion")
	switch {
	case !top.has("apiVersion"):
		d.errorf(root, "apiVersion", "apiVersion is missing; use %s", APIVersionV1)
	case apiVersion != APIVersionV1 && apiVersion != APIVersionV1Alpha:
		d.errorf(top["apiVersion"].value, "apiVersion", "unsupported apiVersion %q; use %s (or the older %s)", apiVersion, APIVersionV1, APIVersionV1Alpha)
	}
	if k.APIVersion == "" {
		k.APIVersion = apiVersion
	}
	if kind := d.str(top["kind"].value, "kind"); kind != "Katalog" {
		d.errorf(orNode(top["kind"].value, root), "kind", "kind must be Katalog, got %q", kind)
	}
	meta := d.mapping(top["metadata"].value, "metadata", []string{"name", "namespace", "description", "version", "author", "tags", "labels", "annotations", "maintainers", "homepage"}, nil)
	if k.Name == "" {
		k.Name = d.str(meta["name"].value, "metadata.name")
		k.Description = d.str(meta["description"].value, "metadata.description")
	}
	if !top.has("spec") {
		d.errorf(root, "spec", "spec is missing; a katalog needs spec.crds")
		return
	}
	spec := d.mapping(top["spec"].value, "spec", []string{"crds"}, unimplementedSpec)
	crdsNode := resolve(spec["crds"].value)
	if crdsNode == nil {
		d.errorf(top["spec"].key, "spec.crds", "spec.crds is missing; declare at least one CRD entry")
		return
	}
	switch crdsNode.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(crdsNode.Content); i += 2 {
			keyNode, body := crdsNode.Content[i], crdsNode.Content[i+1]
			d.crdEntry(k, keyNode.Value, keyNode, body, false, dir, crds)
		}
	case yaml.SequenceNode:
		for i, item := range crdsNode.Content {
			item = resolve(item)
			name := ""
			var nameNode *yaml.Node
			if item != nil && item.Kind == yaml.MappingNode {
				for j := 0; j+1 < len(item.Content); j += 2 {
					if item.Content[j].Value == "name" {
						nameNode = item.Content[j+1]
						name = nameNode.Value
					}
				}
			}
			if name == "" {
				d.errorf(item, fmt.Sprintf("spec.crds[%d]", i), "a CRD entry in list form needs `name:`")
				continue
			}
			d.crdEntry(k, name, nameNode, item, true, dir, crds)
		}
	default:
		d.errorf(crdsNode, "spec.crds", "spec.crds must be a map of entries keyed by name, or a list of `- name:` entries; got %s", describe(crdsNode))
	}
}

func orNode(n, fallback *yaml.Node) *yaml.Node {
	if n != nil {
		return n
	}
	return fallback
}

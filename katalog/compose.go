package katalog

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Composition, as upstream's Komposer does it (docs/concepts/komposer.md,
// examples/intermediate/06-komposer-basic): a Komposer (or a Katalog with a
// top-level imports:) names katalog files under imports.files (older:
// sources.files); their entries load in order, a later file's entry replacing
// an earlier one of the same name, and the document's own spec.crds entries
// override the imported ones by name, key by key (maps merge, anything else is
// replaced). Motifs (kind: Motif) contribute resources to an entry's
// onReconcile through operatorBox imports. Remote sources are refused: this
// runtime reads local files only.

// sources loads the files a document imports; it reports whether the
// document imports any (its spec.crds then override).
func (d *decoder) sources(top object, dir string) bool {
	f, key := top["imports"], "imports"
	if s, ok := top["sources"]; ok {
		if f.value != nil {
			d.errorf(s.key, "sources", "both imports and its older name sources are set; keep imports")
			return true
		}
		f, key = s, "sources"
	}
	if f.value == nil {
		return false
	}
	remote := []string{"registry", "helm", "git", "oci", "url"}
	o := d.mapping(f.value, key, append([]string{"files"}, remote...), nil)
	for _, name := range remote {
		if r, ok := o[name]; ok {
			d.errorf(r.key, key+"."+name, "remote sources (%s) are not fetched by this runtime, which reads local files only; vendor the katalog into your repository and list it under %s.files", name, key)
		}
	}
	list := Resolve(o["files"].value)
	if list == nil || list.Kind != yaml.SequenceNode {
		if list != nil && !isNull(list) {
			d.errorf(list, key+".files", "must be a list of katalog files, got %s", describe(list))
		}
		return true
	}
	for i, item := range list.Content {
		p := resolvePath(d.dirOf(item, dir), d.str(item, fmt.Sprintf("%s.files[%d]", key, i)))
		if p == "" {
			continue
		}
		l := d.loader
		if err := l.confine(p); err != nil {
			d.errorf(item, fmt.Sprintf("%s.files[%d]", key, i), "imported katalog %v", err)
			continue
		}
		if slices.Contains(l.stack, p) {
			d.errorf(item, fmt.Sprintf("%s.files[%d]", key, i), "import cycle: %s imports itself through %v", p, l.stack)
			continue
		}
		l.stack = append(l.stack, p)
		for _, doc := range l.parse(p, item, d.fileOf(item)) {
			if root := Resolve(doc); root != nil && !isNull(root) {
				l.k.Docs = append(l.k.Docs, &Document{File: p, Root: doc})
				if !contains(l.k.Files, p) {
					l.k.Files = append(l.k.Files, p)
				}
				l.decoder(p).katalog(root, filepath.Dir(p))
			}
		}
		l.stack = l.stack[:len(l.stack)-1]
	}
	return true
}

// crdEntryOrOverride decodes one spec.crds entry; in a document that imports
// others, an entry whose name was imported overrides that entry.
func (d *decoder) crdEntryOrOverride(name string, nameNode, body *yaml.Node, listForm bool, dir string, overriding bool) {
	k := d.loader.k
	prev := k.Entry(name)
	switch {
	case prev == nil:
	case overriding:
		body = mergeNodes(prev.node, Resolve(body))
		listForm = listForm || prev.listForm
		d.loader.remove(prev)
	case prev.Pos.File != d.file && len(d.loader.stack) > 0:
		// A later imported file's entry replaces an earlier one's.
		d.loader.remove(prev)
	}
	d.crdEntry(name, nameNode, body, listForm, dir)
	if e := k.Entry(name); e != nil {
		// An override keeps the lifecycle of the katalog that declared it.
		if e.Pattern = d.pattern; overriding && prev != nil {
			e.Pattern = prev.Pattern
		}
	}
}

// remove drops an entry that another replaces, with its diagnostics (the
// replacement reports its own).
func (l *loader) remove(e *CRDEntry) {
	l.k.CRDs = slices.DeleteFunc(l.k.CRDs, func(x *CRDEntry) bool { return x == e })
	*l.diags = slices.DeleteFunc(*l.diags, func(x Diagnostic) bool { return x.owner == e })
}

// mergeNodes returns base overridden by over: keys of two mappings merge
// recursively, anything else is replaced. Neither input is modified.
func mergeNodes(base, over *yaml.Node) *yaml.Node {
	base, over = Resolve(base), Resolve(over)
	if base == nil || over == nil || base.Kind != yaml.MappingNode || over.Kind != yaml.MappingNode {
		return over
	}
	out := *base
	out.Content = nil
	overVal := map[string]*yaml.Node{}
	for i := 0; i+1 < len(over.Content); i += 2 {
		overVal[over.Content[i].Value] = over.Content[i+1]
	}
	for i := 0; i+1 < len(base.Content); i += 2 {
		key, val := base.Content[i], base.Content[i+1]
		if o, ok := overVal[key.Value]; ok {
			val = mergeNodes(val, o)
			delete(overVal, key.Value)
		}
		out.Content = append(out.Content, key, val)
	}
	for i := 0; i+1 < len(over.Content); i += 2 {
		if _, left := overVal[over.Content[i].Value]; left {
			out.Content = append(out.Content, over.Content[i], over.Content[i+1])
		}
	}
	return &out
}

// motif reads a Motif file named by an `- motif: PATH` import item and
// returns its root mapping decoded for the given keys, with its decoder and
// the import with its inputs bound.
func (d *decoder) motif(item *yaml.Node, path string, keys []string) (*decoder, object, *MotifImport) {
	o := d.mapping(item, path, motifImportKeys, nil)
	if !o.has("motif") {
		d.errorf(item, path, "an import needs `motif:` (the path of a Motif file)")
		return nil, nil, nil
	}
	ref := d.str(o["motif"].value, path+".motif")
	if scheme, _, remote := strings.Cut(ref, "://"); remote {
		d.errorf(o["motif"].value, path+".motif", "remote motifs (%s://) are not fetched by this runtime, which reads local files only; vendor the motif into your repository and import it by path", scheme)
		return nil, nil, nil
	}
	md, root := d.fragment(o["motif"].value, path+".motif", "motif")
	if root == nil {
		return nil, nil, nil
	}
	mo := md.mapping(root, "", append([]string{"apiVersion", "kind", "metadata", "inputs", "profiles"}, keys...), nil)
	if kind := md.str(mo["kind"].value, "kind"); kind != "Motif" {
		md.errorf(orNode(mo["kind"].value, root), "kind", "an imported motif must be kind: Motif, got %q", kind)
		return nil, nil, nil
	}
	imp := &MotifImport{File: md.file, Pos: d.pos(Resolve(item)), Path: path, Inputs: md.inputs(mo["inputs"].value)}
	d.bind(imp, o["with"], path)
	if f, ok := mo["profiles"]; ok {
		md.profiles(f.value, "profiles")
	}
	return md, mo, imp
}

// motifImports adds the resources of imported motifs to the box: those
// under the motif's resources: to onReconcile, those under
// resources.onCreate: to onCreate, after the box's own (upstream:
// pkg/types/motif.go MotifResources), and its status fields after the
// box's. They read the import's inputs.
func (d *decoder) motifImports(box *OperatorBox, n *yaml.Node, path string) {
	list := Resolve(n)
	if list == nil || list.Kind != yaml.SequenceNode {
		if list != nil && !isNull(list) {
			d.errorf(list, path, "must be a list of `- motif: PATH` imports, got %s", describe(list))
		}
		return
	}
	for i, item := range list.Content {
		md, mo, imp := d.motif(item, fmt.Sprintf("%s[%d]", path, i), []string{"resources", "status"})
		if md == nil {
			continue
		}
		if f, ok := mo["resources"]; ok {
			reconciled, created := Resolve(f.value), (*yaml.Node)(nil)
			if reconciled != nil && reconciled.Kind == yaml.MappingNode {
				created, reconciled = splitKeys(reconciled, []string{"onCreate"}, nil)
			}
			add := func(hook string, n *yaml.Node, hpath string) {
				h := md.hook(box, hook, n, hpath)
				for _, r := range h.Resources {
					r.Motif = imp
					md.resolveInputs(r)
				}
				if box.Hooks[hook] == nil {
					box.Hooks[hook] = &Hook{Name: hook, Pos: h.Pos}
				}
				box.Hooks[hook].Resources = append(box.Hooks[hook].Resources, h.Resources...)
			}
			add(OnReconcile, reconciled, "resources")
			if created != nil && len(created.Content) == 2 {
				add(OnCreate, created.Content[1], "resources.onCreate")
			}
		}
		if f, ok := mo["status"]; ok {
			s := md.status(f.value, "status")
			for _, sf := range s.Fields {
				sf.Motif = imp
			}
			if box.Status == nil {
				box.Status = s
			} else {
				box.Status.Fields = append(box.Status.Fields, s.Fields...)
				box.Status.Conditions = append(box.Status.Conditions, s.Conditions...)
			}
		}
	}
}

// resolveInputs settles what a motif's declaration takes from inputs when
// the katalog loads: a rotateAfter that reads an input bound to a literal.
func (d *decoder) resolveInputs(r *Resource) {
	if r.rotateAfterExpr == "" {
		return
	}
	s, ok := r.Motif.literalInput(r.rotateAfterExpr)
	if !ok {
		d.errorAt(r.RotateAfterPos, r.path+".rotateAfter", "rotateAfter is read when the katalog loads, so it is a duration (90s, 12h, 7d, …) or one input the import binds to one; %s is neither", r.rotateAfterExpr)
		return
	}
	dur, err := ParseLifetime(s)
	if err != nil {
		d.errorAt(r.RotateAfterPos, r.path+".rotateAfter", "input %s: %v (or never)", r.rotateAfterExpr, err)
		return
	}
	r.RotateAfter, r.rotateAfterExpr = dur, ""
}

// specImports reads motifs imported for the whole katalog; upstream uses them
// to share notes (user-defined template functions), which join the
// katalog's own.
func (d *decoder) specImports(n *yaml.Node, dir string) {
	list := Resolve(n)
	if list == nil || list.Kind != yaml.SequenceNode {
		if list != nil && !isNull(list) {
			d.errorf(list, "spec.imports", "must be a list of `- motif: PATH` imports, got %s", describe(list))
		}
		return
	}
	for i, item := range list.Content {
		md, mo, _ := d.motif(item, fmt.Sprintf("spec.imports[%d]", i), []string{"notes", "resources"})
		if md == nil {
			continue
		}
		if f, ok := mo["resources"]; ok {
			md.errorf(f.key, "resources", "a motif imported under spec.imports applies to no entry; import it under the entry's operatorBox.imports")
		}
		if f, ok := mo["notes"]; ok {
			md.notes(d.loader.k, f.value, false)
		}
	}
}

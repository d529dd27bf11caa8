package katalog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

var entryKeys = []string{"name", "enabled", "description", "apiTypes", "crdFile", "crFiles", "namespaced", "workers", "resync", "queue", "operatorBox", "reconciler", "conversion", "imports", "allowedNamespaces", "restrictedNamespaces", "namespace", "labels", "critical", "dependsOn", "deprecated", "deprecationWarning", "validation", "mutation", "admission", "normalize", "forceConflict", "lifecycle", "endpoints", "crossAccess", "enrich"}

func (d *decoder) crdEntry(name string, nameNode, body *yaml.Node, listForm bool, dir string) {
	k := d.loader.k
	d.entry = name
	defer func() { d.entry = "" }()
	if prev := k.Entry(name); prev != nil {
		d.errorf(nameNode, "", "duplicate CRD entry %q (first declared at %s); entry names must be unique", name, prev.Pos)
		return
	}
	keys := entryKeys
	if !listForm {
		keys = entryKeys[1:]
	}
	e := &CRDEntry{Name: name, Pos: d.pos(nameNode), Enabled: true, Workers: 1, Endpoints: AllEndpoints, dir: dir, node: Resolve(body), listForm: listForm}
	d.owner = e
	defer func() { d.owner = nil }()
	o := d.mapping(body, "", keys, unimplementedEntry)
	if o.has("enabled") {
		e.Enabled = d.boolean(o["enabled"].value, "enabled")
	}
	if o.has("crossAccess") {
		e.DeniesCross = !d.boolean(o["crossAccess"].value, "crossAccess")
	}
	if f, ok := o["enrich"]; ok {
		d.enrich(e, f)
	}
	if o.has("namespaced") {
		ns := d.boolean(o["namespaced"].value, "namespaced")
		e.Namespaced = &ns
	}
	e.Description = d.str(o["description"].value, "description")
	if f, ok := o["forceConflict"]; ok {
		fc := d.boolean(f.value, "forceConflict")
		e.ForceConflict = &fc
	}
	d.settings(e, o, "")
	d.namespaceRules(e, o)
	if f, ok := o["dependsOn"]; ok {
		e.DependsOn = d.dependsOn(f.value, "dependsOn")
	}
	d.apiTypes(e, o["apiTypes"])
	conv, convPath := d.admission(e, o)
	if f, ok := o["endpoints"]; ok {
		d.endpoints(e, f)
	}
	d.deprecation(e, o)
	d.lifecycle(e, o)
	if f, ok := o["normalize"]; ok {
		d.normalize(e, f)
	}
	for i, f := range d.strList(o["crFiles"].value, "crFiles") {
		at, field := Resolve(o["crFiles"].value).Content[i], fmt.Sprintf("crFiles[%d]", i)
		p := resolvePath(d.dirOf(at, dir), f)
		if _, err := os.Stat(p); err != nil {
			d.missingSample(at, field, f)
			continue
		}
		if err := d.loader.confine(p); err != nil {
			d.errorf(at, field, "sample object file %v", err)
			continue
		}
		if err := checkSample(p); err != nil {
			d.errorf(at, field, "%v", err)
			continue
		}
		e.CRFiles = append(e.CRFiles, p)
	}
	if f, ok := o["crdFile"]; ok {
		e.CRDFile = resolvePath(d.dirOf(f.value, dir), d.str(f.value, "crdFile"))
		e.CRDFilePos = d.pos(f.value)
	}

	box, boxKey := o["operatorBox"], "operatorBox"
	if o.has("reconciler") {
		if o.has("operatorBox") {
			d.errorf(o["reconciler"].key, "reconciler", "both operatorBox and its older name reconciler are set; keep operatorBox")
		} else {
			box, boxKey = o["reconciler"], "reconciler"
		}
	}
	if box.value != nil {
		e.Box = d.operatorBox(e, box.value, boxKey)
	}
	if f, ok := o["imports"]; ok {
		if e.Box == nil {
			e.Box = &OperatorBox{Pos: d.pos(f.key), Default: true, Hooks: map[string]*Hook{}}
		}
		d.motifImports(e.Box, f.value, "imports")
	}
	if conv.value != nil {
		// A block with neither paths nor storageVersion (upstream's
		// `participant: true` on the other versions' entries) only says the
		// entry takes part in the CRD's conversion, which another entry
		// declares: it is not a second conversion block.
		if c := d.conversion(conv.value, convPath); len(c.Paths) > 0 || c.StorageVersion != "" {
			e.Conversion = c
		}
	}
	k.CRDs = append(k.CRDs, e)
}

func resolvePath(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// apiTypes decodes apiTypes as written; fields left out are derived from the
// CRD once it is resolved (see resolveCRDs).
func (d *decoder) apiTypes(e *CRDEntry, f field) {
	e.APITypes.FieldPos = map[string]Pos{}
	if f.value == nil {
		return
	}
	o := d.mapping(f.value, "apiTypes", apiTypesKeys, []string{"location", "object", "objectList", "alias", "list"})
	e.APITypes.Group = d.str(o["group"].value, "apiTypes.group")
	e.APITypes.Version = d.str(o["version"].value, "apiTypes.version")
	e.APITypes.Kind = d.str(o["kind"].value, "apiTypes.kind")
	e.APITypes.Plural = d.str(o["plural"].value, "apiTypes.plural")
	e.APITypes.Pos = d.pos(Resolve(f.value))
	for _, k := range []string{"group", "version", "kind", "plural"} {
		if o.has(k) {
			e.APITypes.FieldPos[k] = d.pos(o[k].value)
		}
	}
	if o.has("namespaced") && e.Namespaced == nil {
		ns := d.boolean(o["namespaced"].value, "apiTypes.namespaced")
		e.Namespaced = &ns
	}
	if o.has("scope") && e.Namespaced == nil {
		switch scope := d.str(o["scope"].value, "apiTypes.scope"); scope {
		case "Namespaced", "Cluster":
			ns := scope == "Namespaced"
			e.Namespaced = &ns
		default:
			d.errorf(o["scope"].value, "apiTypes.scope", "scope must be Namespaced or Cluster, got %q", scope)
		}
	}
}

// checkAPITypes completes apiTypes from the CRD and reports disagreements.
func (d *decoder) checkAPITypes(e *CRDEntry) {
	spec := e.CRD.Object.Spec
	at := &e.APITypes
	pos := func(f string) Pos { return at.posOf(f, e.Pos) }
	where := e.CRD.describe()
	if at.Group == "" {
		at.Group = spec.Group
	} else if at.Group != spec.Group {
		d.errorAt(pos("group"), "apiTypes.group", "group %q does not match the CRD's group %q in %s", at.Group, spec.Group, where)
	}
	if at.Kind == "" {
		at.Kind = spec.Names.Kind
	} else if at.Kind != spec.Names.Kind {
		d.errorAt(pos("kind"), "apiTypes.kind", "kind %q does not match the CRD's kind %q in %s", at.Kind, spec.Names.Kind, where)
	}
	if at.Plural == "" {
		at.Plural = spec.Names.Plural
	} else if at.Plural != spec.Names.Plural {
		d.errorAt(pos("plural"), "apiTypes.plural", "plural %q does not match the CRD's plural %q in %s", at.Plural, spec.Names.Plural, where)
	}
	if at.Version == "" {
		switch len(e.CRD.Served) {
		case 1:
			at.Version = e.CRD.Served[0]
		case 0:
			d.errorAt(pos("version"), "apiTypes.version", "the CRD %s serves no version", e.CRD.Object.Name)
		default:
			d.errorAt(pos("version"), "apiTypes.version", "apiTypes.version is missing and the CRD %s serves several versions (%s); add version: with one of them", e.CRD.Object.Name, strings.Join(e.CRD.Served, ", "))
		}
		return
	}
	if e.CRD.Schemas[at.Version] == nil {
		if !e.CRD.Serves(at.Version) {
			d.errorAt(pos("version"), "apiTypes.version", "the CRD %s has no served version %q; it serves %s%s", e.CRD.Object.Name, at.Version, strings.Join(e.CRD.Served, ", "), DidYouMean(at.Version, e.CRD.Served))
		} else {
			d.errorAt(pos("version"), "apiTypes.version", "version %q of CRD %s has no openAPIV3Schema; Orkestra types every expression against it", at.Version, e.CRD.Object.Name)
		}
	}
}

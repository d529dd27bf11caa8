package katalog

import (
	"fmt"
	"slices"
	"sort"

	"gopkg.in/yaml.v3"
)

var (
	boxKeys = []string{"default", "finalizers", "onCreate", "onReconcile", "onDelete", "status", "reconciler", "reconcile", "emit", "imports", "workers", "resync", "queue", "preReconcile", "prune", "runtime", "cross", "watch", "observe"}
	// Keys of operatorBox.reconciler (upstream's reconciler settings block;
	// its newest layout also nests the hooks and motif imports there).
	reconcilerKeys          = []string{"default", "workers", "resync", "queue", "profile", "onCreate", "onReconcile", "onDelete", "imports"}
	unimplementedReconciler = []string{"hooks", "constructor", "requeue", "include", "remote"}
)

// operatorBox decodes operatorBox (or the older entry-level reconciler:).
// Upstream's layouts nest settings and hooks differently over time; all of
// them decode into one OperatorBox, and a setting given twice is an error.
func (d *decoder) operatorBox(e *CRDEntry, n *yaml.Node, path string) *OperatorBox {
	o := d.mapping(n, path, boxKeys, unimplementedBox)
	box := &OperatorBox{Pos: d.pos(Resolve(n)), Default: true, Hooks: map[string]*Hook{}}
	d.reconcilerDefault(box, o, path)
	box.Finalizers = d.strList(o["finalizers"].value, path+".finalizers")
	d.settings(e, o, path)
	d.hooks(box, o, path)
	for _, key := range []string{"reconciler", "reconcile"} {
		f, ok := o[key]
		if !ok {
			continue
		}
		if key == "reconcile" && o.has("reconciler") {
			d.errorf(f.key, path+".reconcile", "both reconciler and reconcile are set; keep reconciler")
			continue
		}
		rpath := path + "." + key
		ro := d.mapping(f.value, rpath, reconcilerKeys, unimplementedReconciler)
		d.reconcilerDefault(box, ro, rpath)
		d.settings(e, ro, rpath)
		if f, ok := ro["profile"]; ok {
			if v := d.value(f.value, rpath+".profile"); v.Kind == NullValue || v.Kind == StringValue && v.Str == "" {
				// Upstream applies no profile when the name is empty.
				d.warnf(f.key, rpath+".profile", "the profile is empty, so none applies (as upstream); name one (high-throughput, conservative, development, or one under profiles.reconciler) or remove the key")
			} else {
				e.reconcilerProfile, e.reconcilerProfilePath = v, rpath+".profile"
			}
		}
		d.hooks(box, ro, rpath)
		if mf, ok := ro["imports"]; ok {
			d.motifImports(box, mf.value, rpath+".imports")
		}
	}
	if f, ok := o["imports"]; ok {
		d.motifImports(box, f.value, path+".imports")
	}
	if f, ok := o["runtime"]; ok {
		d.runtime(e, box, o, f.value, path+".runtime")
	}
	if f, ok := o["preReconcile"]; ok {
		box.Gates = d.preReconcile(f.value, path+".preReconcile")
	}
	if f, ok := o["prune"]; ok {
		box.Prune = d.pruneKey("", f.value, path+".prune")
	}
	d.observations(box, o, path)
	status, spath := o["status"], path+".status"
	if f, ok := o["emit"]; ok {
		eo := d.mapping(f.value, path+".emit", emitKeys, nil)
		if ev, ok := eo["events"]; ok {
			box.Events = d.emitEvents(ev.value, path+".emit.events")
		}
		if es, ok := eo["status"]; ok {
			if status.value != nil {
				d.writtenTwice(es.key, path+".emit.status", moveOf("operatorBox.emit", "status"), d.pos(status.key))
			} else {
				status, spath = es, path+".emit.status"
			}
		}
	}
	if status.value != nil {
		box.Status = d.status(status.value, spath)
	}
	d.onDeleteNames(box, path)
	for _, h := range box.Hooks {
		for _, r := range h.Resources {
			if r.rotateAfterExpr != "" && r.Motif == nil {
				d.errorAt(r.RotateAfterPos, r.path+".rotateAfter", "rotateAfter is read when the katalog loads, so it is a duration such as 90s, 12h, 7d, 3mo, never; got %s", r.rotateAfterExpr)
			}
		}
	}
	return box
}

// onDeleteNames handles onDelete declarations that only name an object,
// which upstream deletes when the custom resource is deleted
// (iAlexeze/orkestra examples/use-cases/temporal/01-business-hours). A
// child the entry declares under the same name is deleted anyway, by
// garbage collection through its owner reference: a warning, and the
// declaration is dropped. Any other object would stay: an error.
func (d *decoder) onDeleteNames(box *OperatorBox, path string) {
	del := box.Hooks[OnDelete]
	if del == nil {
		return
	}
	keep := del.Resources[:0]
	for _, r := range del.Resources {
		if !r.nameOnly {
			keep = append(keep, r)
			continue
		}
		field := path + "." + r.FieldPath()
		if declaresChild(box, r.Kind, r.Fields.Get("name").Str) {
			d.warnf(r.Fields.Node, field, "only names a child the entry declares; children are deleted with their custom resource (garbage collection through owner references), so this changes nothing; remove it")
			box.NamedDeletes = append(box.NamedDeletes, r)
			continue
		}
		d.errorf(r.Fields.Node, field, "only names an object (%s) that the entry does not declare: upstream deletes that object when the custom resource is deleted, but this runtime deletes only its own children; declare it under onCreate or onReconcile with this name, or delete it from an onDelete Job", r.Kind)
	}
	del.Resources = keep
}

// declaresChild reports a child of kind named name (as written) in onCreate
// or onReconcile.
func declaresChild(box *OperatorBox, kind, name string) bool {
	for _, h := range []string{OnCreate, OnReconcile} {
		if box.Hooks[h] == nil {
			continue
		}
		for _, c := range box.Hooks[h].Resources {
			if n := c.Fields.Get("name"); c.Kind == kind && n != nil && n.Str == name {
				return true
			}
		}
	}
	return false
}

// onlyKeys reports a mapping whose keys are all among keys.
func onlyKeys(n *yaml.Node, keys ...string) bool {
	for i := 0; i < len(n.Content); i += 2 {
		if !slices.Contains(keys, n.Content[i].Value) {
			return false
		}
	}
	return true
}

// reconcilerDefault decodes `default:`, which upstream uses to pick its
// generic reconciler (true, the default) or a custom Go one (false).
func (d *decoder) reconcilerDefault(box *OperatorBox, o object, path string) {
	f, ok := o["default"]
	if !ok || d.boolean(f.value, path+".default") {
		return
	}
	box.Default = false
	d.errorf(f.value, path+".default", "default: false selects a custom Go reconciler upstream, which this runtime does not run; remove it to use the declarative reconciler")
}

// hooks decodes onCreate/onReconcile/onDelete found in o; a hook declared in
// two places of one box is an error.
func (d *decoder) hooks(box *OperatorBox, o object, path string) {
	for _, h := range Hooks {
		f, ok := o[h]
		if !ok {
			continue
		}
		if prev := box.Hooks[h]; prev != nil {
			d.errorf(f.key, path+"."+h, "%s is already declared at %s; declare it once", h, prev.Pos)
			continue
		}
		box.Hooks[h] = d.hook(box, h, f.value, path+"."+h)
	}
}

func kindKeys() []string {
	keys := make([]string, 0, len(ResourceKinds))
	for k := range ResourceKinds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (d *decoder) hook(box *OperatorBox, name string, n *yaml.Node, path string) *Hook {
	h := &Hook{Name: name, Pos: d.pos(Resolve(n))}
	o := d.mapping(n, path, append(hookKeys(), "external"), unimplementedKinds)
	if f, ok := o["prune"]; ok {
		h.Prune = d.pruneKey(name, f.value, path+".prune")
	}
	if f, ok := o["external"]; ok {
		d.external(box, name, f.value, path+".external")
	}
	// Resources are kept in apply order so that what a workload mounts exists before it.
	for _, kind := range ApplyOrder {
		f, ok := o[kind]
		if !ok {
			continue
		}
		list := Resolve(f.value)
		if list == nil || isNull(list) {
			continue
		}
		if list.Kind != yaml.SequenceNode {
			d.errorf(list, path+"."+kind, "must be a list of %s, got %s", kind, describe(list))
			continue
		}
		for i, item := range list.Content {
			if r := d.resource(name, kind, i, item, fmt.Sprintf("%s.%s[%d]", path, kind, i)); r != nil {
				h.Resources = append(h.Resources, r)
			}
		}
	}
	return h
}

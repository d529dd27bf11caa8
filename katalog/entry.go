package katalog

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

var entryKeys = []string{"name", "enabled", "description", "apiTypes", "crdFile", "crFiles", "namespaced", "workers", "resync", "queue", "operatorBox", "reconciler", "conversion", "imports", "allowedNamespaces", "restrictedNamespaces", "namespace", "labels", "critical", "dependsOn", "deprecated", "deprecationWarning", "validation", "mutation", "admission", "normalize"}

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
	e := &CRDEntry{Name: name, Pos: d.pos(nameNode), Enabled: true, Workers: 1, dir: dir, node: resolve(body), listForm: listForm}
	d.owner = e
	defer func() { d.owner = nil }()
	o := d.mapping(body, "", keys, unimplementedEntry)
	if o.has("enabled") {
		e.Enabled = d.boolean(o["enabled"].value, "enabled")
	}
	if o.has("namespaced") {
		ns := d.boolean(o["namespaced"].value, "namespaced")
		e.Namespaced = &ns
	}
	e.Description = d.str(o["description"].value, "description")
	d.settings(e, o, "")
	d.namespaceRules(e, o)
	if f, ok := o["dependsOn"]; ok {
		e.DependsOn = d.dependsOn(f.value, "dependsOn")
	}
	d.apiTypes(e, o["apiTypes"])
	d.admission(e, o)
	d.deprecation(e, o)
	if f, ok := o["normalize"]; ok {
		d.normalize(e, f)
	}
	for i, f := range d.strList(o["crFiles"].value, "crFiles") {
		at, field := resolve(o["crFiles"].value).Content[i], fmt.Sprintf("crFiles[%d]", i)
		p := resolvePath(d.dirOf(at, dir), f)
		if _, err := os.Stat(p); err != nil {
			d.errorf(at, field, "sample object file %s not found (paths are relative to the katalog's directory)", f)
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
	if o.has("conversion") {
		// A block with neither paths nor storageVersion (upstream's
		// `participant: true` on the other versions' entries) only says the
		// entry takes part in the CRD's conversion, which another entry
		// declares: it is not a second conversion block.
		if c := d.conversion(o["conversion"].value); len(c.Paths) > 0 || c.StorageVersion != "" {
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
	e.APITypes.Pos = d.pos(resolve(f.value))
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

// settings decodes the reconciler settings (workers, resync, queue), which
// may stand on the entry or in operatorBox.reconciler; path is the prefix of
// the block they were found in ("" for the entry).
func (d *decoder) settings(e *CRDEntry, o object, path string) {
	if f, ok := o["workers"]; ok {
		if w, ok := d.integer(f.value, join(path, "workers")); ok {
			switch {
			case w < 1:
				d.errorf(f.value, join(path, "workers"), "workers must be at least 1, got %d", w)
			case !e.WorkersPos.IsZero() && w != e.Workers:
				d.errorf(f.value, join(path, "workers"), "workers is already set to %d at %s; set it in one place", e.Workers, e.WorkersPos)
			default:
				e.Workers, e.WorkersPos = w, d.pos(f.value)
			}
		}
	}
	if f, ok := o["resync"]; ok {
		r, err := ParseDuration(d.str(f.value, join(path, "resync")))
		switch {
		case err != nil:
			d.errorf(f.value, join(path, "resync"), "%v", err)
		case !e.ResyncPos.IsZero() && r != e.Resync:
			d.errorf(f.value, join(path, "resync"), "resync is already set to %s at %s; set it in one place", e.Resync, e.ResyncPos)
		default:
			e.Resync, e.ResyncPos = r, d.pos(f.value)
		}
	}
	if f, ok := o["queue"]; ok {
		if e.Queue != nil {
			d.errorf(f.key, join(path, "queue"), "queue is already set at %s; set it in one place", e.Queue.Pos)
		} else {
			e.Queue = d.queue(f.value, join(path, "queue"))
		}
	}
}

func (d *decoder) queue(n *yaml.Node, path string) *Queue {
	o := d.mapping(n, path, queueKeys, nil)
	q := &Queue{Pos: d.pos(resolve(n))}
	for _, key := range []string{"maxDepth", "maxQueueDepth"} {
		if f, ok := o[key]; ok {
			if v, ok := d.integer(f.value, join(path, key)); ok {
				if v < 1 {
					d.errorf(f.value, join(path, key), "%s must be at least 1, got %d", key, v)
				}
				q.MaxDepth = v
			}
		}
	}
	if o.has("maxDepth") && o.has("maxQueueDepth") {
		d.errorf(o["maxQueueDepth"].key, join(path, "maxQueueDepth"), "both maxDepth and its older name maxQueueDepth are set; keep maxDepth")
	}
	if f, ok := o["failureThreshold"]; ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(d.str(f.value, join(path, "failureThreshold"))), 64)
		if err != nil || v < 0 || v > 1 {
			d.errorf(f.value, join(path, "failureThreshold"), "failureThreshold is the share of failed reconciles (0 to 1) over which the entry reports degraded, got %q", resolve(f.value).Value)
		}
		q.FailureThreshold = v
	}
	if f, ok := o["default"]; ok && d.boolean(f.value, join(path, "default")) {
		// Upstream's shared default queue is an implementation detail of its
		// runtime: every entry here has its own queue, so nothing changes.
		d.warnf(f.key, join(path, "default"), "every entry has its own work queue in this runtime; default: true changes nothing")
	}
	return q
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

var (
	boxKeys = []string{"default", "finalizers", "onCreate", "onReconcile", "onDelete", "status", "reconciler", "reconcile", "emit", "imports", "workers", "resync", "queue", "preReconcile"}
	// Keys of operatorBox.reconciler (upstream's reconciler settings block;
	// its newest layout also nests the hooks and motif imports there).
	reconcilerKeys          = []string{"default", "workers", "resync", "queue", "onCreate", "onReconcile", "onDelete", "imports"}
	unimplementedReconciler = []string{"hooks", "constructor", "profile", "requeue", "include"}
)

// operatorBox decodes operatorBox (or the older entry-level reconciler:).
// Upstream's layouts nest settings and hooks differently over time; all of
// them decode into one OperatorBox, and a setting given twice is an error.
func (d *decoder) operatorBox(e *CRDEntry, n *yaml.Node, path string) *OperatorBox {
	o := d.mapping(n, path, boxKeys, unimplementedBox)
	box := &OperatorBox{Pos: d.pos(resolve(n)), Default: true, Hooks: map[string]*Hook{}}
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
		d.hooks(box, ro, rpath)
		if mf, ok := ro["imports"]; ok {
			d.motifImports(box, mf.value, rpath+".imports")
		}
	}
	if f, ok := o["imports"]; ok {
		d.motifImports(box, f.value, path+".imports")
	}
	if f, ok := o["preReconcile"]; ok {
		box.Gates = d.preReconcile(f.value, path+".preReconcile")
	}
	status, spath := o["status"], path+".status"
	if f, ok := o["emit"]; ok {
		eo := d.mapping(f.value, path+".emit", emitKeys, nil)
		if es, ok := eo["status"]; ok {
			if status.value != nil {
				d.errorf(es.key, path+".emit.status", "status is already declared at %s; declare it once", d.pos(status.key))
			} else {
				status, spath = es, path+".emit.status"
			}
		}
	}
	if status.value != nil {
		box.Status = d.status(status.value, spath)
	}
	d.onDeleteNames(box, path)
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
		box.Hooks[h] = d.hook(h, f.value, path+"."+h)
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

func (d *decoder) hook(name string, n *yaml.Node, path string) *Hook {
	h := &Hook{Name: name, Pos: d.pos(resolve(n))}
	o := d.mapping(n, path, kindKeys(), append([]string{"external"}, unimplementedKinds...))
	// Resources are kept in apply order so that what a workload mounts exists before it.
	for _, kind := range ApplyOrder {
		f, ok := o[kind]
		if !ok {
			continue
		}
		list := resolve(f.value)
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

func (d *decoder) resource(hook, kind string, index int, n *yaml.Node, path string) *Resource {
	spec := ResourceKinds[kind]
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		d.errorf(n, path, "a %s entry must be a map of fields, got %s", kind, describe(orNode(n, &yaml.Node{})))
		return nil
	}
	r := &Resource{Kind: kind, Hook: hook, Index: index, Pos: d.pos(n), Fields: &Value{Kind: MapValue, Pos: d.pos(n), Node: n}}
	known := append(spec.FieldNames(), ControlKeys...)
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := k.Value
		fpath := join(path, key)
		if line, dup := seen[key]; dup {
			d.errorf(k, fpath, "duplicate key %q (first at line %d); remove one", key, line)
			continue
		}
		seen[key] = k.Line
		switch key {
		case "when":
			r.When = d.when(v, fpath)
		case "or", "anyOf":
			if r.Or != nil {
				d.errorf(k, fpath, "both or and its older name anyOf are set; keep or")
			}
			r.Or = d.when(v, fpath)
		case "reconcile":
			r.Reconcile = d.boolean(v, fpath)
		case "once":
			r.Once = d.boolean(v, fpath)
			if r.Once && kind != "secrets" {
				d.errorf(k, fpath, "once: true applies to secrets only (a generated value frozen after creation)")
			}
		case "forEach":
			r.ForEach = d.forEach(v, fpath)
		case "rotateAfter":
			dur, err := ParseDuration(d.str(v, fpath))
			if err != nil {
				d.errorf(v, fpath, "%v", err)
			}
			r.RotateAfter, r.RotateAfterPos = dur, d.pos(v)
		default:
			if contains(unimplementedResourceKeys, key) {
				if msg, ok := resourceKeyErrors[key]; ok {
					d.errorf(k, fpath, "%q is part of the original katalog format but not supported by this runtime: %s", key, msg)
				} else {
					d.upstream(k, fpath, key)
				}
				continue
			}
			if spec.Open && d.customKey(r, k, v, fpath) {
				continue
			}
			if _, ok := spec.Fields[key]; !ok && !spec.Open {
				d.errorf(k, fpath, "unknown field %q for %s%s", key, kind, didYouMeanOrList(key, known))
				continue
			}
			val := d.value(v, fpath)
			if key == "labels" || key == "annotations" || key == "podLabels" || key == "podAnnotations" || key == "nodeSelector" {
				val = d.keyValueList(val, fpath)
			}
			if prev := r.Fields.Entry(key); prev != nil {
				d.errorf(k, fpath, "the %s is given twice: here and at %s; keep one", key, prev.KeyPos)
				continue
			}
			r.Fields.Map = append(r.Fields.Map, &MapEntry{Key: key, KeyPos: d.pos(k), Value: val})
		}
	}
	if r.RotateAfter > 0 && !r.Once {
		d.errorf(n, path+".rotateAfter", "rotateAfter needs once: true (only generated secrets rotate)")
	}
	d.checkCopy(r, path)
	if r.nameOnly = hook == OnDelete && onlyKeys(n, "name", "namespace") && r.Fields.Get("name") != nil; r.nameOnly {
		// Upstream deletes the named object; onDeleteNames decides.
		return r
	}
	for _, req := range spec.Required {
		if r.Fields.Get(req) == nil {
			d.errorf(n, path, "%s needs %q", kind, req)
		}
	}
	if spec.Open {
		d.checkCustomType(r, path)
	}
	return r
}

// keyValueList normalises the older `- key: k / value: v` label list into a map.
func (d *decoder) keyValueList(v *Value, path string) *Value {
	if v.Kind != ListValue {
		return v
	}
	out := &Value{Kind: MapValue, Pos: v.Pos, Node: v.Node}
	for i, item := range v.List {
		ipath := fmt.Sprintf("%s[%d]", path, i)
		if item.Kind != MapValue {
			d.errorf(item.Node, ipath, "a list of labels needs `- key: … / value: …` entries")
			continue
		}
		key, val := item.Get("key"), item.Get("value")
		for _, e := range item.Map {
			if e.Key != "key" && e.Key != "value" {
				d.errorf(item.Node, ipath+"."+e.Key, "unknown key %q in a key/value entry%s", e.Key, DidYouMean(e.Key, []string{"key", "value"}))
			}
		}
		if key == nil || key.Kind != StringValue && key.Kind != IntValue && key.Kind != BoolValue {
			d.errorf(item.Node, ipath, "a key/value entry needs a scalar `key:`")
			continue
		}
		if val == nil {
			val = &Value{Kind: StringValue, Scalar: "", Pos: item.Pos}
		}
		out.Map = append(out.Map, &MapEntry{Key: key.Str, KeyPos: key.Pos, Value: val})
	}
	return out
}

// when decodes `when:`/`or:`: a CEL string, or a list of CEL strings and
// legacy structured conditions.
func (d *decoder) when(n *yaml.Node, path string) *When {
	n = resolve(n)
	w := &When{Pos: d.pos(n)}
	if n == nil || isNull(n) {
		return w
	}
	switch n.Kind {
	case yaml.ScalarNode:
		w.Exprs = append(w.Exprs, d.value(n, path))
	case yaml.SequenceNode:
		for i, item := range n.Content {
			ipath := fmt.Sprintf("%s[%d]", path, i)
			item = resolve(item)
			switch {
			case item == nil:
			case item.Kind == yaml.ScalarNode:
				w.Exprs = append(w.Exprs, d.value(item, ipath))
			case item.Kind == yaml.MappingNode:
				if c := d.condition(item, ipath); c != nil {
					w.Conditions = append(w.Conditions, c)
				}
			default:
				d.errorf(item, ipath, "a condition is a CEL string or a `- field: … / equals: …` map, got %s", describe(item))
			}
		}
	case yaml.MappingNode:
		if c := d.condition(n, path); c != nil {
			w.Conditions = append(w.Conditions, c)
		}
	default:
		d.errorf(n, path, "when takes a CEL string or a list of conditions")
	}
	return w
}

// ConditionOperators are the structured-condition operators with their
// aliases resolved to canonical names. The type operators (typeOf with a
// value, typeMap, …) are written with operator: only, as in the original.
var ConditionOperators = map[string]string{
	"equals": "equals", "notEquals": "notEquals",
	"contains": "contains", "notContains": "notContains",
	"prefix": "prefix", "notPrefix": "notPrefix",
	"suffix": "suffix", "notSuffix": "notSuffix",
	"regex": "regex", "exists": "exists", "notExists": "notExists",
	"gt": "gt", "greaterThan": "gt", "lt": "lt", "lessThan": "lt",
	"gte": "gte", "min": "gte", "greaterThanOrEqual": "gte",
	"lte": "lte", "max": "lte", "lessThanOrEqual": "lte",
	"between": "between", "notBetween": "notBetween",
	"in": "in", "notIn": "notIn",
}

// TypeOperators are the operators that test the field's type; typeOf takes
// the type name as its value (string, number, bool, map, slice, null).
var TypeOperators = map[string]bool{
	"typeOf": true, "typeMap": true, "typeList": true, "typeString": true,
	"typeNumber": true, "typeBool": true, "typeNull": true,
}

// shorthandsUpstreamIgnored are short forms this runtime accepts that the
// original did not know: it ignored them and tested that the field exists.
var shorthandsUpstreamIgnored = map[string]bool{"gt": true, "lt": true, "gte": true, "lte": true}

func operatorNames() []string {
	names := make([]string, 0, len(ConditionOperators))
	for k := range ConditionOperators {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func (d *decoder) condition(n *yaml.Node, path string) *Condition {
	known := append([]string{"field", "operator", "value", "negate", "time", "dayOfWeek", "cron", "duration"}, operatorNames()...)
	o := d.mapping(n, path, known, []string{"notify", "source"})
	c := &Condition{Pos: d.pos(n)}
	c.Negate = d.boolean(o["negate"].value, path+".negate")
	if d.clockCondition(c, o, n, path) {
		return c
	}
	if !o.has("field") {
		d.errorf(n, path, "a structured condition needs `field:` (a dot path such as spec.tier), or is a clock condition (time:, dayOfWeek: or cron:)")
		return nil
	}
	c.Field, c.FieldPos = d.str(o["field"].value, path+".field"), d.pos(o["field"].value)
	var ops []string
	for k := range o {
		if _, ok := ConditionOperators[k]; ok {
			ops = append(ops, k)
		}
	}
	sort.Strings(ops)
	switch {
	case o.has("operator"):
		if len(ops) > 0 {
			d.errorf(n, path, "use either operator:/value: or the short form %s:, not both", ops[0])
			return nil
		}
		op := d.str(o["operator"].value, path+".operator")
		canon, ok := ConditionOperators[op]
		if TypeOperators[op] {
			canon, ok = op, true
		}
		if !ok {
			d.errorf(o["operator"].value, path+".operator", "unknown operator %q%s", op, didYouMeanOrList(op, append(operatorNames(), "typeOf", "typeMap", "typeList", "typeString", "typeNumber", "typeBool", "typeNull")))
			return nil
		}
		c.Operator = canon
		c.Value, c.ValuePos = d.operand(o["value"].value, path+".value"), d.pos(o["value"].value)
	case len(ops) == 1:
		c.Operator = ConditionOperators[ops[0]]
		c.Value, c.ValuePos = d.operand(o[ops[0]].value, path+"."+ops[0]), d.pos(o[ops[0]].value)
		d.upstreamShorthand(ops[0], c, o[ops[0]].key, path)
	case len(ops) == 0 && o.has("value"):
		// The original's reading: a value without an operator is equals.
		c.Operator = "equals"
		c.Value, c.ValuePos = d.operand(o["value"].value, path+".value"), d.pos(o["value"].value)
	case len(ops) == 0:
		// …and a condition with neither tests that the field exists.
		c.Operator = "exists"
	default:
		d.errorf(n, path, "the condition on %s has several operators (%s); write one condition per operator", c.Field, strings.Join(ops, ", "))
		return nil
	}
	return c
}

// upstreamShorthand warns where the original read a short form differently:
// it skipped a short form with an empty value, and did not know gt:, lt:,
// gte: and lte:, so it tested that the field exists instead.
func (d *decoder) upstreamShorthand(key string, c *Condition, k *yaml.Node, path string) {
	switch {
	case shorthandsUpstreamIgnored[key]:
		d.warnf(k, path+"."+key, "%s: is read here as a numeric comparison; the original engine did not know it (it knew greaterThan, lessThan, greaterThanOrEqual, lessThanOrEqual) and tested only that %s exists; write %s: to mean the comparison in both", key, c.Field, map[string]string{"gt": "greaterThan", "lt": "lessThan", "gte": "greaterThanOrEqual", "lte": "lessThanOrEqual"}[key])
	case c.Value == "" && c.Operator != "exists" && c.Operator != "notExists" && c.Operator != "notEquals":
		d.warnf(k, path+"."+key, "%s: \"\" is read here as written; the original engine skipped a short form with an empty value and tested that %s exists instead; write notExists: true for \"%s is empty\", or exists: true for the original's reading", key, c.Field, c.Field)
	}
}

// operand stringifies a condition operand the way the original engine
// compared it: a list becomes its comma-joined items.
func (d *decoder) operand(n *yaml.Node, path string) string {
	n = resolve(n)
	if n == nil || isNull(n) {
		return ""
	}
	if n.Kind == yaml.SequenceNode {
		return strings.Join(d.strList(n, path), ",")
	}
	return d.str(n, path)
}

func (d *decoder) status(n *yaml.Node, path string) *Status {
	o := d.mapping(n, path, statusKeys, unimplementedStatus)
	s := &Status{Pos: d.pos(resolve(n))}
	var items []*yaml.Node
	if f, ok := o["include"]; ok {
		items = d.includedFields(f.value, path+".include")
	}
	if list := resolve(o["fields"].value); list != nil && !isNull(list) {
		if list.Kind != yaml.SequenceNode {
			d.errorf(list, path+".fields", "must be a list of `- path: … / value: …` entries")
			return s
		}
		items = append(items, list.Content...)
	}
	for i, item := range items {
		ipath := fmt.Sprintf("%s.fields[%d]", path, i)
		fo := d.mapping(item, ipath, statusFieldKeys, nil)
		f := &StatusField{Pos: d.pos(resolve(item))}
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
	file := resolvePath(d.dirOf(n, ""), d.str(n, path))
	if file == "" {
		return nil
	}
	for _, doc := range d.loader.parse(file, n, d.fileOf(n)) {
		root := resolve(doc)
		if root == nil || isNull(root) {
			continue
		}
		fd := d.loader.decoder(file)
		fd.entry, fd.owner = d.entry, d.owner
		var list *yaml.Node
		if root.Kind == yaml.MappingNode {
			list = resolve(fd.mapping(root, "", []string{"fields"}, nil)["fields"].value)
		}
		if list == nil || list.Kind != yaml.SequenceNode {
			fd.errorf(root, "fields", "a status fragment needs `fields:`, a list of `- path: … / value: …` entries")
			return nil
		}
		return list.Content
	}
	return nil
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

func (d *decoder) conversion(n *yaml.Node) *Conversion {
	o := d.mapping(n, "conversion", conversionKeys, unimplementedConversion)
	c := &Conversion{Pos: d.pos(resolve(n))}
	c.StorageVersion, c.StoragePos = d.str(o["storageVersion"].value, "conversion.storageVersion"), d.pos(o["storageVersion"].value)
	list := resolve(o["paths"].value)
	if list == nil || isNull(list) {
		return c
	}
	if list.Kind != yaml.SequenceNode {
		d.errorf(list, "conversion.paths", "must be a list of `- from: … / to: …` paths")
		return c
	}
	for i, item := range list.Content {
		ipath := fmt.Sprintf("conversion.paths[%d]", i)
		po := d.mapping(item, ipath, conversionPathKeys, nil)
		p := &ConversionPath{Pos: d.pos(resolve(item)), Index: i}
		p.From, p.FromPos = d.str(po["from"].value, ipath+".from"), d.pos(po["from"].value)
		p.To, p.ToPos = d.str(po["to"].value, ipath+".to"), d.pos(po["to"].value)
		if p.From == "" || p.To == "" {
			d.errorf(item, ipath, "a conversion path needs both from: and to: versions")
			continue
		}
		if strings.Contains(p.From, "/") || strings.Contains(p.To, "/") {
			d.errorf(item, ipath, "from and to are bare versions (v1alpha1), not group/version")
			continue
		}
		if p.From == p.To {
			d.errorf(po["to"].value, ipath+".to", "a path from %s to itself is not needed: same-version conversion returns the object unchanged", p.From)
			continue
		}
		if f, ok := po["spec"]; ok {
			p.Spec = d.value(f.value, ipath+".spec")
		}
		if f, ok := po["status"]; ok {
			p.Status = d.value(f.value, ipath+".status")
		}
		if f, ok := po["metadata"]; ok {
			mo := d.mapping(f.value, ipath+".metadata", pathMetadataKeys, nil)
			if lf, ok := mo["labels"]; ok {
				p.Labels = d.value(lf.value, ipath+".metadata.labels")
			}
			if af, ok := mo["annotations"]; ok {
				p.Annotations = d.value(af.value, ipath+".metadata.annotations")
			}
		}
		c.Paths = append(c.Paths, p)
	}
	return c
}

// checkConversions validates conversion blocks against the CRD manifests,
// across entries: versions served, one path per pair, the storage version,
// one conversion block per CRD.
func checkConversions(k *Katalog, diags *Diagnostics) {
	owner := map[*CRD]*CRDEntry{}
	for _, e := range k.CRDs {
		if e.Conversion == nil || e.CRD == nil {
			continue
		}
		c := e.Conversion
		add := func(p Pos, field, format string, args ...any) {
			*diags = append(*diags, Diagnostic{Pos: p, Entry: e.Name, Field: field, Message: fmt.Sprintf(format, args...)})
		}
		if prev, ok := owner[e.CRD]; ok {
			add(c.Pos, "conversion", "the CRD %s already has a conversion block in entry %q (%s); declare all its paths in one entry", e.CRD.Object.Name, prev.Name, prev.Conversion.Pos)
			continue
		}
		owner[e.CRD] = e
		if c.StorageVersion == "" {
			// Optional, as upstream: the CRD says which version it stores.
			c.StorageVersion = e.CRD.StorageVersion
		} else if c.StorageVersion != e.CRD.StorageVersion {
			add(c.StoragePos, "conversion.storageVersion", "storageVersion %q is not the storage version of CRD %s, which stores %q; make them agree", c.StorageVersion, e.CRD.Object.Name, e.CRD.StorageVersion)
		}
		seen := map[[2]string]*ConversionPath{}
		for _, p := range c.Paths {
			field := fmt.Sprintf("conversion.paths[%d]", p.Index)
			for _, v := range []struct {
				name string
				pos  Pos
				key  string
			}{{p.From, p.FromPos, "from"}, {p.To, p.ToPos, "to"}} {
				if !e.CRD.Serves(v.name) {
					add(v.pos, field+"."+v.key, "version %q is not served by CRD %s (served: %s)%s", v.name, e.CRD.Object.Name, strings.Join(e.CRD.Served, ", "), DidYouMean(v.name, e.CRD.Served))
				}
			}
			key := [2]string{p.From, p.To}
			if prev, dup := seen[key]; dup {
				add(p.Pos, field, "a second path from %s to %s; the first is at %s — merge them", p.From, p.To, prev.Pos)
				continue
			}
			seen[key] = p
		}
	}
}

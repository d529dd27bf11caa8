package katalog

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Observations: objects an entry observes besides its own custom resources
// and children. Upstream spells them two ways (pkg/types/cross.go,
// pkg/runtime/kordinator/watch_informer.go): operatorBox.cross reads another
// custom resource and exposes it to templates as .cross.<as>; a change to it
// reconciles its readers. operatorBox.watch only reconciles, mapping the
// watched object to the custom resources to reconcile. Both decode into one
// Observation, which the engine types and the operator serves from one
// machinery; a further spelling (upstream's newer operatorBox.observe) feeds
// the same type.

// Observation is one kind of object an entry observes.
type Observation struct {
	Pos Pos
	// Field is where it is declared, e.g. operatorBox.cross[0].
	Field string
	// Entry is the katalog entry whose custom resources are observed (cross
	// crd:); "" when APIVersion and Kind name the kind.
	Entry      string
	APIVersion string
	Kind       string
	// TargetPos points at crd:, kind: or apiVersion:.
	TargetPos Pos
	// Name, Namespace and LabelSelector select the observed objects; nil
	// when absent. Name and Namespace may be expressions of the custom
	// resource (a cross read); LabelSelector is a Kubernetes label
	// selector (`tier=db,env in (a,b)`), possibly an expression too.
	Name, Namespace, LabelSelector *Value
	// As exposes the observed objects to the entry's expressions as
	// cross.<As> (CEL) and .cross.<As> (legacy); "" when they are only
	// watched.
	As    string
	AsPos Pos
	// All exposes every match as a list (strategy: all); otherwise the first
	// by namespace and name.
	All bool
	// MaxMatches bounds the objects one read may match (maxMatches, default
	// DefaultMaxMatches); more fail the reconcile.
	MaxMatches int
	// On limits the events that reconcile to create, update and delete
	// (watch on:); nil: all.
	On []string
	// KeyFrom maps a watched object to the custom resource to reconcile;
	// nil: its controller owner of this entry's kind, else every custom
	// resource of the entry (upstream's default).
	KeyFrom *KeyFrom

	// Resolved at load: the kind observed, and its CRD when the katalog
	// has it (nil for built-in kinds and kinds read untyped).
	GVK      schema.GroupVersionKind
	Plural   string
	CRD      *CRD
	Typed    bool
	Resolved bool
	// Remote is the read's source: (an HTTP read of another runtime's
	// /katalog API or of any JSON endpoint) when the read names no entry
	// of this katalog; nil for a read of this operator's informers. A
	// remote read has no kind: GVK, Plural and CRD stay zero.
	Remote *CrossSource
	// Denied: the observed kind is an entry's with crossAccess: false, so
	// this cross read reads nothing (nothing is watched for it either).
	Denied bool
	// Gate is a watch's or an event's enqueueGate (observe_block.go); nil
	// when absent.
	Gate *ObservationGate
	// Event matches Kubernetes Events (observe.events); nil otherwise.
	Event *EventMatch
}

// Exposed reports an observation its entry's expressions read (cross).
func (o *Observation) Exposed() bool { return o.As != "" }

// KeyFrom is a watch's keyFrom: which custom resource a change reconciles.
type KeyFrom struct {
	Pos Pos
	// Label names a label of the watched object holding the name of the
	// custom resource (in the watched object's namespace).
	Label string
	// Name (and Namespace) name one custom resource (a singleton).
	Name, Namespace string
}

// DefaultMaxMatches bounds the objects one cross read may match.
const DefaultMaxMatches = 100

// Watch events.
const (
	EventCreate = "create"
	EventUpdate = "update"
	EventDelete = "delete"
)

var (
	crossKeys         = []string{"crd", "kind", "apiVersion", "selector", "as", "strategy", "maxMatches", "source"}
	crossSelectorKeys = []string{"name", "namespace", "labelSelector"}
	watchKeys         = []string{"apiVersion", "kind", "name", "namespace", "labelSelector", "on", "keyFrom", "index", "enqueueGate", "include"}
	keyFromKeys       = []string{"label", "name", "namespace"}
)

// crossItem decodes one cross read (operatorBox.cross, observe.cross).
func (d *decoder) crossItem(box *OperatorBox, item *yaml.Node, ipath string) {
	o := d.mapping(item, ipath, crossKeys, nil)
	ob := &Observation{Pos: d.pos(Resolve(item)), Field: ipath, MaxMatches: DefaultMaxMatches}
	if f, ok := o["source"]; ok {
		ob.Remote = d.crossSource(f, ipath+".source")
	}
	d.target(ob, o, ipath, true)
	if f, ok := o["selector"]; ok {
		so := d.mapping(f.value, ipath+".selector", crossSelectorKeys, nil)
		d.selector(ob, so, ipath+".selector")
	}
	ob.As = ob.Entry
	if f, ok := o["as"]; ok {
		ob.As, ob.AsPos = d.str(f.value, ipath+".as"), d.pos(f.value)
	}
	if ob.AsPos.IsZero() {
		ob.AsPos = ob.TargetPos
	}
	if ob.As == "" {
		d.errorf(Resolve(item), ipath+".as", "a cross read whose target is apiVersion/kind, or an endpoint, needs as: (the name it is read by, cross.<as>)")
	} else if !validInputName(ob.As) {
		d.errorAt(ob.AsPos, ipath+".as", "as: %q is not a name expressions can read (letters, digits, _ and -, starting with a letter)", ob.As)
	}
	if f, ok := o["strategy"]; ok {
		switch s := d.str(f.value, ipath+".strategy"); s {
		case "first", "":
		case "all":
			ob.All = true
		default:
			d.errorf(f.value, ipath+".strategy", "strategy %q is not first or all%s", s, DidYouMean(s, []string{"first", "all"}))
		}
	}
	if f, ok := o["maxMatches"]; ok {
		if m, ok := d.integer(f.value, ipath+".maxMatches"); ok {
			if m < 1 || m > 10000 {
				d.errorf(f.value, ipath+".maxMatches", "maxMatches must be between 1 and 10000, got %d", m)
			} else {
				ob.MaxMatches = m
			}
		}
	}
	box.Observations = append(box.Observations, ob)
}

// watchItem decodes one watch (operatorBox.watch, observe.watch). A watch
// that is only include: is replaced by the watch: list of that file
// (upstream's WatchEntry.Include).
func (d *decoder) watchItem(box *OperatorBox, item *yaml.Node, ipath string) {
	o := d.mapping(item, ipath, watchKeys, nil)
	if f, ok := o["include"]; ok {
		if len(o) > 1 {
			d.errorf(f.key, ipath+".include", "a watch with include: is replaced by the watch: list of that file, so its other keys would be ignored (as upstream); remove them or the include")
			return
		}
		fd, root := d.fragment(f.value, ipath+".include", "watch include")
		if root != nil {
			fo := fd.mapping(root, ipath+".include", []string{"watch"}, nil)
			fd.observationList(box, "watch", fo["watch"].value, ipath+".include: watch")
		}
		return
	}
	ob := &Observation{Pos: d.pos(Resolve(item)), Field: ipath}
	d.target(ob, o, ipath, false)
	d.selector(ob, o, ipath)
	d.literalSelector(ob, ipath)
	d.watchOptions(ob, o, ipath)
	if f, ok := o["index"]; ok {
		d.warnf(f.key, ipath+".index", "index registers field indexes for Go code reading the watch's cache upstream; nothing here reads them, so it is ignored")
	}
	box.Observations = append(box.Observations, ob)
}

// literalSelector reports a watch selector written as an expression.
func (d *decoder) literalSelector(ob *Observation, ipath string) {
	for _, v := range []*Value{ob.Name, ob.Namespace, ob.LabelSelector} {
		if v != nil && v.Kind == StringValue && (strings.Contains(v.Str, "{{") || strings.Contains(v.Str, "${")) {
			d.errorAt(v.Pos, ipath, "a watch selects its objects with literals (it is set up once, not per custom resource); to read an object named after the custom resource, declare it under cross:")
		}
	}
}

// watchOptions decodes what a watch and an event declaration share: on,
// keyFrom and enqueueGate.
func (d *decoder) watchOptions(ob *Observation, o object, ipath string) {
	if f, ok := o["on"]; ok {
		for j, ev := range d.strList(f.value, ipath+".on") {
			if ev != EventCreate && ev != EventUpdate && ev != EventDelete {
				d.errorf(Resolve(f.value).Content[j], fmt.Sprintf("%s.on[%d]", ipath, j), "event %q is not create, update or delete%s", ev, DidYouMean(ev, []string{EventCreate, EventUpdate, EventDelete}))
				continue
			}
			ob.On = append(ob.On, ev)
		}
		if len(ob.On) == 0 {
			d.errorf(f.value, ipath+".on", "on: lists no event, so the watch would never reconcile; list create, update and/or delete, or remove on: for all three")
		}
	}
	if f, ok := o["keyFrom"]; ok {
		ko := d.mapping(f.value, ipath+".keyFrom", keyFromKeys, nil)
		kf := &KeyFrom{Pos: d.pos(f.key)}
		kf.Label = d.str(ko["label"].value, ipath+".keyFrom.label")
		kf.Name = d.str(ko["name"].value, ipath+".keyFrom.name")
		kf.Namespace = d.str(ko["namespace"].value, ipath+".keyFrom.namespace")
		switch {
		case kf.Label != "" && kf.Name != "":
			d.errorf(f.key, ipath+".keyFrom", "keyFrom takes label or name, not both")
		case kf.Label == "" && kf.Name == "":
			d.errorf(f.key, ipath+".keyFrom", "keyFrom needs label (a label of the watched object naming the custom resource) or name (one custom resource)")
		case kf.Namespace != "" && kf.Name == "":
			d.errorf(ko["namespace"].key, ipath+".keyFrom.namespace", "keyFrom.namespace qualifies keyFrom.name; with label the custom resource is looked up in the watched object's namespace")
		}
		ob.KeyFrom = kf
	}
	d.observationGate(ob, o, ipath)
}

// target decodes what an observation observes: an entry (cross crd:, or
// upstream's older kind: alone) or apiVersion and kind.
func (d *decoder) target(ob *Observation, o object, path string, cross bool) {
	crd, kind, av := o["crd"], o["kind"], o["apiVersion"]
	switch {
	case cross && crd.value != nil:
		ob.Entry, ob.TargetPos = d.str(crd.value, path+".crd"), d.pos(crd.value)
		if kind.value != nil || av.value != nil {
			d.errorf(orNode(kind.key, av.key), path, "crd: names an entry of this katalog; apiVersion and kind name any other kind; give one of the two")
		}
	case cross && kind.value != nil && av.value == nil:
		// Upstream's older spelling: kind: <entry name>.
		ob.Entry, ob.TargetPos = d.str(kind.value, path+".kind"), d.pos(kind.value)
	case kind.value != nil && av.value != nil:
		ob.APIVersion, ob.Kind, ob.TargetPos = d.str(av.value, path+".apiVersion"), d.str(kind.value, path+".kind"), d.pos(av.value)
		if _, err := schema.ParseGroupVersion(ob.APIVersion); err != nil || ob.APIVersion == "" {
			d.errorf(av.value, path+".apiVersion", "apiVersion %q is not group/version or version", ob.APIVersion)
		}
	case cross && ob.Remote != nil:
		// An endpoint's answer needs no target (as: names it); host: needs
		// crd:, which checkRemote says.
	case cross:
		d.errorAt(ob.Pos, path, "a cross read needs crd: (an entry of this katalog) or apiVersion and kind")
		ob.TargetPos = ob.Pos
	default:
		d.errorAt(ob.Pos, path, "a watch needs apiVersion and kind")
		ob.TargetPos = ob.Pos
	}
	if ob.TargetPos.IsZero() {
		ob.TargetPos = ob.Pos
	}
}

// selector decodes name, namespace and labelSelector.
func (d *decoder) selector(ob *Observation, o object, path string) {
	for _, k := range crossSelectorKeys {
		f, ok := o[k]
		if !ok {
			continue
		}
		v := d.value(f.value, path+"."+k)
		if v.Kind != StringValue {
			d.errorf(f.value, path+"."+k, "%s must be a string, got %s", k, describe(Resolve(f.value)))
			continue
		}
		switch k {
		case "name":
			ob.Name = v
		case "namespace":
			ob.Namespace = v
		case "labelSelector":
			ob.LabelSelector = v
		}
	}
	if ob.Name != nil && ob.LabelSelector != nil {
		d.errorAt(ob.LabelSelector.Pos, path+".labelSelector", "give name or labelSelector, not both")
	}
}

// validInputName: a name expressions read a live input by (cross as:,
// external name:).
func validInputName(s string) bool {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// resolveObservations finds the kind every observation observes: an entry
// of the katalog, else a CRD the loader can read (--crd, the cluster), else
// a built-in kind; a kind none of them defines is observed untyped (a
// warning). It runs once every entry's CRD is known.
func (l *loader) resolveObservations(pool []*CRD, fetched map[schema.GroupKind]*CRD) {
	for _, e := range l.k.CRDs {
		if e.Box == nil {
			continue
		}
		d := l.decoder(e.Pos.File)
		d.entry, d.owner = e.Name, e
		seen := map[string]*Observation{}
		for _, ob := range e.Box.Observations {
			d.resolveObservation(ob, pool, fetched)
			d.denyCross(ob)
			if !ob.Exposed() {
				continue
			}
			if prev, dup := seen[ob.As]; dup {
				d.errorAt(ob.AsPos, ob.Field+".as", "cross.%s is already declared at %s; give each cross read its own as:", ob.As, prev.Pos)
			}
			seen[ob.As] = ob
		}
	}
}

func (d *decoder) resolveObservation(ob *Observation, pool []*CRD, fetched map[schema.GroupKind]*CRD) {
	k := d.loader.k
	if ob.Remote != nil {
		if ob.Entry == "" || k.Entry(ob.Entry) == nil {
			d.checkRemote(ob)
			return
		}
		// Upstream reads a sibling in the same binary from its informer
		// and falls back to source only without one
		// (pkg/reconciler/run_template_reconcile.go, readCross).
		d.warnAt(ob.Remote.Pos, ob.Field+".source", "source: is not used: %q is an entry of this katalog, read from this operator's informer as upstream reads a sibling in the same binary; remove source:", ob.Entry)
		ob.Remote = nil
	}
	if ob.Entry != "" {
		other := k.Entry(ob.Entry)
		switch {
		case other == nil:
			d.errorAt(ob.TargetPos, ob.Field+".crd", "crd: %q is not an entry of this katalog%s; to read another kind, give its apiVersion and kind", ob.Entry, DidYouMean(ob.Entry, entryNames(k)))
			return
		case other.CRD == nil:
			return // its own problem is reported
		}
		ob.GVK, ob.Plural, ob.CRD = other.GVK(), other.APITypes.Plural, other.CRD
		ob.Typed, ob.Resolved = other.CRD.Typed(), true
		return
	}
	gv, err := schema.ParseGroupVersion(ob.APIVersion)
	if err != nil || ob.Kind == "" {
		return // reported when decoded
	}
	ob.GVK = gv.WithKind(ob.Kind)
	at := APITypes{Group: gv.Group, Version: gv.Version, Kind: ob.Kind}
	crd := d.observedCRD(at, pool, fetched)
	if crd == nil {
		plural, _ := meta.UnsafeGuessKindToResource(ob.GVK)
		ob.Plural, ob.Resolved = plural.Resource, true
		if ob.Exposed() {
			d.warnAt(ob.TargetPos, ob.Field, "no CRD defines %s: cross.%s is read untyped (any field, checked when evaluated); pass --crd with its manifest, or --kubeconfig, to type it", ob.GVK, ob.As)
		}
		return
	}
	if !crd.Serves(gv.Version) {
		d.errorAt(ob.TargetPos, ob.Field+".apiVersion", "%s does not serve version %s (it serves %s)", crd.describe(), gv.Version, strings.Join(crd.Served, ", "))
		return
	}
	ob.CRD, ob.Plural, ob.Typed, ob.Resolved = crd, crd.Object.Spec.Names.Plural, crd.Typed(), true
}

// denyCross marks a cross read of an entry with crossAccess: false: it
// reads nothing, as upstream's (examples/advanced/19-endpoint-control/
// 03-fully-dark: the read "resolves to empty"), and a warning says so.
func (d *decoder) denyCross(ob *Observation) {
	if !ob.Exposed() || !ob.Resolved {
		return
	}
	for _, e := range d.loader.k.CRDs {
		if e.DeniesCross && e.CRD != nil && e.GVK().GroupKind() == ob.GVK.GroupKind() {
			ob.Denied = true
			d.warnAt(ob.TargetPos, ob.Field, "entry %q has crossAccess: false, so cross.%s always reads as not found (legacy .cross.%s.found \"false\"), as upstream; remove the read, or crossAccess: false from %q", e.Name, ob.As, ob.As, e.Name)
			return
		}
	}
}

// observedCRD finds the CRD of at: a katalog entry's, a --crd manifest, the
// cluster's, or a built-in kind's.
func (d *decoder) observedCRD(at APITypes, pool []*CRD, fetched map[schema.GroupKind]*CRD) *CRD {
	for _, e := range d.loader.k.CRDs {
		if e.CRD != nil && e.CRD.Origin != Untyped && e.CRD.GroupKind() == (schema.GroupKind{Group: at.Group, Kind: at.Kind}) {
			return e.CRD
		}
	}
	for _, c := range pool {
		if c.Object.Spec.Group == at.Group && c.Object.Spec.Names.Kind == at.Kind {
			return c
		}
	}
	if b := builtInCRD(at); b != nil {
		return b
	}
	fetch := d.loader.opts.Fetch
	if fetch == nil || at.Group == "" {
		return nil
	}
	gk := schema.GroupKind{Group: at.Group, Kind: at.Kind}
	if c, ok := fetched[gk]; ok {
		return c
	}
	obj, err := fetch(gk)
	if err != nil {
		return nil
	}
	c, err := newCRD("", obj)
	if err != nil {
		return nil
	}
	c.Origin = FromCluster
	fetched[gk] = c
	return c
}

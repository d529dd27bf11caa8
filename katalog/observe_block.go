package katalog

import (
	"fmt"
	"regexp"
	"sort"

	"gopkg.in/yaml.v3"
)

// operatorBox.observe (upstream v0.7.18: pkg/types/types_observe.go,
// documentation/reference/schema/02-katalog/27-watch.md, 28-events.md): the
// newest spelling of what an entry observes. observe.watch is
// operatorBox.watch and observe.cross operatorBox.cross under a new name
// (one decoder, one Observation each); observe.events watches Kubernetes
// Events (events.k8s.io/v1) matching the fields an entry lists; observe.
// include reads watch: and events: from a file. Each construct may be
// written in one place: both spellings at once is an error naming both.

// ObservationGate is a watch's or an event's enqueueGate: conditions on the
// observed object (self: the watched object, or the Event), and sentinels
// of its change. Sentinels listed here are computed for this observation
// only (upstream: they declare themselves).
type ObservationGate struct {
	Pos       Pos
	When, Or  *When
	Fail      string
	Sentinels []string
}

// EventMatch is one observe.events entry: the fields a Kubernetes Event
// must have (empty: any). Namespace and name are the observation's.
type EventMatch struct {
	// Name is the entry's key in observe.events.
	Name                                                         string
	Reason, Action, Type, ReportingController, ReportingInstance string
	// Regarding and Related match the objects the Event refers to; nil:
	// any.
	Regarding, Related *ObjectMatch
}

// ObjectMatch matches an object reference of an Event (empty: any).
type ObjectMatch struct {
	APIVersion, Kind, Name, Namespace string
}

// EventsAPIVersion and EventKind are what observe.events observes.
const (
	EventsAPIVersion = "events.k8s.io/v1"
	EventKind        = "Event"
)

var (
	observeKeys     = []string{"watch", "events", "cross", "include"}
	eventKeys       = []string{"reason", "action", "type", "reportingController", "reportingInstance", "regarding", "related", "namespace", "name", "on", "keyFrom", "enqueueGate"}
	objectMatchKeys = []string{"apiVersion", "kind", "name", "namespace"}
	camelCase       = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)
)

// observations decodes operatorBox.cross, operatorBox.watch and
// operatorBox.observe found in o.
func (d *decoder) observations(box *OperatorBox, o object, path string) {
	f, ok := o["observe"]
	var oo object
	opath := path + ".observe"
	events := map[string]field{}
	if ok {
		oo = d.mapping(f.value, opath, observeKeys, nil)
		if inc, ok := oo["include"]; ok {
			d.observeInclude(box, inc.value, opath+".include", events)
		}
	}
	for _, key := range []string{"cross", "watch"} {
		old, oldOK := o[key]
		inline, inOK := oo[key]
		switch {
		case inOK && oldOK && key == "watch":
			d.writtenTwice(inline.key, opath+".watch", moveOf("operatorBox.observe", "watch"), d.pos(old.key))
		case inOK && oldOK:
			d.errorf(inline.key, opath+"."+key, "%s is written both here and at %s (%s.%s); keep one", key, d.pos(old.key), path, key)
		case inOK:
			d.observationList(box, key, inline.value, opath+"."+key)
		case oldOK:
			d.observationList(box, key, old.value, path+"."+key)
		}
	}
	if ev, ok := oo["events"]; ok {
		for name, entry := range d.eventMap(ev.value, opath+".events") {
			events[name] = entry // inline overrides an included one of the same name
		}
	}
	names := make([]string, 0, len(events))
	for name := range events {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		d.event(box, name, events[name], opath+".events."+name)
	}
	d.duplicateWatches(box)
}

// duplicateWatches reports two watches of the same objects (apiVersion,
// kind, namespace and name), which upstream's validation rejects
// (27-watch.md, "Duplicate watch identities are rejected").
func (d *decoder) duplicateWatches(box *OperatorBox) {
	seen := map[string]*Observation{}
	lit := func(v *Value) string {
		if v == nil {
			return ""
		}
		return v.Str
	}
	for _, ob := range box.Observations {
		if ob.Exposed() || ob.Event != nil || ob.Kind == "" {
			continue
		}
		id := ob.APIVersion + "/" + ob.Kind + "/" + lit(ob.Namespace) + "/" + lit(ob.Name)
		if prev, dup := seen[id]; dup {
			d.errorAt(ob.Pos, ob.Field, "watches the same objects as %s (%s): merge the two (list both events under on:)", prev.Field, prev.Pos)
			continue
		}
		seen[id] = ob
	}
}

// observeInclude reads observe.include: a file holding watch:, cross: and
// events:, decoded before the inline ones (its decoder names its file).
func (d *decoder) observeInclude(box *OperatorBox, n *yaml.Node, path string, events map[string]field) {
	fd, root := d.fragment(n, path, "observe include")
	if root == nil {
		return
	}
	fo := fd.mapping(root, path, observeKeys[:3], nil)
	for _, key := range []string{"cross", "watch"} {
		if f, ok := fo[key]; ok {
			fd.observationList(box, key, f.value, path+": "+key)
		}
	}
	if f, ok := fo["events"]; ok {
		for name, entry := range fd.eventMap(f.value, path+": events") {
			events[name] = entry
		}
	}
}

// observationList decodes a list of cross reads or watches.
func (d *decoder) observationList(box *OperatorBox, key string, n *yaml.Node, path string) {
	for i, item := range d.list(n, path) {
		d.observationItem(box, key, item, fmt.Sprintf("%s[%d]", path, i))
	}
}

func (d *decoder) observationItem(box *OperatorBox, key string, item *yaml.Node, path string) {
	if key == "cross" {
		d.crossItem(box, item, path)
	} else {
		d.watchItem(box, item, path)
	}
}

// eventMap returns observe.events' entries by name, checking the names.
func (d *decoder) eventMap(n *yaml.Node, path string) map[string]field {
	n = Resolve(n)
	out := map[string]field{}
	if n == nil || isNull(n) {
		return out
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "must be a map of event declarations by name (dbReady: {reason: …}), got %s", describe(n))
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if _, dup := out[k.Value]; dup {
			d.errorf(k, path+"."+k.Value, "duplicate event declaration %q; remove one", k.Value)
			continue
		}
		if !camelCase.MatchString(k.Value) {
			d.errorf(k, path+"."+k.Value, "event declaration names are camelCase (letters and digits, starting with a lower-case letter), got %q", k.Value)
			continue
		}
		out[k.Value] = field{key: k, value: v}
	}
	return out
}

// event decodes one observe.events entry into an Observation of Events.
func (d *decoder) event(box *OperatorBox, name string, f field, path string) {
	o := d.mapping(f.value, path, eventKeys, []string{"include"})
	ob := &Observation{Pos: d.pos(f.key), Field: path, APIVersion: EventsAPIVersion, Kind: EventKind, TargetPos: d.pos(f.key)}
	m := &EventMatch{Name: name}
	for key, dst := range map[string]*string{"reason": &m.Reason, "action": &m.Action, "type": &m.Type, "reportingController": &m.ReportingController, "reportingInstance": &m.ReportingInstance} {
		if v, ok := o[key]; ok {
			*dst = d.str(v.value, path+"."+key)
		}
	}
	m.Regarding = d.objectMatch(o, "regarding", path)
	m.Related = d.objectMatch(o, "related", path)
	ob.Event = m
	d.selector(ob, o, path)
	d.literalSelector(ob, path)
	d.watchOptions(ob, o, path)
	if len(o) == 0 || len(o) == 1 && o.has("on") {
		d.errorf(f.key, path, "an event declaration needs at least one field to match (reason, type, regarding, …) or keyFrom; an empty one would reconcile on every Event of the cluster")
	}
	box.Observations = append(box.Observations, ob)
}

func (d *decoder) objectMatch(o object, key, path string) *ObjectMatch {
	f, ok := o[key]
	if !ok {
		return nil
	}
	mo := d.mapping(f.value, path+"."+key, objectMatchKeys, nil)
	m := &ObjectMatch{}
	for k, dst := range map[string]*string{"apiVersion": &m.APIVersion, "kind": &m.Kind, "name": &m.Name, "namespace": &m.Namespace} {
		if v, ok := mo[k]; ok {
			*dst = d.str(v.value, path+"."+key+"."+k)
		}
	}
	return m
}

// observationGate decodes a watch's or an event's enqueueGate.
func (d *decoder) observationGate(ob *Observation, o object, path string) {
	f, ok := o["enqueueGate"]
	if !ok {
		return
	}
	g := &ObservationGate{Pos: d.pos(f.key)}
	g.When, g.Or, g.Fail, g.Sentinels = d.gate(f.value, path+".enqueueGate", nil, true)
	ob.Gate = g
}

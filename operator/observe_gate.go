package operator

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// What an observed change must pass before it reconciles: an event
// declaration's fields (observe.events; upstream: pkg/types/
// types_observe.go, EventEntry.Matches — every field given must be equal,
// the others match anything) and a watch's or an event's enqueueGate over
// the observed object and the sentinels of its change.

// observedChange is one informer event of an observed kind.
type observedChange struct {
	ev string // katalog.EventCreate, EventUpdate, EventDelete
	// obj is the object (its last version for a delete); old its version
	// before an update, nil otherwise.
	obj, old client.Object
}

// sentinels are names' values for the change: an update compares old and
// obj, a create obj with an empty object, a delete its last version with
// one.
func (c observedChange) sentinels(names []string) map[string]bool {
	switch c.ev {
	case katalog.EventCreate:
		return computeSentinels(names, nil, c.obj)
	case katalog.EventDelete:
		return computeSentinels(names, c.obj, nil)
	}
	return computeSentinels(names, c.old, c.obj)
}

// changeView converts the changed object to the map expressions read, once
// per change and only when something reads it.
type changeView struct {
	gvk  schema.GroupVersionKind
	obj  client.Object
	data map[string]any
	err  error
}

func (v *changeView) object() (map[string]any, error) {
	if v.data != nil || v.err != nil {
		return v.data, v.err
	}
	if u, ok := v.obj.(interface{ UnstructuredContent() map[string]any }); ok {
		v.data = u.UnstructuredContent()
		return v.data, nil
	}
	v.data, v.err = runtime.DefaultUnstructuredConverter.ToUnstructured(v.obj)
	if v.err == nil {
		// The cache's typed objects carry no apiVersion and kind.
		v.data["apiVersion"], v.data["kind"] = v.gvk.GroupVersion().String(), v.gvk.Kind
	}
	return v.data, v.err
}

// watchAdmits reports whether a change passes an observation's event
// fields and enqueueGate. A gate that cannot be evaluated lets the change
// through unless its failPolicy is closed (upstream's default is open).
func (e *entryController) watchAdmits(o *engine.Observation, ch observedChange, view *changeView) bool {
	m, g := o.Source.Event, o.Gate
	if m == nil && g == nil {
		return true
	}
	obj, err := view.object()
	if err != nil {
		e.log.Error(err, "reading an observed object", "observation", o.Source.Field)
		return g != nil && g.Fail != katalog.FailClosed
	}
	if m != nil && !eventMatches(m, obj) {
		return false
	}
	if g == nil {
		return true
	}
	vals := ch.sentinels(g.Sentinels)
	if len(g.List) > 0 {
		return engine.AnyTrue(g.List, vals)
	}
	if g.When == nil {
		return true
	}
	s := engine.NewScope(obj)
	engine.SetSentinels(s, g.Sentinels, vals)
	ok, err := g.When.Eval(s)
	if err != nil {
		e.log.Info("an observation's enqueueGate cannot be evaluated", "observation", o.Source.Field, "object", client.ObjectKeyFromObject(ch.obj).String(), "error", err.Error(), "failPolicy", g.Fail)
		return g.Fail != katalog.FailClosed
	}
	return ok
}

// eventMatches reports whether an events.k8s.io/v1 Event (as a map) has
// every field m gives.
func eventMatches(m *katalog.EventMatch, ev map[string]any) bool {
	str := func(obj map[string]any, key string) string {
		s, _ := obj[key].(string)
		return s
	}
	for key, want := range map[string]string{"reason": m.Reason, "action": m.Action, "type": m.Type, "reportingController": m.ReportingController, "reportingInstance": m.ReportingInstance} {
		if want != "" && str(ev, key) != want {
			return false
		}
	}
	for key, om := range map[string]*katalog.ObjectMatch{"regarding": m.Regarding, "related": m.Related} {
		if om == nil {
			continue
		}
		ref, _ := ev[key].(map[string]any)
		for field, want := range map[string]string{"apiVersion": om.APIVersion, "kind": om.Kind, "name": om.Name, "namespace": om.Namespace} {
			if want != "" && str(ref, field) != want {
				return false
			}
		}
	}
	return true
}

package engine

import (
	"sort"
	"strconv"

	"github.com/orkspace/orkestra-cel/katalog"
)

// Live holds the values of an entry's live inputs for one evaluation, in
// the two shapes the backends read: CEL variables typed as compiled
// (crossSchemas, externalSchemas), and upstream's legacy roots. Build it
// with Entry.NewLive, fill it with SetCross and SetExternal, read it through
// Entry.Scope. Values given to it are shared, never modified.
type Live struct {
	cross, crossLegacy       map[string]any
	external, externalLegacy map[string]any
}

// ExternalResult is the outcome of one external call.
type ExternalResult struct {
	// Called is false when the call was skipped (its condition did not
	// hold, or calls are off).
	Called bool
	// Status is the HTTP status, 0 without a response.
	Status int
	Body   string
	// JSON is the body decoded when it is JSON (HasJSON).
	JSON    any
	HasJSON bool
	// Error says why the call failed; "" when it succeeded.
	Error string
}

// NewLive returns the live inputs of e before anything is read: every
// cross read finds nothing, no call is made.
func (e *Entry) NewLive() *Live {
	l := &Live{}
	for _, o := range e.Observations {
		if o.Source.Exposed() {
			l.SetCross(o, nil)
		}
	}
	for _, r := range e.Remote {
		l.SetRemote(r.Source.As, nil)
	}
	for _, c := range e.External {
		l.SetExternal(c.Source.Name, ExternalResult{})
	}
	return l
}

// SetCross sets what a cross read found (sorted by namespace and name here;
// with strategy first, the first of them).
func (l *Live) SetCross(o *Observation, objs []map[string]any) {
	as, all := o.Source.As, o.Source.All
	objs = append([]map[string]any(nil), objs...)
	for i, obj := range objs {
		objs[i] = withSpecAndStatus(obj)
	}
	sort.SliceStable(objs, func(i, j int) bool { return objectKey(objs[i]) < objectKey(objs[j]) })
	l.cross, l.crossLegacy = copyMap(l.cross), copyMap(l.crossLegacy)
	if all {
		cel := make([]any, len(objs))
		legacy := make([]any, len(objs))
		for i, o := range objs {
			cel[i], legacy[i] = o, legacyCross(o)
		}
		l.cross[as], l.crossLegacy[as] = cel, legacy
		return
	}
	if len(objs) == 0 {
		delete(l.cross, as)
		l.crossLegacy[as] = map[string]any{"found": "false", "spec": map[string]any{}, "status": map[string]any{}}
		return
	}
	l.cross[as], l.crossLegacy[as] = objs[0], legacyCross(objs[0])
}

// SetExternal sets the result of the call named name.
func (l *Live) SetExternal(name string, r ExternalResult) {
	l.external, l.externalLegacy = copyMap(l.external), copyMap(l.externalLegacy)
	cel := map[string]any{"called": r.Called, "status": int64(r.Status), "body": r.Body, "error": r.Error}
	legacy := map[string]any{}
	// Upstream merged a JSON object body's keys into the result, below its
	// own keys (orkspace/orkestra pkg/external/http_client.go): a body
	// {"queue": {…}} reads as .external.<name>.queue.
	if obj, ok := r.JSON.(map[string]any); ok && r.HasJSON {
		for k, v := range obj {
			legacy[k] = v
		}
	}
	legacy["called"], legacy["status"], legacy["body"], legacy["error"] = strconv.FormatBool(r.Called), "", r.Body, r.Error
	if r.Status != 0 {
		legacy["status"] = strconv.Itoa(r.Status)
	}
	if r.HasJSON {
		cel["json"], legacy["json"] = r.JSON, r.JSON
	}
	l.external[name], l.externalLegacy[name] = cel, legacy
}

// External returns the CEL view of the call named name's result.
func (l *Live) External(name string) map[string]any {
	m, _ := l.external[name].(map[string]any)
	return m
}

// SampleLive builds live inputs from samples, for checking translations
// (orkestra migrate): for each cross read (its as:) what it found — a list
// read when lists says so, an answer (the first, if any) when remote says
// it is a remote read — and each call's result.
func SampleLive(cross map[string][]map[string]any, lists, remote map[string]bool, external map[string]ExternalResult) *Live {
	l := &Live{}
	for as, objs := range cross {
		if remote[as] {
			var answer map[string]any
			if len(objs) > 0 {
				answer = objs[0]
			}
			l.SetRemote(as, answer)
			continue
		}
		l.SetCross(&Observation{Source: &katalog.Observation{As: as, All: lists[as]}}, objs)
	}
	for name, r := range external {
		l.SetExternal(name, r)
	}
	return l
}

// Apply gives s the live inputs: CEL variables and legacy roots.
func (l *Live) Apply(s *Scope) {
	if s.Vars == nil {
		s.Vars = map[string]any{}
	}
	if l.cross != nil || l.crossLegacy != nil {
		s.Vars[CrossVar] = nonNil(l.cross)
		s.Roots = map[string]any{CrossVar: nonNil(l.crossLegacy)}
	}
	if l.external != nil {
		s.Vars[ExternalVar] = l.external
		if s.Roots == nil {
			s.Roots = map[string]any{}
		}
		s.Roots[ExternalVar] = l.externalLegacy
	}
}

// Scope is the scope of one evaluation of the entry's expressions over self
// (the custom resource as normalize leaves it), with its observed children
// kids (engine.ChildrenView's shape; nil: none) and live inputs (nil: none
// read yet).
func (e *Entry) Scope(self, kids map[string]any, l *Live) *Scope {
	s := NewScope(self)
	s.Children = kids
	s.Vars = map[string]any{ChildrenVar: kids}
	if l != nil {
		l.Apply(s)
	}
	return s
}

// withSpecAndStatus is obj with spec and status, empty where it has none
// (a shallow copy then): expressions read a found object's spec and status
// without testing for them, as upstream's templates do.
func withSpecAndStatus(obj map[string]any) map[string]any {
	_, spec := obj["spec"].(map[string]any)
	_, status := obj["status"].(map[string]any)
	if spec && status {
		return obj
	}
	out := make(map[string]any, len(obj)+2)
	for k, v := range obj {
		out[k] = v
	}
	for _, k := range []string{"spec", "status"} {
		if _, ok := out[k].(map[string]any); !ok {
			out[k] = map[string]any{}
		}
	}
	return out
}

// legacyCross is an observed object as upstream's templates read it
// (pkg/reconciler/run_cross.go buildCrossResult): found, name, namespace,
// spec, status, labels, annotations — here besides the object's own keys.
func legacyCross(o map[string]any) map[string]any {
	out := make(map[string]any, len(o)+6)
	for k, v := range o {
		out[k] = v
	}
	md, _ := o["metadata"].(map[string]any)
	out["found"] = "true"
	out["name"], _ = md["name"].(string)
	out["namespace"], _ = md["namespace"].(string)
	for _, k := range []string{"labels", "annotations"} {
		if m, ok := md[k].(map[string]any); ok && len(m) > 0 {
			out[k] = m
		}
	}
	return out
}

func objectKey(o map[string]any) string {
	md, _ := o["metadata"].(map[string]any)
	ns, _ := md["namespace"].(string)
	n, _ := md["name"].(string)
	return ns + "/" + n
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func nonNil(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

package katalog

import (
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// operatorBox.emit.events (upstream v0.7.18): Kubernetes Events the runtime
// records on the custom resource after a reconcile, each keyed by name.
var (
	emitEventKeys = []string{"reason", "message", "type", "on", "when", "or"}
	// reasonPattern is what Kubernetes asks of a reason: a short
	// machine-readable UpperCamelCase word.
	reasonPattern = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
)

// When a declared event is recorded, by the outcome of the reconcile.
const (
	OnSuccess = "success"
	OnFailure = "failure"
	OnAlways  = "always"
)

// EmitEvent is one operatorBox.emit.events entry.
type EmitEvent struct {
	Name string
	Pos  Pos
	// Reason is the event's reason, a literal UpperCamelCase word.
	Reason string
	// Message is the event's note: a string, CEL (${…}) or a legacy
	// template.
	Message *Value
	// Type is Normal or Warning.
	Type string
	// OnSuccess and OnFailure say after which reconciles it is recorded.
	OnSuccess, OnFailure bool
	// When (all hold) and Or (one holds); nil: always.
	When, Or *When
}

// Field is the event's field path for diagnostics.
func (ev *EmitEvent) Field() string { return "operatorBox.emit.events." + ev.Name }

// emitEvents decodes operatorBox.emit.events: a map of name → event.
func (d *decoder) emitEvents(n *yaml.Node, path string) []*EmitEvent {
	n = Resolve(n)
	if n == nil || isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "events is a map of name → {reason, message, type, on, when}, got %s", describe(n))
		return nil
	}
	var out []*EmitEvent
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		epath := join(path, k.Value)
		if seen[k.Value] {
			d.errorf(k, epath, "duplicate event %q; names are unique", k.Value)
			continue
		}
		seen[k.Value] = true
		if ev := d.emitEvent(k, v, epath); ev != nil {
			out = append(out, ev)
		}
	}
	return out
}

func (d *decoder) emitEvent(k, v *yaml.Node, path string) *EmitEvent {
	o := d.mapping(v, path, emitEventKeys, nil)
	ev := &EmitEvent{Name: k.Value, Pos: d.pos(k), Type: "Normal", OnSuccess: true}
	ok := true
	ev.Reason = d.str(o["reason"].value, path+".reason")
	switch {
	case !o.has("reason"):
		d.errorf(k, path, "an event needs reason: (a CamelCase word such as BackupCompleted)")
		ok = false
	case !reasonPattern.MatchString(ev.Reason) || len(ev.Reason) > 128:
		d.errorf(o["reason"].value, path+".reason", "reason %q is not a CamelCase word of at most 128 characters (Kubernetes reads reasons by machine); write a fixed word such as BackupCompleted and put what varies in message:", ev.Reason)
		ok = false
	}
	if !o.has("message") {
		d.errorf(k, path, "an event needs message: (text, ${CEL} or a {{ template }})")
		ok = false
	} else if ev.Message = d.value(o["message"].value, path+".message"); ev.Message.Kind != StringValue {
		d.errorf(o["message"].value, path+".message", "message is a string (text, ${CEL} or a {{ template }}), got %s", describe(Resolve(o["message"].value)))
		ok = false
	}
	if f, has := o["type"]; has {
		switch t := d.str(f.value, path+".type"); t {
		case "Normal", "Warning":
			ev.Type = t
		default:
			d.errorf(f.value, path+".type", "type must be Normal or Warning, got %q%s", t, DidYouMean(t, []string{"Normal", "Warning"}))
			ok = false
		}
	}
	if f, has := o["on"]; has {
		if !d.emitOn(ev, f.value, path+".on") {
			ok = false
		}
	}
	ev.When, ev.Or = d.gateConditions(o, path)
	if !ok {
		return nil
	}
	return ev
}

// emitOn decodes on: one of success, failure, always, or a list of them.
func (d *decoder) emitOn(ev *EmitEvent, n *yaml.Node, path string) bool {
	n = Resolve(n)
	var items []*yaml.Node
	switch {
	case n != nil && n.Kind == yaml.ScalarNode && !isNull(n):
		items = []*yaml.Node{n}
	case n != nil && n.Kind == yaml.SequenceNode && len(n.Content) > 0:
		items = n.Content
	default:
		d.errorf(n, path, "on is success, failure or always (or a list of them)")
		return false
	}
	ev.OnSuccess, ev.OnFailure = false, false
	for i, it := range items {
		ipath := path
		if n.Kind == yaml.SequenceNode {
			ipath = fmt.Sprintf("%s[%d]", path, i)
		}
		switch s := strings.TrimSpace(d.str(it, ipath)); s {
		case OnSuccess:
			ev.OnSuccess = true
		case OnFailure:
			ev.OnFailure = true
		case OnAlways:
			ev.OnSuccess, ev.OnFailure = true, true
		default:
			d.errorf(it, ipath, "on takes success, failure or always, got %q%s", s, DidYouMean(s, []string{OnSuccess, OnFailure, OnAlways}))
			return false
		}
	}
	return true
}

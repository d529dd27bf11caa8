package katalog

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// queue.behaviour (upstream v0.7.17, orkspace/orkestra pkg/types/types.go
// QueueBehaviour and pkg/runtime/queue/helper.go): once the work queue
// holds maxDepth objects (onLimit), or value percent of maxDepth
// (onThreshold), a new event of a custom resource is dropped instead of
// queued — when its when/or conditions hold, if it declares any. A dropped
// resource is reconciled on its next change or resync.
var (
	queueBehaviourKeys = []string{"onLimit", "onThreshold"}
	queueSettingKeys   = []string{"drop", "value", "when", "or", "anyOf"}
)

// QueueBehaviour is queue.behaviour: the one rule in force.
type QueueBehaviour struct {
	Pos Pos
	// Path is the rule's field path (queue.behaviour.onLimit or
	// .onThreshold).
	Path string
	// Percent of maxDepth at which events are dropped (100 for onLimit).
	Percent int
	// When and Or, when set, must hold for an event to be dropped.
	When, Or *When
}

func (d *decoder) queueBehaviour(n *yaml.Node, path string) *QueueBehaviour {
	bo := d.mapping(n, path, queueBehaviourKeys, nil)
	var rule *QueueBehaviour
	for _, k := range queueBehaviourKeys {
		f, ok := bo[k]
		if !ok {
			continue
		}
		kpath := join(path, k)
		so := d.mapping(f.value, kpath, queueSettingKeys, nil)
		r := &QueueBehaviour{Pos: d.pos(f.key), Path: kpath, Percent: 100}
		r.When, r.Or = d.gateConditions(so, kpath)
		conditional := !r.When.Empty() || !r.Or.Empty()
		drop, hasDrop := so["drop"]
		dropping := hasDrop && d.boolean(drop.value, join(kpath, "drop"))
		switch k {
		case "onLimit":
			if v, ok := so["value"]; ok {
				d.warnf(v.key, join(kpath, "value"), "value is onThreshold's percentage; onLimit fires at maxDepth and ignores it (as upstream)")
			}
			if !dropping && !conditional {
				d.errorf(f.key, kpath, "onLimit drops new events once the queue holds maxDepth objects: write drop: true (or when:/or: conditions under which to drop), or remove onLimit")
			}
		case "onThreshold":
			v, ok := so["value"]
			if !ok {
				d.errorf(f.key, join(kpath, "value"), "onThreshold needs value: the percentage of maxDepth (1 to 99) at which new events are dropped")
				continue
			}
			p, err := strconv.Atoi(strings.TrimSpace(d.str(v.value, join(kpath, "value"))))
			if err != nil || p < 1 || p > 99 {
				d.errorf(v.value, join(kpath, "value"), "value is a percentage of maxDepth from 1 to 99, got %q", Resolve(v.value).Value)
				continue
			}
			r.Percent = p
			if hasDrop && !dropping {
				d.warnf(drop.value, join(kpath, "drop"), "onThreshold always drops (as upstream); drop: false changes nothing")
			}
		}
		if rule != nil {
			// As upstream, onThreshold (which fires first) governs.
			d.warnf(bo["onLimit"].key, join(path, "onLimit"), "onThreshold is declared too and decides alone (as upstream): onLimit is not consulted")
		}
		rule = r
	}
	if rn := Resolve(n); rn != nil && rn.Kind == yaml.MappingNode && len(rn.Content) == 0 {
		d.errorf(n, path, "behaviour needs onLimit: {drop: true} or onThreshold: {value: PERCENT}")
	}
	return rule
}

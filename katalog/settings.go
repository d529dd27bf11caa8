package katalog

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

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
	q := &Queue{Pos: d.pos(Resolve(n))}
	if f, ok := o["behaviour"]; ok {
		q.Behaviour = d.queueBehaviour(f.value, join(path, "behaviour"))
	}
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
			d.errorf(f.value, join(path, "failureThreshold"), "failureThreshold is the share of failed reconciles (0 to 1) over which the entry reports degraded, got %q", Resolve(f.value).Value)
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

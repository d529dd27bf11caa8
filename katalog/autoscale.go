package katalog

import (
	"time"

	"gopkg.in/yaml.v3"
)

// Workload autoscaling: a workload's replicas computed on every reconcile
// from conditions, as upstream declares it on a deployments (or
// statefulSets) entry (pkg/types/types_workload_autoscale.go,
// pkg/runners/workload_autoscale.go): when scaleUp's conditions hold the
// replicas jump to its target (or grow by increment) up to max; when
// scaleDown's hold they drop to its target (or shrink by decrement) down to
// min; no two changes closer than cooldown.

// Autoscale is a workload declaration's autoscale:.
type Autoscale struct {
	Pos Pos
	// Min is the floor (nil: the replicas the workload has); Max the
	// ceiling.
	Min      *int
	Max      int
	Cooldown time.Duration
	Up, Down *ScaleRule
}

// ScaleRule is scaleUp or scaleDown: when its conditions hold, the
// replicas go to Target, or move by Step.
type ScaleRule struct {
	Pos Pos
	// Field is its path, e.g. onCreate.deployments[0].autoscale.scaleUp.
	Field    string
	When, Or *When
	Target   *int
	Step     *int
}

// DefaultCooldown separates two scale events unless cooldown says otherwise.
const DefaultCooldown = time.Minute

var (
	autoscaleKeys = []string{"min", "max", "cooldown", "scaleUp", "scaleDown"}
	scaleUpKeys   = []string{"conditions", "target", "increment"}
	scaleDownKeys = []string{"conditions", "target", "decrement"}
	scaleCondKeys = []string{"when", "or", "anyOf"}
)

// autoscale decodes a workload declaration's autoscale:.
func (d *decoder) autoscale(kind string, k, n *yaml.Node, path string) *Autoscale {
	spec := ResourceKinds[kind]
	if spec == nil || spec.Open || spec.Fields["replicas"] == nil {
		d.errorf(k, path, "autoscale: scales a workload's replicas; %s have none (it goes on deployments, statefulSets and replicaSets)", kind)
		return nil
	}
	o := d.mapping(n, path, autoscaleKeys, nil)
	a := &Autoscale{Pos: d.pos(k), Cooldown: DefaultCooldown}
	if f, ok := o["max"]; ok {
		if m, ok := d.integer(f.value, path+".max"); ok {
			a.Max = m
			if m < 1 {
				d.errorf(f.value, path+".max", "max must be at least 1, got %d", m)
			}
		}
	} else {
		d.errorf(k, path, "autoscale needs max: (the most replicas it may set)")
	}
	if f, ok := o["min"]; ok {
		if m, ok := d.integer(f.value, path+".min"); ok {
			a.Min = &m
			switch {
			case m < 0:
				d.errorf(f.value, path+".min", "min must not be negative, got %d", m)
			case a.Max > 0 && m >= a.Max:
				d.errorf(f.value, path+".min", "min (%d) must be less than max (%d)", m, a.Max)
			}
		}
	}
	a.Cooldown = d.durationKey(o, "cooldown", path, a.Cooldown, 24*time.Hour)
	if f, ok := o["scaleUp"]; ok {
		a.Up = d.scaleRule(f, path+".scaleUp", scaleUpKeys, "increment", a)
	}
	if f, ok := o["scaleDown"]; ok {
		a.Down = d.scaleRule(f, path+".scaleDown", scaleDownKeys, "decrement", a)
	}
	if a.Up == nil && a.Down == nil {
		d.errorf(k, path, "autoscale needs scaleUp: and/or scaleDown: (conditions and a target or step)")
	}
	return a
}

func (d *decoder) scaleRule(f field, path string, keys []string, step string, a *Autoscale) *ScaleRule {
	o := d.mapping(f.value, path, keys, nil)
	r := &ScaleRule{Pos: d.pos(f.key), Field: path}
	if c, ok := o["conditions"]; ok {
		co := d.mapping(c.value, path+".conditions", scaleCondKeys, nil)
		r.When, r.Or = d.gateConditions(co, path+".conditions")
	}
	if r.When.Empty() && r.Or.Empty() {
		d.errorf(f.key, path, "%s needs conditions: {when: […]} (or or: […]): without them it would fire on every reconcile", pathLast(path))
	}
	if t, ok := o["target"]; ok {
		if v, ok := d.integer(t.value, path+".target"); ok {
			r.Target = &v
			switch {
			case v < 0:
				d.errorf(t.value, path+".target", "target must not be negative, got %d", v)
			case a.Max > 0 && v > a.Max:
				d.errorf(t.value, path+".target", "target (%d) exceeds max (%d)", v, a.Max)
			case a.Min != nil && v < *a.Min:
				d.errorf(t.value, path+".target", "target (%d) is below min (%d)", v, *a.Min)
			}
		}
	}
	if s, ok := o[step]; ok {
		if v, ok := d.integer(s.value, path+"."+step); ok {
			r.Step = &v
			if v < 1 {
				d.errorf(s.value, path+"."+step, "%s must be at least 1, got %d", step, v)
			}
			if r.Target != nil {
				d.errorf(s.key, path+"."+step, "target and %s are exclusive: target jumps to a count, %s steps from the current one", step, step)
			}
		}
	}
	if r.Target == nil && r.Step == nil {
		d.errorf(f.key, path, "%s needs target: (a replica count) or %s: (a step)", pathLast(path), step)
	}
	return r
}

func pathLast(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '.' {
			return p[i+1:]
		}
	}
	return p
}

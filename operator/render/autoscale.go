package render

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/engine"
)

// Who sets a workload's replicas: the declaration (drift-corrected to what
// it says), its autoscale: (computed each reconcile from its conditions),
// or a HorizontalPodAutoscaler the katalog declares for it — then the
// replicas are the HPA's, set by the declaration only on create, never
// corrected back.

// AnnotationLastScale records on an autoscaled workload when its replicas
// last changed (RFC 3339): cooldown counts from it, across restarts.
const AnnotationLastScale = "orkestra.orkspace.io/last-scale-event"

// Scale is what a workload child's autoscale conditions say this reconcile.
type Scale struct {
	// Up and Down: whether scaleUp's and scaleDown's conditions hold.
	Up, Down bool
}

// scaleConditions evaluates a workload's autoscale conditions.
func (r *renderer) scaleConditions(c *Child) error {
	a := c.Resource.Autoscale
	if a == nil || !c.When {
		return nil
	}
	c.Scale = &Scale{}
	rules := []struct {
		r  *engine.ScaleRule
		to *bool
	}{{a.Up, &c.Scale.Up}, {a.Down, &c.Scale.Down}}
	for _, rule := range rules {
		if rule.r == nil || rule.r.When == nil {
			continue
		}
		ok, err := rule.r.When.Eval(c.scope)
		if err != nil {
			return r.errorf(rule.r.Source.Field, fmt.Errorf("evaluating %s: %w", rule.r.When.Source(), err))
		}
		*rule.to = ok
	}
	return nil
}

// hpaOwners marks the workload children a HorizontalPodAutoscaler child
// scales (its scaleTargetRef names one): their replicas are the HPA's.
// A workload with autoscale: and an HPA is an error: two owners of its
// replicas would fight.
func (r *renderer) hpaOwners(res *Result, hooks []string) error {
	workloads := map[string]*Child{}
	var hpas []*Child
	for _, h := range hooks {
		for _, c := range res.Hooks[h] {
			if !c.When {
				continue
			}
			switch {
			case c.Typed != nil && replicasField(c.Typed) != nil:
				workloads[c.GVK.Kind+"/"+c.Namespace+"/"+c.Name] = c
			case c.GVK.Group == "autoscaling" && c.GVK.Kind == "HorizontalPodAutoscaler" && c.Object != nil:
				hpas = append(hpas, c)
			}
		}
	}
	for _, hpa := range hpas {
		kind, _, _ := unstructured.NestedString(hpa.Object.Object, "spec", "scaleTargetRef", "kind")
		name, _, _ := unstructured.NestedString(hpa.Object.Object, "spec", "scaleTargetRef", "name")
		w := workloads[kind+"/"+hpa.Namespace+"/"+name]
		if w == nil {
			continue
		}
		if w.Resource.Autoscale != nil {
			return r.errorf(w.describe(), fmt.Errorf("declares autoscale:, and %s (%s) scales it too: two owners of its replicas would undo each other's changes; keep one", hpa, hpa.describe()))
		}
		// Created with its declared replicas; afterwards the HPA's (the
		// operator keeps what the workload has).
		w.ReplicasOwner = hpa.String()
	}
	return nil
}

// ScaleTo decides an autoscaled workload's replicas: current is what it
// has (live, else declared), last when they last changed, now the time.
// With scaleUp's conditions holding, current < max, and cooldown past: up
// to the target (or by the increment), at most max; else with scaleDown's:
// down to the target (or by the decrement), at least min (default: the
// current count, as upstream). Otherwise current, kept within [min, max].
// changed says a scale event happened; wait > 0 is the cooldown left when
// one was held back by it.
func ScaleTo(c *Child, current int32, last, now time.Time) (replicas int32, changed bool, wait time.Duration) {
	a := c.Resource.Autoscale.Source
	lo, hi := current, int32(a.Max)
	if a.Min != nil {
		lo = int32(*a.Min)
	}
	want := current
	switch {
	case c.Scale.Up && a.Up != nil && current < hi:
		want = step(current, a.Up.Target, a.Up.Step, 1)
		want = min(want, hi)
	case c.Scale.Down && a.Down != nil && current > lo:
		want = step(current, a.Down.Target, a.Down.Step, -1)
		want = max(want, lo)
	default:
		bounded := min(max(current, lo), hi)
		return bounded, false, 0
	}
	if want == current {
		return current, false, 0
	}
	if !last.IsZero() && now.Sub(last) < a.Cooldown {
		return min(max(current, lo), hi), false, a.Cooldown - now.Sub(last)
	}
	return want, true, 0
}

func step(current int32, target, by *int, sign int32) int32 {
	if target != nil {
		return int32(*target)
	}
	return current + sign*int32(*by)
}

// replicasField is a workload's spec.replicas; nil for other objects.
func replicasField(o client.Object) **int32 {
	switch w := o.(type) {
	case *appsv1.Deployment:
		return &w.Spec.Replicas
	case *appsv1.StatefulSet:
		return &w.Spec.Replicas
	case *appsv1.ReplicaSet:
		return &w.Spec.Replicas
	}
	return nil
}

// Replicas is a workload object's replicas (def when it says none, as the
// API server defaults it); ok is false for other objects.
func Replicas(o client.Object, def int32) (n int32, ok bool) {
	f := replicasField(o)
	if f == nil {
		return 0, false
	}
	if *f == nil {
		return def, true
	}
	return **f, true
}

// SetReplicas makes the child's object declare n replicas; at, when set,
// records a scale event (AnnotationLastScale).
func SetReplicas(c *Child, n int32, at time.Time) {
	f := replicasField(c.Typed)
	if f == nil {
		return
	}
	*f = &n
	if c.Fields == nil {
		c.Fields = map[string]any{}
	}
	c.Fields["replicas"] = int64(n)
	if !at.IsZero() {
		ann := c.Typed.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[AnnotationLastScale] = at.UTC().Format(time.RFC3339)
		c.Typed.SetAnnotations(ann)
	}
	if u, err := toUnstructured(c.Typed); err == nil {
		c.Object = u
	}
}

// DeclaredReplicas is the replicas the child's object declares (1 when it
// says none, as the API server defaults it).
func DeclaredReplicas(c *Child) int32 {
	n, _ := Replicas(c.Typed, 1)
	return n
}

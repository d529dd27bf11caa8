package operator

import (
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/operator/render"
)

// keepReplicas makes a workload child the katalog's HorizontalPodAutoscaler
// scales declare the replicas it has: an apply then neither changes them
// nor drops them (a field the apply stops sending would be removed).
func keepReplicas(c *render.Child, live client.Object) {
	if c.ReplicasOwner == "" {
		return
	}
	if n, ok := render.Replicas(live, 1); ok {
		render.SetReplicas(c, n, time.Time{})
	}
}

// autoscale sets an autoscaled workload child's replicas for this
// reconcile (render.ScaleTo) from its live object (nil: it is to be
// created, from its declared replicas): a scale event stamps the time on
// it, and a change held back by cooldown brings the reconcile back when
// the cooldown ends. It returns the event's note ("" when none), to be
// reported once written.
func (a *applier) autoscale(c *render.Child, live client.Object) string {
	if c.Scale == nil {
		return ""
	}
	current := render.DeclaredReplicas(c)
	var last time.Time
	if live != nil {
		current, _ = render.Replicas(live, current)
		if t, err := time.Parse(time.RFC3339, live.GetAnnotations()[render.AnnotationLastScale]); err == nil {
			last = t
		}
	}
	n, changed, wait := render.ScaleTo(c, current, last, a.now)
	var at time.Time
	note := ""
	if changed {
		at = a.now
		note = fmt.Sprintf("scaled %s from %d to %d replicas (autoscale)", c, current, n)
	}
	render.SetReplicas(c, n, at)
	if wait > 0 && (a.requeueAfter == 0 || wait < a.requeueAfter) {
		a.requeueAfter = wait
	}
	return note
}

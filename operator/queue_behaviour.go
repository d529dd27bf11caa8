package operator

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// dropped reports whether queue.behaviour drops this event of the custom
// resource u: the queue holds its rule's share of maxDepth and the rule's
// condition holds (upstream's evaluateQueueBehaviour). The resource is then
// reconciled on its next change or resync. An event of a resource being
// deleted is never dropped: its finalizer would wait until the resync.
func (e *entryController) dropped(u *unstructured.Unstructured) bool {
	d := e.entry.QueueDrop
	if d == nil || u.GetDeletionTimestamp() != nil {
		return false
	}
	maxDepth, depth := e.queueSettings().MaxDepth, e.queueDepth()
	drop, err := d.Drops(depth, maxDepth, u.Object)
	if err != nil {
		e.log.Info("queue.behaviour: the condition cannot be evaluated; the event is queued", "object", client.ObjectKeyFromObject(u).String(), "rule", d.Source.Path, "error", err.Error())
		return false
	}
	if drop {
		e.log.Info("queue.behaviour: event dropped; the custom resource is reconciled on its next change or resync", "object", client.ObjectKeyFromObject(u).String(), "depth", depth, "maxDepth", maxDepth, "rule", d.Source.Path)
	}
	return drop
}

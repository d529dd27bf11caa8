package engine

import "github.com/orkspace/orkestra-cel/katalog"

// QueueDrop is a compiled queue.behaviour.
type QueueDrop struct {
	Source *katalog.QueueBehaviour
	// When must hold for an event to be dropped; nil: always.
	When Condition
}

// Drops reports whether a new event of obj is dropped while the work queue
// holds depth objects of maxDepth. A condition that cannot be evaluated
// keeps the event (err says why): nothing is dropped on a guess.
func (q *QueueDrop) Drops(depth, maxDepth int, obj map[string]any) (bool, error) {
	if q == nil || maxDepth <= 0 || depth*100 < q.Source.Percent*maxDepth {
		return false, nil
	}
	if q.When == nil {
		return true, nil
	}
	return q.When.Eval(NewScope(obj))
}

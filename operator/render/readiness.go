package render

import (
	"github.com/orkspace/orkestra-cel/engine"
)

// Ready evaluates the child's readyWhen (engine.Resource.ReadyWhen) over
// obj, the child as observed: self is obj, and a forEach child's item reads
// as in its other expressions. A child without readyWhen is ready.
func (c *Child) Ready(obj map[string]any) (bool, error) {
	cond := c.Resource.ReadyWhen
	if cond == nil {
		return true, nil
	}
	s := engine.NewScope(obj)
	if fe := c.Resource.ForEach; fe != nil && c.item != nil {
		s = fe.Scope(s, *c.item)
	}
	return cond.Eval(s)
}

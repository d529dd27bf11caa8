package render

import (
	"github.com/orkspace/orkestra-cel/engine"
)

// Ready evaluates the child's readyWhen (engine.Resource.ReadyWhen) over
// obj, the child as observed: self is obj, and a forEach child's item and a
// motif's inputs read as in its other expressions. A child without readyWhen is ready.
func (c *Child) Ready(obj map[string]any) (bool, error) {
	cond := c.Resource.ReadyWhen
	if cond == nil {
		return true, nil
	}
	s := engine.NewScope(obj)
	if c.Resource.Inputs != nil && c.scope != nil {
		// The inputs were evaluated over the custom resource when the child
		// was rendered; readyWhen runs over the child and reads those.
		s.Vars = map[string]any{engine.InputsVar: c.scope.Vars[engine.InputsVar]}
	}
	if fe := c.Resource.ForEach; fe != nil && c.item != nil {
		s = fe.Scope(s, *c.item)
	}
	return cond.Eval(s)
}

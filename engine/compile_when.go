package engine

import (
	"fmt"

	"github.com/orkspace/orkestra-cel/katalog"
)

// conditions compiles when (all must hold) and or (any must hold) into one
// condition, nil when there is none.
func (c *compiler) conditions(e *katalog.CRDEntry, when, or *katalog.When, base string) Condition {
	var parts []Condition
	if !when.Empty() {
		if cond := c.when(e, when, true, base+".when"); cond != nil {
			parts = append(parts, cond)
		}
	}
	if !or.Empty() {
		if cond := c.when(e, or, false, base+".or"); cond != nil {
			parts = append(parts, cond)
		}
	}
	switch len(parts) {
	case 0:
		return nil
	case 1:
		return parts[0]
	}
	return &allOf{parts: parts, pos: parts[0].Pos()}
}

func (c *compiler) when(e *katalog.CRDEntry, w *katalog.When, all bool, field string) Condition {
	var parts []Condition
	for i, x := range w.Exprs {
		f := field
		if len(w.Exprs)+len(w.Conditions) > 1 {
			f = fmt.Sprintf("%s[%d]", field, i)
		}
		if x.Kind != katalog.StringValue {
			c.errorf(x.Pos, f, "a condition must be a CEL string such as \"self.spec.enabled\", got %s %s", x.Kind, x.Str)
			continue
		}
		ctx := &Context{Entry: c.entry, Field: f, Pos: x.ContentPos(), Self: c.selfFor(Classify(x.Str), c.view), SelfVersion: e.APITypes.Version, CostLimit: c.opts.CostLimit, Vars: c.vars}
		backend := c.b.CEL
		switch Classify(x.Str) {
		case Legacy:
			backend = c.b.Legacy
		case Mixed:
			c.errorf(x.ContentPos(), f, "a condition may not mix ${ and {{; write it in CEL")
			continue
		}
		if backend == nil {
			c.errorf(x.ContentPos(), f, "legacy templates are not enabled in this build")
			continue
		}
		cond, diags := backend.CompileCondition(x.Str, ctx)
		c.diags = append(c.diags, diags...)
		c.exprs++
		if cond != nil {
			c.noteTimed(cond)
			parts = append(parts, cond)
		}
	}
	if len(w.Conditions) > 0 {
		if c.b.Legacy == nil {
			c.errorf(w.Pos, field, "structured conditions need the legacy adapter, which is not enabled in this build")
		} else {
			ctx := &Context{Entry: c.entry, Field: field, Pos: w.Pos, Self: c.selfFor(Legacy, c.view), SelfVersion: e.APITypes.Version, CostLimit: c.opts.CostLimit, Vars: c.vars}
			cond, diags := c.b.Legacy.CompileStructured(w.Conditions, all, ctx)
			c.diags = append(c.diags, diags...)
			c.exprs += len(w.Conditions)
			if cond != nil {
				c.noteTimed(cond)
				parts = append(parts, cond)
			}
		}
	}
	if len(parts) == 0 {
		return nil
	}
	if len(parts) == 1 {
		return parts[0]
	}
	if all {
		return &allOf{parts: parts, pos: w.Pos}
	}
	return &anyOf{parts: parts, pos: w.Pos}
}

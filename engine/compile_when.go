package engine

import (
	"fmt"

	"github.com/orkspace/orkestra-cel/katalog"
)

// conditions compiles when (all must hold) and or (any must hold) into one
// condition, nil when there is none.
func (c *compiler) conditions(sc compileScope, when, or *katalog.When, base string) Condition {
	var parts []Condition
	if !when.Empty() {
		if cond := c.when(sc, when, true, base+".when"); cond != nil {
			parts = append(parts, cond)
		}
	}
	if !or.Empty() {
		if cond := c.when(sc, or, false, base+".or"); cond != nil {
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

func (c *compiler) when(sc compileScope, w *katalog.When, all bool, field string) Condition {
	var parts []Condition
	for i, x := range w.Exprs {
		f := field
		if len(w.Exprs)+len(w.Conditions) > 1 {
			f = fmt.Sprintf("%s[%d]", field, i)
		}
		if x.Kind != katalog.StringValue {
			c.errorf(sc, x.Pos, f, "a condition must be a CEL string such as \"self.spec.enabled\", got %s %s", x.Kind, x.Str)
			continue
		}
		ctx := sc.context(Classify(x.Str), f, x.ContentPos(), c.opts.CostLimit)
		backend := c.b.CEL
		switch Classify(x.Str) {
		case Legacy:
			backend = c.b.Legacy
		case Mixed:
			c.errorf(sc, x.ContentPos(), f, "a condition may not mix ${ and {{; write it in CEL")
			continue
		}
		if backend == nil {
			c.errorf(sc, x.ContentPos(), f, "legacy templates are not enabled in this build")
			continue
		}
		cond, diags := backend.CompileCondition(x.Str, ctx)
		c.diags = append(c.diags, diags...)
		c.exprs++
		if cond != nil {
			sc.noteTimed(cond)
			parts = append(parts, cond)
		}
	}
	if len(w.Conditions) > 0 {
		if c.b.Legacy == nil {
			c.errorf(sc, w.Pos, field, "structured conditions need the legacy adapter, which is not enabled in this build")
		} else {
			ctx := sc.context(Legacy, field, w.Pos, c.opts.CostLimit)
			cond, diags := c.b.Legacy.CompileStructured(w.Conditions, all, ctx)
			c.diags = append(c.diags, diags...)
			c.exprs += len(w.Conditions)
			if cond != nil {
				sc.noteTimed(cond)
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

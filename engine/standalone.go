package engine

import "github.com/orkspace/orkestra-cel/katalog"

// CompileGate compiles a `when:` (all hold) and `or:` (one holds) pair
// written outside a katalog entry — an E2E spec's expectation gate — with
// the katalog's syntax and the given notes. No schema types it: `self` is
// an untyped object (evaluate it on an empty one), so its fields are the
// legacy templates of note functions and the clock conditions. nil when
// there is nothing to check.
func CompileGate(b Backends, notes []*katalog.Note, when, or *katalog.When, field string) (Condition, katalog.Diagnostics) {
	c := &compiler{b: b}
	if len(notes) > 0 {
		c.notes(&katalog.Katalog{Notes: notes})
	}
	cond := c.conditions(compileScope{}, when, or, field)
	return cond, c.diags
}

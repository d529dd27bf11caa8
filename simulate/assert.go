package simulate

import (
	"fmt"
	"strings"

	"github.com/orkspace/orkestra-cel/katalog"
)

// whatReconciled names the failure of an entry expect.crds names that
// reconciled nothing.
const whatReconciled = "reconciled"

// Failure is one expectation that does not hold.
type Failure struct {
	Entry string
	// What names the expectation: steady, steadyAt, noErrors,
	// whatReconciled, or a rule's Field.
	What    string
	Message string
	Pos     katalog.Pos
	// Ops are the ops that show why (the rule's cycle, the offending ops).
	Ops []Op
}

func (f Failure) String() string {
	return fmt.Sprintf("%s: [%s] %s: %s", f.Pos, f.Entry, f.What, f.Message)
}

// Check judges a run's result against expect. An entry is judged by its
// expect.crds block when there is one, else by the top-level block; an
// entry that reconciled no custom resource is judged only when crds names
// it.
func Check(res *Result, expect *Expect) []Failure {
	if expect == nil {
		return nil
	}
	var out []Failure
	for _, er := range res.Entries {
		ex := expect.For(er.Entry)
		_, named := expect.CRDs[er.Entry]
		if ex == nil || (len(er.Objects) == 0 && !named) {
			continue
		}
		if len(er.Objects) == 0 {
			out = append(out, Failure{Entry: er.Entry, What: whatReconciled, Pos: expect.CRDPos[er.Entry],
				Message: "the entry reconciled no custom resource: give one of its kind in spec.cr or spec.crFiles"})
			continue
		}
		out = append(out, checkEntry(er, ex)...)
	}
	return out
}

func checkEntry(er *EntryResult, ex *Expect) []Failure {
	var out []Failure
	fail := func(what string, at katalog.Pos, ops []Op, format string, args ...any) {
		out = append(out, Failure{Entry: er.Entry, What: what, Pos: at, Ops: ops, Message: fmt.Sprintf(format, args...)})
	}
	last := er.Cycles[len(er.Cycles)-1]
	if ex.Steady != nil && *ex.Steady && !er.Steady() {
		fail("steady", ex.Pos, last.Ops, "no steady state in %d cycles: every cycle's ops differ from the previous cycle's (the last cycle's are shown)", len(er.Cycles))
	}
	if ex.SteadyAt != nil && (!er.Steady() || er.SteadyAt > *ex.SteadyAt) {
		if er.Steady() {
			fail("steadyAt", ex.Pos, nil, "steady state at cycle %d, expected by cycle %d", er.SteadyAt, *ex.SteadyAt)
		} else {
			fail("steadyAt", ex.Pos, last.Ops, "no steady state in %d cycles, expected by cycle %d", len(er.Cycles), *ex.SteadyAt)
		}
	}
	if ex.NoErrors {
		for _, c := range er.Cycles {
			for _, err := range c.Errors {
				fail("noErrors", ex.Pos, nil, "cycle %d: the reconcile failed: %v", c.N, err)
			}
		}
	}
	for _, r := range ex.Ops {
		matched := r.matching(er)
		want := max(r.Count, 1)
		if len(matched) >= want {
			continue
		}
		var shown []Op
		if r.Cycle > 0 {
			shown = er.Cycles[r.Cycle-1].Ops
		}
		if len(matched) == 0 {
			fail(r.Field, r.Pos, shown, "no op matches %s", r)
		} else {
			fail(r.Field, r.Pos, shown, "%d op(s) match %s, want at least %d", len(matched), r, want)
		}
	}
	for _, r := range ex.Absent {
		if matched := r.matching(er); len(matched) > 0 {
			fail(r.Field, r.Pos, matched, "expected no op matching %s, found %d", absentString(r), len(matched))
		}
	}
	return out
}

// matching returns the entry's ops the rule matches.
func (r Rule) matching(er *EntryResult) []Op {
	var out []Op
	for _, c := range er.Cycles {
		if r.Cycle > 0 && c.N != r.Cycle {
			continue
		}
		for _, op := range c.Ops {
			if r.matches(op) {
				out = append(out, op)
			}
		}
	}
	return out
}

// matches: an op of the rule's cycle (any, without one); create matches an op that brought its object into existence
// (create, or an apply that created); get and list match the reads, found
// or not; every other verb matches the writes that happened. An absent
// rule without a verb matches any write. The resource is the plural (the
// object itself), plural/status, or status (any status write).
func (r Rule) matches(op Op) bool {
	if r.Cycle > 0 && op.Cycle != r.Cycle {
		return false
	}
	switch r.Verb {
	case "":
		if !op.write() {
			return false
		}
	case "create":
		if !op.Created {
			return false
		}
	case "get", "list":
		if op.Verb != r.Verb {
			return false
		}
	default:
		if op.Verb != r.Verb || op.Failed {
			return false
		}
	}
	switch {
	case r.Resource == "status":
		if op.Subresource != "status" {
			return false
		}
	case strings.Contains(r.Resource, "/"):
		if op.Resource+"/"+op.Subresource != r.Resource {
			return false
		}
	case op.Resource != r.Resource || op.Subresource != "":
		return false
	}
	return r.Name == "" || op.Name == r.Name
}

func absentString(r Rule) string {
	if r.Verb == "" {
		r.Verb = "any write:"
	}
	return r.String()
}

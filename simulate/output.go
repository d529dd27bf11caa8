package simulate

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// The output follows upstream's: per entry, each cycle's writes (`+`
// created, `~` updated, patched or applied, `-` deleted) and errors (`✗`),
// cycles without either skipped, identical consecutive cycles collapsed;
// then the steady state, each expectation ✓ or ✗, PASS or FAIL.

// printEntry prints one entry's cycles and steady state.
func printEntry(w io.Writer, er *EntryResult, cycles int, elapsed time.Duration) {
	objs := "no custom resource"
	if len(er.Objects) > 0 {
		objs = strings.Join(er.Objects, ", ")
	}
	fmt.Fprintf(w, "Simulating %s: %s\n", er.Entry, objs)
	for _, n := range er.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	fmt.Fprintln(w)
	prev, repeatFrom, repeatTo := "", 0, 0
	flush := func() {
		switch {
		case repeatFrom > 0 && repeatFrom == repeatTo:
			fmt.Fprintf(w, "  (cycle %d: identical)\n", repeatFrom)
		case repeatFrom > 0:
			fmt.Fprintf(w, "  (cycles %d–%d: identical)\n", repeatFrom, repeatTo)
		}
		repeatFrom = 0
	}
	for _, c := range er.Cycles {
		lines := cycleLines(c)
		if len(lines) == 0 {
			continue
		}
		key := strings.Join(lines, "\n")
		if key == prev && len(c.Errors) == 0 {
			if repeatFrom == 0 {
				repeatFrom = c.N
			}
			repeatTo = c.N
			continue
		}
		flush()
		prev = key
		fmt.Fprintf(w, "  Cycle %d:\n", c.N)
		for _, l := range lines {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
	flush()
	if er.Steady() {
		fmt.Fprintf(w, "\n  ✓ Steady state at cycle %d in %s\n\n", er.SteadyAt, elapsed.Round(time.Millisecond))
	} else {
		fmt.Fprintf(w, "\n  ~ Max cycles reached (%d) in %s\n\n", cycles, elapsed.Round(time.Millisecond))
	}
}

// cycleLines are a cycle's writes, one line per object (an object created
// and written again in one cycle shows as created), then its errors.
func cycleLines(c Cycle) []string {
	type line struct {
		path    string
		created bool
		deleted bool
	}
	var order []*line
	byPath := map[string]*line{}
	for _, op := range c.Ops {
		if !op.write() {
			continue
		}
		l, ok := byPath[op.path()]
		if !ok {
			l = &line{path: op.path()}
			byPath[op.path()] = l
			order = append(order, l)
		}
		l.created = l.created || op.Created
		l.deleted = l.deleted || op.Verb == "delete"
	}
	out := make([]string, 0, len(order)+len(c.Errors))
	for _, l := range order {
		icon := "~"
		switch {
		case l.created:
			icon = "+"
		case l.deleted:
			icon = "-"
		}
		out = append(out, icon+" "+l.path)
	}
	for _, err := range c.Errors {
		out = append(out, "✗ "+err.Error())
	}
	return out
}

// printChecks prints each expectation of ex for the entry, ✓ or ✗, with
// the failures' reasons and the ops that show them, then PASS or FAIL.
func printChecks(w io.Writer, ex *Expect, failures []Failure) {
	failed := map[string][]Failure{}
	for _, f := range failures {
		failed[f.What] = append(failed[f.What], f)
	}
	mark := func(what, label string) {
		fs := failed[what]
		if len(fs) == 0 {
			fmt.Fprintf(w, "  ✓ %s\n", label)
			return
		}
		fmt.Fprintf(w, "  ✗ %s\n", label)
		for _, f := range fs {
			fmt.Fprintf(w, "      %s: %s\n", f.Pos, f.Message)
			printOps(w, f.Ops)
		}
	}
	if ex.Steady != nil && *ex.Steady {
		mark("steady", "steady")
	}
	if ex.SteadyAt != nil {
		mark("steadyAt", fmt.Sprintf("steady by cycle %d", *ex.SteadyAt))
	}
	if ex.NoErrors {
		mark("noErrors", "noErrors")
	}
	for _, r := range ex.Ops {
		mark(r.Field, r.String())
	}
	for _, r := range ex.Absent {
		mark(r.Field, "absent: "+absentString(r))
	}
	if len(failed[whatReconciled]) > 0 {
		mark(whatReconciled, "reconciled a custom resource")
	}
	if len(failures) > 0 {
		fmt.Fprintf(w, "\n  FAIL\n\n")
	} else {
		fmt.Fprintf(w, "\n  PASS\n\n")
	}
}

// printOps lists ops, reads included, one per line.
func printOps(w io.Writer, ops []Op) {
	if len(ops) == 0 {
		return
	}
	fmt.Fprintf(w, "      ops:\n")
	for _, op := range ops {
		note := ""
		switch {
		case op.Created && op.Verb != "create":
			note = " (created)"
		case op.Failed:
			note = " (failed)"
		}
		ns := ""
		if op.Namespace != "" {
			ns = " in " + op.Namespace
		}
		fmt.Fprintf(w, "        cycle %d: %s %s%s%s\n", op.Cycle, op.Verb, op.path(), ns, note)
	}
}

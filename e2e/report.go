package e2e

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Status is an expectation's outcome.
type Status int

const (
	Passed Status = iota
	Failed
	// Skipped: it cannot run where the spec runs (the reason says why).
	// A skipped expectation is never counted as passed: the run exits 3.
	Skipped
	// Gated: its when:/or: does not hold, so the spec asks not to run it;
	// it does not change the exit code (upstream counts it apart too).
	Gated
)

func (s Status) mark() string {
	return [...]string{"✓", "✗", "~", "-"}[s]
}

// Case is one expectation's result (or a setup step's that failed).
type Case struct {
	Name    string
	Status  Status
	Detail  string
	Elapsed time.Duration
}

// Result is what running one spec (and its imports) showed.
type Result struct {
	Spec *Spec
	// Invalid is set when the spec, or a file it names, is invalid: nothing
	// ran.
	Invalid error
	// Where the spec ran.
	Where   string
	Cases   []Case
	Imports []*Result
	Elapsed time.Duration
}

// Exit codes of orkestra e2e.
const (
	ExitPass    = 0
	ExitFail    = 1
	ExitInvalid = 2
	ExitSkipped = 3
)

// ExitCode is the run's exit code: 2 when a spec is invalid, else 1 when
// an expectation failed, else 3 when one was skipped, else 0.
func (r *Result) ExitCode() int {
	_, f, s, inv := r.Totals()
	switch {
	case inv > 0:
		return ExitInvalid
	case f > 0:
		return ExitFail
	case s > 0:
		return ExitSkipped
	}
	return ExitPass
}

// Totals counts passed, failed and skipped expectations and invalid specs,
// imports included.
func (r *Result) Totals() (passed, failed, skipped, invalid int) {
	if r.Invalid != nil {
		invalid++
	}
	for _, c := range r.Cases {
		switch c.Status {
		case Passed:
			passed++
		case Failed:
			failed++
		case Skipped:
			skipped++
		}
	}
	for _, i := range r.Imports {
		p, f, s, inv := i.Totals()
		passed, failed, skipped, invalid = passed+p, failed+f, skipped+s, invalid+inv
	}
	return
}

// printCase prints one expectation's line as it finishes.
func printCase(w io.Writer, c Case) {
	switch c.Status {
	case Passed:
		fmt.Fprintf(w, "  %s %s (%s)\n", c.Status.mark(), c.Name, round(c.Elapsed))
	case Failed:
		fmt.Fprintf(w, "  %s %s (%s)\n%s\n", c.Status.mark(), c.Name, round(c.Elapsed), indent(c.Detail, "      "))
	case Skipped:
		fmt.Fprintf(w, "  %s %s (skipped: %s)\n", c.Status.mark(), c.Name, c.Detail)
	case Gated:
		fmt.Fprintf(w, "  %s %s (not run: %s)\n", c.Status.mark(), c.Name, c.Detail)
	}
}

// Summary prints the results of a spec, as upstream's "E2E Results" block.
func (r *Result) Summary(w io.Writer) {
	name := "?"
	if r.Spec != nil {
		name = r.Spec.Name
	}
	if r.Invalid != nil {
		fmt.Fprintf(w, "\nE2E %s: invalid\n%s\n", name, indent(r.Invalid.Error(), "  "))
		return
	}
	if len(r.Cases) > 0 {
		fmt.Fprintf(w, "\nE2E Results: %s (%s)\n\n", name, r.Where)
		for _, c := range r.Cases {
			fmt.Fprintf(w, "  %s %-48s %s\n", c.Status.mark(), c.Name, caseNote(c))
		}
	}
	p, f, s, inv := r.Totals()
	fmt.Fprintf(w, "\n  %d passed, %d failed, %d skipped", p, f, s)
	if inv > 0 {
		fmt.Fprintf(w, ", %d invalid spec(s)", inv)
	}
	fmt.Fprintf(w, " (%s)\n", round(r.Elapsed))
}

func caseNote(c Case) string {
	switch c.Status {
	case Skipped:
		return "skipped: " + c.Detail
	case Gated:
		return "not run: " + c.Detail
	}
	return "(" + round(c.Elapsed).String() + ")"
}

func round(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

package migrate

import (
	"fmt"
	"io"
	"strings"
	"time"

	sigsyaml "sigs.k8s.io/yaml"
)

// Summary is the one-line outcome.
func (r *Result) Summary() string {
	s := fmt.Sprintf("translated %d, left %d, verified against %d objects (%d comparisons)", len(r.Translated), len(r.Left), r.Objects, r.Evaluations)
	if n := len(r.Mismatches); n > 0 {
		s += fmt.Sprintf("; %d translation(s) NOT equivalent", n)
	}
	return s
}

// where names an item: file:line:col: [entry] field.
func where(it *Item, p fmt.Stringer) string {
	s := p.String() + ": "
	if it.Entry != "" {
		s += "[" + it.Entry + "] "
	}
	if it.Field != "" {
		s += it.Field + ": "
	}
	return s
}

// WriteReport writes what stays legacy (with why), the notes, and every
// translation that is not equivalent (with the differing object).
func (r *Result) WriteReport(w io.Writer) {
	if len(r.Left) > 0 {
		fmt.Fprintf(w, "left as legacy (%d):\n", len(r.Left))
		for _, it := range r.Left {
			fmt.Fprintf(w, "  %s%s\n      %s\n", where(it, it.ReasonPos), it.Reason, oneLine(it.Legacy))
			if it.Rewritten != "" {
				fmt.Fprintf(w, "      rewritten with default in the pipe form: %s\n", oneLine(it.Rewritten))
			}
		}
	}
	for _, m := range r.Mismatches {
		fmt.Fprint(w, m.String())
	}
	for _, d := range r.Check {
		fmt.Fprintf(w, "migrated katalog: %s\n", d.Error())
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// WriteTranslations lists every translation, old → new.
func (r *Result) WriteTranslations(w io.Writer) {
	for _, it := range r.Translated {
		fmt.Fprintf(w, "  %s%s\n      → %s\n", where(it, it.Pos), oneLine(it.Legacy), it.CEL)
	}
}

func (m *Mismatch) String() string {
	var b strings.Builder
	it := m.Item
	fmt.Fprintf(&b, "%sthe translation is NOT equivalent\n", where(it, it.Pos))
	fmt.Fprintf(&b, "  legacy: %s\n  cel:    %s\n", oneLine(it.Legacy), it.CEL)
	y, err := sigsyaml.Marshal(m.Object)
	if err != nil {
		y = []byte(fmt.Sprint(m.Object))
	}
	how := ""
	if m.Defaulted {
		how = "; evaluated with the schema's defaults applied, as the operator sees it"
	}
	fmt.Fprintf(&b, "  on this object (shrunk from %s%s):\n", m.Source, how)
	for _, l := range strings.Split(strings.TrimRight(string(y), "\n"), "\n") {
		fmt.Fprintf(&b, "    %s\n", l)
	}
	if !m.At.IsZero() {
		fmt.Fprintf(&b, "  at %s (the expressions read the clock)\n", m.At.Format(time.RFC3339))
	}
	fmt.Fprintf(&b, "  legacy gives: %s\n  cel gives:    %s\n", m.Legacy, m.CEL)
	if m.Invalid != "" {
		fmt.Fprintf(&b, "  note: the API server would reject this object (%s); the translation relies on the schema\n", oneLine(m.Invalid))
	}
	return b.String()
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

package katalog

import (
	"fmt"
	"strings"
)

// Pos is a position in a katalog source file. Line and Col are 1-based; a zero
// Pos means "no position known" (values synthesised by the loader).
type Pos struct {
	File string
	Line int
	Col  int
}

func (p Pos) String() string {
	if p.Line == 0 {
		if p.File == "" {
			return "<unknown>"
		}
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// IsZero reports whether the position is unknown.
func (p Pos) IsZero() bool { return p.Line == 0 && p.File == "" }

// Offset returns the position n columns to the right, for pointing inside a
// scalar (an expression inside a string). It is exact for plain and quoted
// scalars that do not span lines.
func (p Pos) Offset(n int) Pos {
	if p.Line == 0 {
		return p
	}
	p.Col += n
	return p
}

// Severity of a diagnostic.
type Severity int

const (
	Error Severity = iota
	Warning
	// Acknowledged: a finding the katalog declares it accepts, with its
	// reason in Diagnostic.Reason (a conversion path's mayFail). It is
	// listed, and fails nothing.
	Acknowledged
)

// Diagnostic is one problem found while loading or compiling a katalog. It
// prints as `file:line:col: [entry] field: message` so that editors and CI
// logs can jump to it.
type Diagnostic struct {
	Pos      Pos
	Severity Severity
	Entry    string // CRD entry name, when known
	Field    string // field path inside the entry, e.g. operatorBox.onReconcile.deployments[0].image
	Message  string
	// Reason is why the katalog accepts an Acknowledged finding.
	Reason string
	// owner is the entry whose decoding reported it, so that the
	// diagnostics of an entry a Komposer override replaces go with it.
	owner *CRDEntry
}

func (d Diagnostic) Error() string {
	var b strings.Builder
	b.WriteString(d.Pos.String())
	b.WriteString(": ")
	switch d.Severity {
	case Warning:
		b.WriteString("warning: ")
	case Acknowledged:
		b.WriteString("acknowledged: ")
	}
	if d.Entry != "" {
		b.WriteString("[")
		b.WriteString(d.Entry)
		b.WriteString("] ")
	}
	if d.Field != "" {
		b.WriteString(d.Field)
		b.WriteString(": ")
	}
	b.WriteString(d.Message)
	if d.Reason != "" {
		fmt.Fprintf(&b, " (mayFail: %q)", d.Reason)
	}
	return b.String()
}

// Diagnostics is a list of problems; as an error it prints one per line.
type Diagnostics []Diagnostic

func (ds Diagnostics) Error() string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.Error()
	}
	return strings.Join(lines, "\n")
}

// Errors returns only the error-severity diagnostics.
func (ds Diagnostics) Errors() Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		if d.Severity == Error {
			out = append(out, d)
		}
	}
	return out
}

// Warnings returns only the warning-severity diagnostics.
func (ds Diagnostics) Warnings() Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		if d.Severity == Warning {
			out = append(out, d)
		}
	}
	return out
}

// Acknowledged returns only the acknowledged diagnostics.
func (ds Diagnostics) Acknowledged() Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		if d.Severity == Acknowledged {
			out = append(out, d)
		}
	}
	return out
}

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool { return len(ds.Errors()) > 0 }

// Err returns the diagnostics as an error when any is an error, else nil.
func (ds Diagnostics) Err() error {
	if e := ds.Errors(); len(e) > 0 {
		return e
	}
	return nil
}

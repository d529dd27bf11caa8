// Package simulate runs Simulate specs (upstream Orkestra's `kind:
// Simulate`, simulate.yaml): a katalog's real reconcilers, compiled plan and
// all, run cycle by cycle against a cluster held in memory (or a real API
// server), every client call recorded as an op, the ops and the steady state
// judged against the spec's expectations.
package simulate

import (
	"fmt"
	"strings"

	"github.com/orkspace/orkestra-cel/katalog"
)

// DefaultCycles is how many reconcile cycles a spec runs without cycles:.
const DefaultCycles = 10

// Spec is one Simulate document: a run (Run), a suite of other specs
// (Imports), or both.
type Spec struct {
	// File is the spec's path.
	File        string
	Name        string
	Description string
	// Imports are the specs of a suite, resolved paths in order.
	Imports []Import
	// Run is what spec: declares; nil for a pure suite.
	Run *Run
}

// Import is one entry of a suite's imports:.
type Import struct {
	Path string
	Pos  katalog.Pos
}

// Run is a spec's spec: block.
type Run struct {
	// Katalog is the katalog (or Komposer) file or directory.
	Katalog string
	// CRs are the files of the custom resources (and any other objects) the
	// cluster starts with: cr then crFiles.
	CRs []string
	// CRDs are CRD manifests: schemas for entries without crdFile, and
	// kinds the cluster serves (custom children): crd then crdFiles.
	CRDs         []string
	Cycles       int
	SkipExternal bool
	// Expect is nil when the spec only prints the ops.
	Expect *Expect
	Pos    katalog.Pos
}

// Expect is an expect: block, or one of its crds: entries.
type Expect struct {
	Steady   *bool
	SteadyAt *int
	NoErrors bool
	Ops      []Rule
	Absent   []Rule
	// CRDs replace the whole block for the entries they name.
	CRDs map[string]*Expect
	// CRDPos is where each crds: key stands.
	CRDPos map[string]katalog.Pos
	Pos    katalog.Pos
}

// Rule is one ops: or absent: rule, includes expanded.
type Rule struct {
	// Cycle is the cycle the rule looks at; 0: any cycle.
	Cycle    int
	Verb     string
	Resource string
	Name     string
	// Count is how many matching ops an ops: rule needs (0: at least one).
	Count int
	// Field names the rule for messages: expect.ops[2], or
	// expect.ops[1] (ops/base.yaml ops[0]) for an included one.
	Field string
	Pos   katalog.Pos
}

// Verbs a rule may name. create matches an op that brought its object into
// existence (a create, or a server-side apply that created); apply matches
// any server-side apply.
var Verbs = []string{"create", "apply", "update", "patch", "delete", "get", "list"}

func (r Rule) String() string {
	var b strings.Builder
	if r.Cycle > 0 {
		fmt.Fprintf(&b, "cycle %d: ", r.Cycle)
	} else {
		b.WriteString("any cycle: ")
	}
	if r.Verb != "" {
		b.WriteString(r.Verb)
	} else {
		b.WriteString("any verb")
	}
	res, sub, _ := strings.Cut(r.Resource, "/")
	b.WriteString(" " + res)
	if r.Name != "" {
		b.WriteString("/" + r.Name)
	}
	if sub != "" {
		b.WriteString("/" + sub)
	}
	if r.Count > 0 {
		fmt.Fprintf(&b, " (at least %d)", r.Count)
	}
	return b.String()
}

// For returns the expectations of the entry named entry: its crds: block
// when there is one (it replaces the top-level block), else the top level.
func (e *Expect) For(entry string) *Expect {
	if e == nil {
		return nil
	}
	if sub, ok := e.CRDs[entry]; ok {
		return sub
	}
	return e
}

// InvalidError is a spec that cannot run as written: every problem, with
// its position and what to fix.
type InvalidError struct {
	Problems katalog.Diagnostics
}

func (e *InvalidError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, d := range e.Problems {
		lines[i] = d.Error()
	}
	return strings.Join(lines, "\n")
}

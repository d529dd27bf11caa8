package conformance

import (
	"fmt"
	"strings"
	"time"

	"github.com/orkspace/orkestra-cel/katalog"
)

// CompileFailure returns the report of a katalog that does not load: one
// failing static/compile check listing its errors (`file:line:col:
// message`; warnings are left out), for the CLI's summary and JUnit file.
func CompileFailure(file string, diags katalog.Diagnostics, took time.Duration) *Report {
	c := Check{Group: GroupStatic, Name: "compile", Duration: took}
	for _, d := range diags.Errors() {
		c.Failures = append(c.Failures, Failure{Message: d.Error(), Field: d.Field})
	}
	if len(c.Failures) == 0 {
		c.Failures = []Failure{{Message: "the katalog does not load"}}
	}
	c.Cases, c.Failed = len(c.Failures), len(c.Failures)
	c.Note = fmt.Sprintf("%d problems; nothing else could run", c.Failed)
	return &Report{Katalog: file, Checks: []Check{c}, Duration: took}
}

// compileCheck is static/compile: the katalog compiles as `check --strict`
// compiles it. Every error of Options.Diagnostics fails it, and so does
// every finding of a conversion path that does not declare mayFail (an
// expression that can fail on an object its source schema accepts),
// whatever severity the plan was compiled with; each is listed. The CRDs
// whose conversion did not compile are taken out of r.crds: the other
// checks run on the rest.
func (r *runner) compileCheck() {
	c := r.begin(GroupStatic, "compile")
	defer r.end(c)
	seen := map[string]bool{}
	fail := func(d katalog.Diagnostic) {
		d.Severity = katalog.Error
		if msg := d.Error(); !seen[msg] {
			seen[msg] = true
			c.Failed++
			c.Failures = append(c.Failures, Failure{Message: msg, Field: d.Field})
		}
	}
	for _, d := range r.opts.Diagnostics.Errors() {
		fail(d)
	}
	acked, ackedPaths := 0, 0
	var skipped []string
	kept := r.crds[:0]
	for _, ci := range r.crds {
		broken := false
		if ci.conv != nil {
			for _, p := range sortedPaths(ci.conv) {
				broken = broken || p.CompileFailed
				if p.MayFail() != "" {
					ackedPaths++
					acked += len(p.Findings)
					continue
				}
				for _, f := range p.Findings {
					fail(f)
				}
			}
		}
		if broken {
			skipped = append(skipped, ci.name)
			continue
		}
		kept = append(kept, ci)
	}
	r.crds = kept
	c.Cases = max(1, c.Failed)
	s := r.plan.Stats
	notes := []string{fmt.Sprintf("%d entries, %d expressions, %d conversion paths", s.Entries, s.Expressions, s.Paths)}
	if ackedPaths > 0 {
		notes = append(notes, fmt.Sprintf("%s may fail (mayFail), %s", plural(ackedPaths, "path", "paths"), plural(acked, "acknowledged finding", "acknowledged findings")))
	}
	if len(skipped) > 0 {
		notes = append(notes, fmt.Sprintf("the conversion of %s does not compile: no other check ran on it", strings.Join(skipped, ", ")))
	}
	c.Note = strings.Join(notes, "; ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

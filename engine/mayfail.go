package engine

import (
	"fmt"

	"github.com/orkspace/orkestra-cel/katalog"
)

// pathFindings classifies the findings of one conversion path: where its
// expressions can fail on an object the source schema accepts. The backends
// report them Acknowledged (Context.TotalSeverity); they stay so, with the
// reason, when the path declares mayFail, and are warnings — errors with
// StrictTotality — otherwise. diags are the diagnostics the path's
// compilation added; they are updated in place.
//
// A mayFail on a path without findings is a warning (an error with
// StrictTotality): it acknowledges nothing today and would acknowledge,
// unseen, a failure a later edit brings in.
func (c *compiler) pathFindings(p *Path, entry string, diags katalog.Diagnostics) {
	p.CompileFailed = diags.HasErrors() // findings are not errors yet
	reason := p.MayFail()
	sev := katalog.Warning
	if c.opts.StrictTotality {
		sev = katalog.Error
	}
	for i := range diags {
		d := &diags[i]
		if d.Severity != katalog.Acknowledged {
			continue
		}
		if reason != "" {
			d.Reason = reason
		} else {
			d.Severity = sev
			d.Message += fmt.Sprintf(`; or declare that the path may fail: mayFail: "why" on conversion.paths[%d]`, p.Source.Index)
		}
		p.Findings = append(p.Findings, *d)
	}
	if reason == "" || len(p.Findings) > 0 || p.CompileFailed {
		return
	}
	c.diags = append(c.diags, katalog.Diagnostic{
		Pos: p.Source.MayFailPos, Severity: sev, Entry: entry,
		Field: fmt.Sprintf("conversion.paths[%d].mayFail", p.Source.Index),
		Message: fmt.Sprintf("the path from %s to %s declares mayFail, but none of its expressions can fail on an object the %s schema accepts (check --strict finds nothing to acknowledge); remove mayFail, so that a failure a later edit brings in is reported",
			p.From, p.To, p.From),
	})
}

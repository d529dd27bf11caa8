package gotmpl

import (
	"regexp"
	"strconv"
	"strings"
)

// Upstream's katalogs read keys with dashes as plain field chains:
// `{{ allReplicasReady .children.deployments.my-service-medium }}`
// (examples/use-cases/profiles), where text/template knows only
// identifiers. A dash right after an identifier character never lexes in
// text/template (there is no arithmetic), so such a chain has no other
// reading: Parse rewrites each one to index calls before parsing —
// `(index .children.deployments "my-service-medium")` — which read a map
// key as the chain would (a missing key is the zero value).

// dashedChain is a field chain with at least one segment holding a dash
// between identifier characters; group 1 is what it starts from (a
// variable, or nothing for the dot).
var dashedChain = regexp.MustCompile(`(\$[A-Za-z0-9_]*)?((?:\.[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*)+)`)

// rewriteDashes returns src with every dashed field chain inside an action
// rewritten to index calls; src itself when there is none.
func rewriteDashes(src string) string {
	if !strings.Contains(src, "-") {
		return src
	}
	var b strings.Builder
	last := 0
	for _, a := range scanActions(src) {
		if a.comment {
			continue
		}
		end := a.end
		if a.closed {
			end -= 2
		}
		// Unquoted runs of the action's text.
		p := a.innerStart
		for p < end {
			q := p
			for q < end && src[q] != '"' && src[q] != '`' && src[q] != '\'' {
				q++
			}
			b.WriteString(src[last:p])
			b.WriteString(rewriteRun(src, p, q))
			last = q
			if q >= end {
				break
			}
			// Skip the quoted literal as written.
			c, r := src[q], q+1
			for r < end && src[r] != c {
				if src[r] == '\\' && c != '`' {
					r++
				}
				r++
			}
			p = min(r+1, end)
		}
	}
	b.WriteString(src[last:])
	return b.String()
}

// rewriteRun rewrites the dashed chains of src[from:to], a run of action
// text outside quotes.
func rewriteRun(src string, from, to int) string {
	run := src[from:to]
	locs := dashedChain.FindAllStringSubmatchIndex(run, -1)
	if locs == nil {
		return run
	}
	var b strings.Builder
	last := 0
	for _, m := range locs {
		start := m[0]
		// A chain starts the word: not in the middle of an identifier or
		// after a closing parenthesis (a chain on a pipeline's result).
		if start > 0 && (isIdent(run[start-1]) || run[start-1] == ')' || run[start-1] == '.') {
			continue
		}
		chain := run[m[4]:m[5]]
		if !strings.Contains(chain, "-") {
			continue
		}
		base := ""
		if m[2] >= 0 {
			base = run[m[2]:m[3]]
		}
		b.WriteString(run[last:start])
		b.WriteString(indexChain(base, strings.Split(chain[1:], ".")))
		last = m[1]
	}
	b.WriteString(run[last:])
	return b.String()
}

// indexChain writes base.seg1.seg2… with every dashed segment read by
// index.
func indexChain(base string, segs []string) string {
	expr := base
	for _, s := range segs {
		if !strings.Contains(s, "-") {
			expr += "." + s
			continue
		}
		if expr == "" {
			expr = "."
		}
		expr = "(index " + expr + " " + strconv.Quote(s) + ")"
	}
	return expr
}

func isIdent(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

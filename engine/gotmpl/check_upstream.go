package gotmpl

import (
	"fmt"
	"text/template/parse"
)

// floatWarning: the original's /convert decoded numbers as float64, so an
// integer printed from one million on in exponent form (1e+06) and
// compared with an integer literal failed.
func (c *checker) floatWarning(off int, a argInfo) {
	if !c.conversion || c.floatWarned || !a.fieldLike {
		return
	}
	c.floatWarned = true
	c.warn(off, fmt.Sprintf("%s is an integer here; the original engine's /convert decoded numbers as float64, so it printed as 1e+06 from one million on and compared with an integer failed; this runtime keeps it an integer", a.node))
}

// argText is an argument as written in a call (a pipeline in parentheses).
func argText(n parse.Node) string {
	if _, ok := n.(*parse.PipeNode); ok {
		return "(" + n.String() + ")"
	}
	return n.String()
}

// isIntegerArg: an argument known to be an integer (an integer field, or a
// function returning one).
func isIntegerArg(a argInfo) bool {
	if a.intResult {
		return true
	}
	return a.fieldLike && a.known && a.sh.s != nil && a.sh.s.Type == "integer"
}

// mayBeInteger: a value of the object whose schema leaves room for an
// integer — no schema, no type (x-kubernetes-preserve-unknown-fields,
// int-or-string) or a number.
func mayBeInteger(a argInfo) bool {
	if !a.fieldLike || !a.known {
		return false
	}
	s := a.sh.s
	return s == nil && !a.sh.root || s != nil && (s.Type == "" || s.Type == "number")
}

package gotmpl

import (
	"fmt"
	"text/template/parse"
)

// upstreamDifferences warns where the original engine computed a different
// value, by a defect this runtime does not copy (issue 18 item 6).
func (c *checker) upstreamDifferences(id *parse.IdentifierNode, cmd *parse.CommandNode, args []argInfo, piped *argInfo) {
	all := args
	if piped != nil {
		all = append(append([]argInfo(nil), args...), *piped)
	}
	switch id.Ident {
	case "ternary":
		// Only where the original read the object's integers as int64:
		// its /convert decoded them as float64, whose 0 it held false.
		if len(args) == 0 || c.conversion {
			break
		}
		a := argText(args[0].node)
		switch {
		case isIntegerArg(args[0]):
			c.warn(int(id.Pos), fmt.Sprintf("ternary reads the integer %s as false when it is 0, as Go and the original's docs do; the original engine read every integer, 0 included, as true (its truthiness compared an int64 with an int); write ternary (ne %s 0) … to mean the same in both", a, a))
		case mayBeInteger(args[0]):
			c.warn(int(id.Pos), fmt.Sprintf("ternary reads %s, which the schema lets hold an integer, as false when it is the integer 0, as Go and the original's docs do; the original engine read every integer, 0 included, as true (its truthiness compared an int64 with an int); give the field a type (a boolean or a string reads the same in both; for a number write ternary (ne %s 0) …)", a, a))
		}
	case "len":
		for _, a := range all {
			if isSplit(a.node) {
				c.warn(int(id.Pos), "len counts the items split returns; the original engine's len knew only the object's lists, maps and strings and gave 0 for a split result; count them another way to mean the same in both (for example with a range)")
			}
		}
	case "eq", "ne", "lt", "le", "gt", "ge":
		for _, a := range all {
			if isIntegerArg(a) {
				c.floatWarning(int(id.Pos), a)
				break
			}
		}
	}
}

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

func isSplit(n parse.Node) bool {
	var cmd *parse.CommandNode
	switch x := n.(type) {
	case *parse.PipeNode:
		if len(x.Cmds) > 0 {
			cmd = x.Cmds[len(x.Cmds)-1]
		}
	case *parse.CommandNode:
		cmd = x
	}
	if cmd == nil || len(cmd.Args) == 0 {
		return false
	}
	id, ok := cmd.Args[0].(*parse.IdentifierNode)
	return ok && id.Ident == "split"
}

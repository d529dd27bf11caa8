package gotmpl

import (
	"strings"
	"text/template/parse"
	"unicode/utf8"
)

// piece is one part of a template's output: text or a value.
type piece struct {
	text   string
	isText bool
	v      val
	node   parse.Node
}

func (t *translator) pieces(list *parse.ListNode) []piece {
	var out []piece
	if list == nil {
		return nil
	}
	for _, n := range list.Nodes {
		switch x := n.(type) {
		case *parse.TextNode:
			out = append(out, piece{text: string(x.Text), isText: true, node: n})
		case *parse.ActionNode:
			if len(x.Pipe.Decl) > 0 {
				t.failf(n, "variables ({{ $x := … }}) have no CEL form here; use the expression where the variable is used")
			}
			out = append(out, piece{v: t.pipe(x.Pipe), node: n})
		case *parse.IfNode:
			out = append(out, piece{v: t.ifNode(x), node: n})
		case *parse.RangeNode:
			t.failf(n, "{{ range }} has no exact CEL form; write it with map() and join() in CEL by hand")
		case *parse.WithNode:
			t.failf(n, "{{ with }} has no exact CEL form; write it as a conditional in CEL by hand")
		case *parse.CommentNode:
		default:
			t.failf(n, "%s has no CEL form", n)
		}
	}
	return out
}

// concat is the legacy output of pieces as one CEL string expression, nil
// parts as "". Its facts describe the legacy raw output, in which a nil part
// printed as the marker "<no value>" (non-empty, no white space).
func (t *translator) concat(ps []piece) val {
	if len(ps) == 0 {
		return stringLit("")
	}
	if len(ps) == 1 {
		if ps[0].isText {
			return stringLit(ps[0].text)
		}
		v := t.str(ps[0].v, ps[0].node)
		v.nonEmpty = v.nonEmpty || ps[0].v.mayNil()
		v.nilInside = ps[0].v.nilInside || ps[0].v.mayNil()
		return v
	}
	var parts []string
	out := val{kind: vString, prec: precAdd, ascii: true, noSpace: true}
	for _, pc := range ps {
		if pc.isText {
			parts = append(parts, celString(pc.text))
			out.ascii = out.ascii && isASCII(pc.text)
			out.noSpace = out.noSpace && !strings.ContainsFunc(pc.text, isSpace)
			out.nonEmpty = out.nonEmpty || pc.text != ""
			continue
		}
		s := t.str(pc.v, pc.node)
		parts = append(parts, p(s, precAdd+1))
		ne, _ := renderFacts(pc.v)
		out.ascii = out.ascii && s.ascii
		out.noSpace = out.noSpace && s.noSpace
		out.nonEmpty = out.nonEmpty || ne || pc.v.mayNil()
		out.nilInside = out.nilInside || pc.v.mayNil() || pc.v.nilInside
		out.fails = append(out.fails, pc.v.fails...)
		out.failsOther = out.failsOther || pc.v.failsOther
	}
	out.noEdgeSpace = out.noSpace || t.edgeClean(ps, false) && t.edgeClean(ps, true)
	out.expr = strings.Join(parts, " + ")
	return out
}

// edgeClean reports that the legacy raw output of ps cannot start (or,
// with trailing, end) with white space: trimming it removes nothing.
func (t *translator) edgeClean(ps []piece, trailing bool) bool {
	for i := range ps {
		pc := ps[i]
		if trailing {
			pc = ps[len(ps)-1-i]
		}
		if pc.isText {
			if pc.text == "" {
				continue
			}
			if trailing {
				return strings.TrimRightFunc(pc.text, isSpace) == pc.text
			}
			return strings.TrimLeftFunc(pc.text, isSpace) == pc.text
		}
		t.str(pc.v, pc.node) // fails for values that do not print
		nonEmpty, noEdge := renderFacts(pc.v)
		if !noEdge {
			return false
		}
		if nonEmpty {
			return true
		}
	}
	return true
}

// markerSafe reports that trimming the CEL rendering of ps (missing values
// printed as "") gives what the legacy engine gave: it trimmed with a
// "<no value>" marker in place of each missing value and removed the
// markers afterwards, so a marker at an edge kept the white space behind
// it. That cannot happen when, from each edge, every value that may be
// missing is followed (inwards) by text that does not start with white
// space, or by nothing.
func (t *translator) markerSafe(ps []piece) bool {
	return t.markerEdgeSafe(ps, false) && t.markerEdgeSafe(ps, true)
}

func (t *translator) markerEdgeSafe(ps []piece, trailing bool) bool {
	at := func(i int) piece {
		if trailing {
			return ps[len(ps)-1-i]
		}
		return ps[i]
	}
	for i := range ps {
		pc := at(i)
		if pc.isText {
			if strings.TrimFunc(pc.text, isSpace) != "" {
				return true // trimming stops in this text
			}
			continue
		}
		if !pc.v.mayNil() && !pc.v.nilInside {
			if nonEmpty, noEdge := renderFacts(pc.v); nonEmpty && noEdge {
				return true
			}
			continue
		}
		if i+1 == len(ps) {
			return true // a marker alone is removed to nothing in both
		}
		next := at(i + 1)
		if !next.isText || next.text == "" {
			return false
		}
		r, _ := utf8.DecodeRuneInString(next.text)
		if trailing {
			r, _ = utf8.DecodeLastRuneInString(next.text)
		}
		return !isSpace(r)
	}
	return true
}

// whole is the legacy rendering of pieces as one CEL string: trimmed
// where a value may bring white space to an edge.
func (t *translator) whole(ps []piece) string {
	ps = trimStaticEdges(ps)
	v := t.concat(ps)
	if t.edgeClean(ps, false) && t.edgeClean(ps, true) {
		return v.expr
	}
	if v.nilInside && !t.markerSafe(ps) {
		t.failf(nil, "the output's leading or trailing white space depends on missing fields (the legacy engine trimmed around a \"<no value>\" marker)")
	}
	return p(v, precPrimary) + ".trim()"
}

// hasText: some text of the template survives the trimming, so the
// output is never empty.
func hasText(ps []piece) bool {
	for _, pc := range ps {
		if pc.isText && strings.TrimSpace(pc.text) != "" {
			return true
		}
	}
	return false
}

// interpolate translates text and values into a string.
func (t *translator) interpolate(ps []piece) string {
	ps = trimStaticEdges(ps)
	if !t.edgeClean(ps, false) || !t.edgeClean(ps, true) {
		whole := t.concat(ps)
		if whole.nilInside && !t.markerSafe(ps) {
			t.failf(nil, "the output's leading or trailing white space depends on missing fields (the legacy engine trimmed around a \"<no value>\" marker)")
		}
		return "${" + p(whole, precPrimary) + ".trim()}"
	}
	var b strings.Builder
	for i, pc := range ps {
		if pc.isText {
			text := strings.ReplaceAll(pc.text, "${", "$${")
			if i+1 < len(ps) {
				// a $ right before ${ would read as the escape $${
				body := strings.TrimRight(text, "$")
				if n := len(text) - len(body); n > 0 {
					text = body + "${'" + strings.Repeat("$", n) + "'}"
				}
			}
			b.WriteString(text)
			continue
		}
		v := pc.v
		switch {
		case (v.kind == vInt || v.kind == vBool) && v.opt == nil:
			// Interpolation prints integers and booleans as %v does.
			b.WriteString("${" + v.expr + "}")
		default:
			b.WriteString("${" + t.str(v, pc.node).expr + "}")
		}
	}
	return b.String()
}

// trimStaticEdges drops the white space of text at the edges of pieces:
// the legacy output is trimmed as a whole, so static white space at the
// edges goes (white space a value may bring to an edge needs .trim()).
func trimStaticEdges(ps []piece) []piece {
	for len(ps) > 0 && ps[0].isText {
		ps[0].text = strings.TrimLeftFunc(ps[0].text, isSpace)
		if ps[0].text != "" {
			break
		}
		ps = ps[1:]
	}
	for len(ps) > 0 && ps[len(ps)-1].isText {
		last := &ps[len(ps)-1]
		last.text = strings.TrimRightFunc(last.text, isSpace)
		if last.text != "" {
			break
		}
		ps = ps[:len(ps)-1]
	}
	return ps
}

package migrate

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// apply makes the move on the text: the key's lines are cut, indented for
// their new parent and inserted there (after creating the parents the
// newest layout adds, or before the key that held them in the flat one).
func (mv *move) apply(s *source) ([]byte, error) {
	last := mv.src[len(mv.src)-1]
	if last.m.Style&yaml.FlowStyle != 0 {
		return nil, errors.New("it is written inside a flow map {…}; write that map as a block first")
	}
	gone, err := mv.emptied()
	if err != nil {
		return nil, err
	}
	cs, keyStart, ce, err := s.block(mv.key, mv.val)
	if err != nil {
		return nil, err
	}
	keyIndent := mv.key.Column - 1
	var drop []int // lines of the emptied parents' own keys
	if len(gone) > 0 {
		outer := gone[len(gone)-1]
		if cs, _, ce, err = s.block(outer.m.Content[outer.i], outer.m.Content[outer.i+1]); err != nil {
			return nil, err
		}
		for _, g := range gone {
			drop = append(drop, g.m.Content[g.i].Line)
		}
	}
	w := mv.width
	var io, indent int
	var prefix strings.Builder
	switch {
	case mv.flat:
		owner := mv.src[len(mv.dst)]
		if io, _, _, err = s.block(owner.m.Content[owner.i], owner.m.Content[owner.i+1]); err != nil {
			return nil, err
		}
		indent = owner.m.Content[owner.i].Column - 1
	case len(mv.newKeys) > 0 && mv.holder() == last.m:
		// The parents are created where the key stood, under its
		// comments.
		cs, io, indent = keyStart, keyStart, keyIndent
		for d, k := range mv.newKeys {
			prefix.WriteString(strings.Repeat(" ", indent+d*w) + k + ":\n")
		}
		indent += len(mv.newKeys) * w
	default:
		h := mv.holder()
		if len(h.Content) == 0 || h.Style&yaml.FlowStyle != 0 {
			return nil, fmt.Errorf("%s is empty or written as a flow map {…}; write it as a block first", mv.toParentWritten())
		}
		if _, _, io, err = s.block(h.Content[len(h.Content)-2], h.Content[len(h.Content)-1]); err != nil {
			return nil, err
		}
		hIndent := h.Content[0].Column - 1
		for d, k := range mv.newKeys {
			prefix.WriteString(strings.Repeat(" ", hIndent+d*w) + k + ":\n")
		}
		indent = hIndent + len(mv.newKeys)*w
	}
	text := prefix.String() + reindent(s.linesOf(cs, ce, drop), indent-keyIndent, indent)
	b := s.b
	var out []byte
	switch {
	case io <= cs:
		out = concat(b[:io], []byte(text), b[io:cs], b[ce:])
	case io >= ce:
		out = concat(b[:cs], b[ce:io], []byte(text), b[io:])
	default:
		return nil, errors.New("its new place is inside its own lines")
	}
	return out, nil
}

func (mv *move) toParentWritten() string {
	if w := written(mv.dst); w != "" {
		return w
	}
	return "the entry"
}

func concat(parts ...[]byte) []byte {
	return bytes.Join(parts, nil)
}

// block is the extent of one key of a block map: start is the first of
// the comment lines just above it at its indentation, keyStart its own
// line's start, end just past the last line of its value and of the
// comment lines after it indented deeper than the key.
func (s *source) block(key, val *yaml.Node) (start, keyStart, end int, err error) {
	ko, err := s.offset(key.Line, key.Column)
	if err != nil {
		return 0, 0, 0, err
	}
	keyStart = s.lines[key.Line-1]
	if strings.TrimLeft(string(s.b[keyStart:ko]), " ") != "" {
		return 0, 0, 0, fmt.Errorf("%s: does not start its line (the first key of a list item?); put it on a line of its own", key.Value)
	}
	indent := ko - keyStart
	start = keyStart
	for l := key.Line - 1; l >= 1; l-- {
		ls := s.lines[l-1]
		if c, ind := commentLine(s.b[ls:s.lineEnd(ls)]); !c || ind != indent {
			break
		}
		start = ls
	}
	if val.Kind == yaml.ScalarNode && val.Tag == "!!null" && val.Value == "" {
		return 0, 0, 0, fmt.Errorf("%s: has no value", key.Value)
	}
	vo, err := s.offset(val.Line, val.Column)
	if err != nil {
		return 0, 0, 0, err
	}
	ve, err := s.end(val, vo)
	if err != nil {
		return 0, 0, 0, err
	}
	end = s.lineEnd(ve)
	if rest := strings.TrimSpace(string(s.b[ve:end])); rest != "" && !strings.HasPrefix(rest, "#") {
		return 0, 0, 0, fmt.Errorf("%s: its line goes on after its value (%q)", key.Value, rest)
	}
	for end < len(s.b) {
		next := end + 1
		if c, ind := commentLine(s.b[next:s.lineEnd(next)]); !c || ind <= indent {
			break
		}
		end = s.lineEnd(next)
	}
	if end < len(s.b) {
		end++
	}
	return start, keyStart, end, nil
}

// commentLine: the line holds only a comment, indented by ind.
func commentLine(line []byte) (bool, int) {
	t := bytes.TrimLeft(line, " ")
	return len(t) > 0 && t[0] == '#', len(line) - len(t)
}

// linesOf is the text from start to end (line starts), without the lines
// numbered in drop; a comment at the end of a dropped line is kept on a
// line of its own.
func (s *source) linesOf(start, end int, drop []int) string {
	var b strings.Builder
	for off := start; off < end; {
		le := s.lineEnd(off)
		line := string(s.b[off:le])
		dropped := false
		for _, l := range drop {
			if s.lines[l-1] == off {
				dropped = true
			}
		}
		switch {
		case !dropped:
			b.WriteString(line + "\n")
		case strings.Contains(line, " #"):
			ind := len(line) - len(strings.TrimLeft(line, " "))
			b.WriteString(strings.Repeat(" ", ind) + strings.TrimSpace(line[strings.Index(line, " #"):]) + "\n")
		}
		off = le + 1
	}
	return b.String()
}

// reindent shifts every non-blank line by delta spaces, to no less than
// min (comment lines of a removed parent; the key's own lines are never
// below it).
func reindent(text string, delta, min int) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		if strings.TrimSpace(line) == "" {
			b.WriteString(line)
			continue
		}
		body := strings.TrimLeft(line, " ")
		n := max(len(line)-len(body)+delta, min)
		b.WriteString(strings.Repeat(" ", n) + body)
	}
	return b.String()
}

// indentWidth is the indentation step of a document: how much deeper the
// first nested block map's keys stand than its key (2 when none).
func indentWidth(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	if n.Kind == yaml.MappingNode && n.Style&yaml.FlowStyle == 0 {
		for i := 0; i+1 < len(n.Content); i += 2 {
			v := n.Content[i+1]
			if v.Kind == yaml.MappingNode && v.Style&yaml.FlowStyle == 0 && len(v.Content) > 0 && v.Content[0].Column > n.Content[i].Column {
				return v.Content[0].Column - n.Content[i].Column
			}
		}
	}
	for _, c := range n.Content {
		if w := indentWidth(c); w > 0 {
			return w
		}
	}
	return 0
}

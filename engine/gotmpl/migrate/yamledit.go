package migrate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// Rewriting keeps every byte the migration does not touch: yaml.v3 gives
// the position of each node to rewrite, the new scalar is rendered in the
// node's style where it can hold the text (else double-quoted) and spliced
// over the old one's exact extent, and the spliced file is parsed again and
// compared, node by node, with the document tree edited in place (values
// and styles of the touched scalars; a structured condition's mapping
// becomes a scalar). Re-encoding the whole tree with yaml.v3 would lose
// blank lines, compact sequences and comment spacing.

// indexNodes maps every scalar of the katalog's documents by the position
// of its content (as katalog.Value.ContentPos computes it) and every
// mapping by its own position.
func (m *migration) indexNodes() {
	m.scalars = map[katalog.Pos]*yaml.Node{}
	m.mappings = map[katalog.Pos]*yaml.Node{}
	seen := map[*yaml.Node]bool{}
	var walk func(file string, n *yaml.Node)
	walk = func(file string, n *yaml.Node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		switch n.Kind {
		case yaml.ScalarNode:
			p := katalog.Pos{File: file, Line: n.Line, Col: n.Column}
			switch {
			case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
				p.Col++
			case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
				p.Line++
				p.Col = 1
			}
			m.scalars[p] = n
		case yaml.MappingNode:
			m.mappings[katalog.Pos{File: file, Line: n.Line, Col: n.Column}] = n
		}
		for _, c := range n.Content {
			walk(file, c)
		}
	}
	for _, d := range m.k.Docs {
		walk(d.File, d.Root)
	}
}

// edit is one replacement in a file.
type edit struct {
	start, end int
	text       string
	item       *Item
}

// rewrite splices the translations into the katalog's files.
func (m *migration) rewrite() error {
	byFile := map[string][]*Item{}
	for _, it := range m.res.Translated {
		byFile[it.Pos.File] = append(byFile[it.Pos.File], it)
		for _, c := range m.namedDeletes(it) {
			byFile[c.Pos.File] = append(byFile[c.Pos.File], c)
		}
	}
	for _, it := range m.res.Left {
		if it.Rewritten != "" {
			byFile[it.Pos.File] = append(byFile[it.Pos.File], it)
		}
	}
	for _, path := range m.k.Files {
		orig, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		f := &File{Path: path, Original: orig, Migrated: orig}
		m.res.Files = append(m.res.Files, f)
		its := byFile[path]
		if len(its) == 0 {
			continue
		}
		src := newSource(orig)
		var edits []edit
		done := map[*yaml.Node]bool{}
		for _, it := range its {
			if done[it.node] {
				continue // an anchored value: one edit for all its uses
			}
			e, err := src.plan(it)
			if err != nil {
				m.leave(it, 0, "cannot rewrite it in place: "+err.Error())
				it.Rewritten = ""
				continue
			}
			done[it.node] = true
			edits = append(edits, e)
		}
		sort.Slice(edits, func(i, j int) bool { return edits[i].start > edits[j].start })
		out := append([]byte(nil), orig...)
		for i, e := range edits {
			if i > 0 && e.end > edits[i-1].start {
				return fmt.Errorf("internal: overlapping rewrites in %s", path)
			}
			out = append(out[:e.start:e.start], append([]byte(e.text), out[e.end:]...)...)
		}
		// The tree edited in place must be what the spliced text parses to.
		for _, e := range edits {
			applyToNode(e.item)
		}
		if err := m.sameAsEdited(path, out); err != nil {
			return fmt.Errorf("internal: rewriting %s in place went wrong (%w); nothing was written", path, err)
		}
		f.Migrated = out
	}
	// Items left while rewriting move to Left; their proofs no longer matter.
	var kept []*Item
	for _, it := range m.res.Translated {
		if it.CEL != "" {
			kept = append(kept, it)
		} else {
			m.res.Left = append(m.res.Left, it)
		}
	}
	m.res.Translated = kept
	sortItems(m.res.Left)
	var mm []*Mismatch
	for _, x := range m.res.Mismatches {
		if x.Item.CEL != "" {
			mm = append(mm, x)
		}
	}
	m.res.Mismatches = mm
	return nil
}

// namedDeletes are the onDelete declarations that only name the child
// whose name it translates, as edits of their own name: the loader matches
// them by the name as written, which must stay the child's.
func (m *migration) namedDeletes(it *Item) []*Item {
	e := m.k.Entry(it.Entry)
	if it.Kind != Value || e == nil || e.Box == nil || !strings.HasSuffix(it.Field, "].name") {
		return nil
	}
	var out []*Item
	for _, r := range e.Box.NamedDeletes {
		n := r.Fields.Get("name")
		for _, h := range []string{katalog.OnCreate, katalog.OnReconcile} {
			if n != nil && n.Str == it.Legacy && strings.HasPrefix(it.Field, "operatorBox."+h+"."+r.Kind+"[") {
				c := *it
				c.Pos, c.node = n.Pos, n.Node
				out = append(out, &c)
			}
		}
	}
	return out
}

// applyToNode edits the document tree as the splice edits the text.
func applyToNode(it *Item) {
	n := it.node
	if n.Kind == yaml.MappingNode {
		n.Kind, n.Tag, n.Content, n.Style = yaml.ScalarNode, "!!str", nil, yaml.DoubleQuotedStyle
	}
	n.Value = it.text()
	n.Tag = "!!str"
}

// sameAsEdited parses the spliced text and compares its Katalog documents
// with the edited trees.
func (m *migration) sameAsEdited(path string, out []byte) error {
	var want []*yaml.Node
	for _, d := range m.k.Docs {
		if d.File == path {
			want = append(want, d.Root)
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(out))
	i := 0
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if len(doc.Content) == 0 || !isKatalog(doc.Content[0]) {
			continue
		}
		if i >= len(want) {
			return fmt.Errorf("an extra Katalog document")
		}
		if err := sameTree(want[i], &doc, "$"); err != nil {
			return err
		}
		i++
	}
	if i != len(want) {
		return fmt.Errorf("%d Katalog documents, want %d", i, len(want))
	}
	return nil
}

func isKatalog(n *yaml.Node) bool {
	if n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "kind" {
			return n.Content[i+1].Value == "Katalog"
		}
	}
	return false
}

func sameTree(a, b *yaml.Node, path string) error {
	for a.Kind == yaml.AliasNode {
		a = a.Alias
	}
	for b.Kind == yaml.AliasNode {
		b = b.Alias
	}
	if a.Kind != b.Kind || a.ShortTag() != b.ShortTag() || a.Kind == yaml.ScalarNode && a.Value != b.Value || len(a.Content) != len(b.Content) {
		return fmt.Errorf("at %s (line %d): got %s %q, want %s %q", path, b.Line, b.ShortTag(), b.Value, a.ShortTag(), a.Value)
	}
	for i := range a.Content {
		if err := sameTree(a.Content[i], b.Content[i], fmt.Sprintf("%s/%d", path, i)); err != nil {
			return err
		}
	}
	return nil
}

// ── source text ─────────────────────────────────────────────────────────────

type source struct {
	b     []byte
	lines []int // byte offset of each line's start
}

func newSource(b []byte) *source {
	s := &source{b: b, lines: []int{0}}
	for i, c := range b {
		if c == '\n' {
			s.lines = append(s.lines, i+1)
		}
	}
	return s
}

// offset of a yaml.v3 line and (character) column.
func (s *source) offset(line, col int) (int, error) {
	if line < 1 || line > len(s.lines) {
		return 0, fmt.Errorf("line %d out of range", line)
	}
	off := s.lines[line-1]
	for c := 1; c < col; c++ {
		if off >= len(s.b) || s.b[off] == '\n' {
			return 0, fmt.Errorf("column %d out of range on line %d", col, line)
		}
		_, w := utf8.DecodeRune(s.b[off:])
		off += w
	}
	return off, nil
}

func (s *source) lineOf(off int) int {
	return sort.Search(len(s.lines), func(i int) bool { return s.lines[i] > off })
}

func (s *source) lineEnd(off int) int {
	if i := bytes.IndexByte(s.b[off:], '\n'); i >= 0 {
		return off + i
	}
	return len(s.b)
}

// indentOf is the indentation of the line holding off.
func (s *source) indentOf(off int) int {
	start := s.lines[s.lineOf(off)-1]
	n := 0
	for start+n < len(s.b) && s.b[start+n] == ' ' {
		n++
	}
	return n
}

// plan computes the edit of one item.
func (s *source) plan(it *Item) (edit, error) {
	n := it.node
	start, err := s.offset(n.Line, n.Column)
	if err != nil {
		return edit{}, err
	}
	if n.Kind == yaml.MappingNode {
		end, err := s.end(n, start)
		if err != nil {
			return edit{}, err
		}
		text := doubleQuoted(it.text())
		if cs := s.comments(start, end); len(cs) > 0 {
			// keep the condition's comments, on the new line
			text += " " + strings.Join(cs, " ")
		}
		return edit{start: start, end: end, text: text, item: it}, nil
	}
	body := s.skipProperties(start)
	end, err := s.end(n, start)
	if err != nil {
		return edit{}, err
	}
	text, style := s.render(it.text(), n, body)
	it.node.Style = style
	return edit{start: body, end: end, text: text, item: it}, nil
}

// skipProperties skips an anchor (&a) and a tag (!!str) before a node's
// content.
func (s *source) skipProperties(off int) int {
	for off < len(s.b) && (s.b[off] == '&' || s.b[off] == '!') {
		for off < len(s.b) && s.b[off] != ' ' && s.b[off] != '\t' && s.b[off] != '\n' {
			off++
		}
		for off < len(s.b) && (s.b[off] == ' ' || s.b[off] == '\t') {
			off++
		}
	}
	return off
}

// end is the offset just past node n, which starts at start.
func (s *source) end(n *yaml.Node, start int) (int, error) {
	switch n.Kind {
	case yaml.AliasNode:
		return start + 1 + len(n.Value), nil
	case yaml.MappingNode, yaml.SequenceNode:
		if n.Style&yaml.FlowStyle != 0 {
			return s.flowEnd(s.skipProperties(start))
		}
		if len(n.Content) == 0 {
			return 0, fmt.Errorf("an empty block collection")
		}
		last := n.Content[len(n.Content)-1]
		ls, err := s.offset(last.Line, last.Column)
		if err != nil {
			return 0, err
		}
		return s.end(last, ls)
	}
	body := s.skipProperties(start)
	if body >= len(s.b) {
		return body, nil
	}
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		for i := body + 1; i < len(s.b); i++ {
			switch s.b[i] {
			case '\\':
				i++
			case '"':
				return i + 1, nil
			}
		}
		return 0, fmt.Errorf("unterminated double-quoted scalar")
	case n.Style&yaml.SingleQuotedStyle != 0:
		for i := body + 1; i < len(s.b); i++ {
			if s.b[i] == '\'' {
				if i+1 < len(s.b) && s.b[i+1] == '\'' {
					i++
					continue
				}
				return i + 1, nil
			}
		}
		return 0, fmt.Errorf("unterminated single-quoted scalar")
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return s.blockEnd(body)
	}
	// plain: to the end of the line or a comment
	e := s.lineEnd(body)
	line := s.b[body:e]
	if i := bytes.Index(line, []byte(" #")); i >= 0 {
		line = line[:i]
	}
	line = bytes.TrimRight(line, " \t\r")
	if string(line) != n.Value {
		return 0, fmt.Errorf("a plain scalar over several lines; quote it first")
	}
	return body + len(line), nil
}

// blockEnd is the end of a block scalar's last content line.
func (s *source) blockEnd(header int) (int, error) {
	parent := s.indentOf(header)
	he := s.lineEnd(header)
	content := -1
	for _, c := range s.b[header+1 : he] {
		if c >= '1' && c <= '9' {
			content = parent + int(c-'0')
		}
		if c == '#' {
			break
		}
	}
	end := he
	for off := he + 1; off < len(s.b); {
		le := s.lineEnd(off)
		line := s.b[off:le]
		if len(bytes.TrimSpace(line)) == 0 {
			off = le + 1
			continue
		}
		ind := 0
		for ind < len(line) && line[ind] == ' ' {
			ind++
		}
		if content < 0 {
			if ind <= parent {
				break
			}
			content = ind
		}
		if ind < content {
			break
		}
		end = le
		if le >= len(s.b) {
			break
		}
		off = le + 1
	}
	return end, nil
}

// flowEnd is the end of a flow collection starting at its bracket.
func (s *source) flowEnd(start int) (int, error) {
	depth := 0
	for i := start; i < len(s.b); i++ {
		switch c := s.b[i]; c {
		case '"':
			for i++; i < len(s.b) && s.b[i] != '"'; i++ {
				if s.b[i] == '\\' {
					i++
				}
			}
		case '\'':
			for i++; i < len(s.b); i++ {
				if s.b[i] == '\'' {
					if i+1 < len(s.b) && s.b[i+1] == '\'' {
						i++
						continue
					}
					break
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, nil
			}
		}
	}
	return 0, fmt.Errorf("unterminated flow collection")
}

// comments lists the comments between start and end (outside quotes).
func (s *source) comments(start, end int) []string {
	var out []string
	for i := start; i < end; i++ {
		switch c := s.b[i]; c {
		case '"':
			for i++; i < end && s.b[i] != '"'; i++ {
				if s.b[i] == '\\' {
					i++
				}
			}
		case '\'':
			for i++; i < end && s.b[i] != '\''; i++ {
			}
		case '#':
			if i == start || s.b[i-1] == ' ' || s.b[i-1] == '\t' || s.b[i-1] == '\n' {
				e := min(s.lineEnd(i), end)
				out = append(out, strings.TrimSpace(string(s.b[i:e])))
				i = e
			}
		}
	}
	return out
}

// render writes value as a YAML scalar in the style of n where it can
// hold it, else double-quoted.
func (s *source) render(value string, n *yaml.Node, body int) (string, yaml.Style) {
	switch {
	case n.Style&yaml.LiteralStyle != 0:
		if t, ok := s.literal(value, body); ok {
			return t, yaml.LiteralStyle
		}
	case n.Style&yaml.SingleQuotedStyle != 0:
		if !strings.ContainsAny(value, "'\n\r\t") && printable(value) {
			return "'" + value + "'", yaml.SingleQuotedStyle
		}
	case n.Style&(yaml.DoubleQuotedStyle|yaml.FoldedStyle) == 0:
		// plain, when yaml.v3 would write it plain
		if b, err := yaml.Marshal(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}); err == nil && strings.TrimSuffix(string(b), "\n") == value && !strings.Contains(value, "\n") {
			return value, 0
		}
	}
	return doubleQuoted(value), yaml.DoubleQuotedStyle
}

// literal writes value as a literal block at the original content
// indentation (|- when it does not end with a newline).
func (s *source) literal(value string, header int) (string, bool) {
	if value == "" || value[0] == ' ' || value[0] == '\t' || strings.HasSuffix(value, "\n\n") || strings.ContainsAny(value, "\r") || !printable(strings.ReplaceAll(value, "\n", "")) {
		return "", false
	}
	ind := s.indentOf(header) + 2
	if he := s.lineEnd(header); he+1 < len(s.b) {
		next := s.b[he+1 : s.lineEnd(he+1)]
		n := 0
		for n < len(next) && next[n] == ' ' {
			n++
		}
		if n > s.indentOf(header) && n < len(next) {
			ind = n
		}
	}
	chomp := "-"
	body := value
	if strings.HasSuffix(value, "\n") {
		chomp, body = "", strings.TrimSuffix(value, "\n")
	}
	var b strings.Builder
	b.WriteString("|" + chomp)
	for _, l := range strings.Split(body, "\n") {
		b.WriteByte('\n')
		if l != "" {
			b.WriteString(strings.Repeat(" ", ind))
			b.WriteString(l)
		}
	}
	return b.String(), true
}

func printable(s string) bool {
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}

// doubleQuoted writes a YAML double-quoted scalar (Go's escapes are a
// subset of YAML's).
func doubleQuoted(s string) string { return strconv.Quote(s) }

// ── check ───────────────────────────────────────────────────────────────────

// check loads and compiles the migrated katalog, as `orkestra check` does,
// from the files given, with the migrated contents read in place of the
// originals (so relative paths and Komposer imports resolve as they will).
func (m *migration) check() {
	load := m.opts.Load
	load.Overlay = map[string][]byte{}
	for _, f := range m.res.Files {
		if !f.Changed() {
			continue
		}
		abs, err := filepath.Abs(f.Path)
		if err != nil {
			m.res.Notes = append(m.res.Notes, "the migrated katalog was not checked: "+err.Error())
			return
		}
		load.Overlay[abs] = f.Migrated
	}
	k, diags := katalog.LoadWith(load, m.opts.Files...)
	if !diags.HasErrors() {
		cel, legacy, err := Backends(m.opts.CostLimit)
		if err != nil {
			m.res.Notes = append(m.res.Notes, "the migrated katalog was not checked: "+err.Error())
			return
		}
		_, cd := engine.Compile(k, engine.Backends{CEL: cel, Legacy: legacy}, engine.CompileOptions{CostLimit: m.opts.CostLimit})
		diags = append(diags, cd...)
	}
	m.res.Check = append(m.res.Check, diags.Errors()...)
}

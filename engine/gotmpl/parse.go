package gotmpl

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"text/template/parse"
)

// ParseError is a template that does not parse. Offset is the byte offset in
// the template source of the problem (best effort for errors the
// text/template parser reports by line only).
type ParseError struct {
	Offset int
	Msg    string
}

func (e *ParseError) Error() string { return e.Msg }

// treeName names every parsed tree; messages never show it.
const treeName = "legacy"

// Parse parses a legacy template the way the adapter does: text/template
// syntax with `{{ }}` delimiters. Function names are not checked here (the
// compiler checks them against the function list with positions), but
// `default` calls are put in one canonical argument order: `default FALLBACK
// VALUE`, as when written `VALUE | default FALLBACK`. `default .spec.x "y"`
// (value first, a field then a literal) is rewritten to `default "y" .spec.x`;
// a call whose order cannot be told from its arguments is a *ParseError.
// `{{ define }}`, `{{ block }}` and `{{ template }}` are rejected: a value is
// one template.
//
// Field chains with dashed keys (`.children.deployments.my-service`) are
// read with index (dashes.go).
//
// Parse is the one place templates are parsed; the migrate translator uses
// it too.
func Parse(src string) (*parse.Tree, error) {
	t, _, err := parseNoting(src)
	return t, err
}

// parseNoting is Parse, also returning the `default` calls written value
// first (`default .spec.x "y"`), which it put in canonical order.
func parseNoting(src string) (*parse.Tree, []*parse.CommandNode, error) {
	t, err := parseRaw(src)
	if err != nil {
		return nil, nil, err
	}
	valueFirst := valueFirstDefaults(t.Root)
	if err := normalize(t.Root, src); err != nil {
		return nil, nil, err
	}
	return t, valueFirst, nil
}

// parseRaw parses without putting default calls in order.
func parseRaw(src string) (*parse.Tree, error) {
	t := parse.New(treeName)
	t.Mode = parse.SkipFuncCheck
	treeSet := map[string]*parse.Tree{}
	if _, err := t.Parse(rewriteDashes(src), "{{", "}}", treeSet); err != nil {
		return nil, mapParseError(src, err)
	}
	if len(treeSet) > 1 {
		for name := range treeSet {
			if name != treeName {
				off := strings.Index(src, "define")
				if off < 0 {
					off = strings.Index(src, "block")
				}
				return nil, &ParseError{Offset: max(off, 0), Msg: fmt.Sprintf("{{ define %q }} and {{ block }} are not supported: a value is a single template", name)}
			}
		}
	}
	if t.Root == nil {
		t.Root = &parse.ListNode{NodeType: parse.NodeList}
	}
	return t, nil
}

// valueFirstDefaults finds `default A B` with a computed A and a literal B:
// the form whose reading the original engine changed between releases.
func valueFirstDefaults(root parse.Node) []*parse.CommandNode {
	var out []*parse.CommandNode
	walkNodes(root, func(n parse.Node) bool {
		if p, ok := n.(*parse.PipeNode); ok {
			for i, cmd := range p.Cmds {
				if i > 0 || len(cmd.Args) != 3 {
					continue
				}
				if id, ok := cmd.Args[0].(*parse.IdentifierNode); ok && id.Ident == "default" && !isLiteral(cmd.Args[1]) && isLiteral(cmd.Args[2]) {
					out = append(out, cmd)
				}
			}
		}
		return true
	})
	return out
}

// CanonicalDefaults rewrites every `default VALUE LITERAL` of a template in
// the pipe form `VALUE | default LITERAL`, which every release of the
// original engine reads the same way; ok is false when there is none.
func CanonicalDefaults(src string) (out string, ok bool, err error) {
	raw, err := parseRaw(src)
	if err != nil {
		return "", false, err
	}
	cmds := valueFirstDefaults(raw.Root)
	if len(cmds) == 0 {
		return src, false, nil
	}
	// Rewrite from the end so earlier offsets stay valid.
	out = src
	for i := len(cmds) - 1; i >= 0; i-- {
		cmd := cmds[i]
		id := cmd.Args[0].(*parse.IdentifierNode)
		a, b := cmd.Args[1], cmd.Args[2]
		startA, startB := startOf(src, a), int(b.Position())
		if _, paren := a.(*parse.PipeNode); paren {
			startA = strings.LastIndex(src[:startA], "(")
		}
		endB := startB + len(b.String())
		if startA < int(id.Pos) || startB < startA || endB > len(src) || src[startB:endB] != b.String() {
			return "", false, fmt.Errorf("cannot place %s in the template text", cmd)
		}
		value := strings.TrimSpace(src[startA:startB])
		out = out[:id.Pos] + value + " | default " + src[startB:endB] + out[endB:]
	}
	// The rewrite only moved the value before the call: it must parse, with
	// as many default calls and none value first.
	got, err := parseRaw(out)
	if err != nil || len(valueFirstDefaults(got.Root)) > 0 || strings.Count(got.Root.String(), "default") != strings.Count(raw.Root.String(), "default") {
		return "", false, fmt.Errorf("the pipe form %q of %q is not right", out, src)
	}
	return out, true, nil
}

// normalize walks the tree, rejects {{ template }} and puts `default` calls
// in canonical order.
func normalize(n parse.Node, src string) *ParseError {
	var err *ParseError
	walkNodes(n, func(n parse.Node) bool {
		if err != nil {
			return false
		}
		switch x := n.(type) {
		case *parse.TemplateNode:
			off := strings.LastIndex(src[:min(int(x.Pos), len(src))], "template")
			err = &ParseError{Offset: max(off, 0), Msg: fmt.Sprintf("{{ template %q }} is not supported: a value is a single template", x.Name)}
			return false
		case *parse.PipeNode:
			for i, cmd := range x.Cmds {
				if e := normalizeDefault(cmd, i > 0); e != nil {
					err = e
					return false
				}
			}
		}
		return true
	})
	return err
}

// normalizeDefault decides the argument order of `default A B` from the
// parse tree: a field reference (or any computed value) against a literal.
// The function itself always takes (fallback, value).
func normalizeDefault(cmd *parse.CommandNode, piped bool) *ParseError {
	if len(cmd.Args) == 0 {
		return nil
	}
	id, ok := cmd.Args[0].(*parse.IdentifierNode)
	if !ok || id.Ident != "default" || piped || len(cmd.Args) != 3 {
		// `X | default Y` is canonical already; a wrong argument count is
		// reported by the arity check.
		return nil
	}
	a, b := cmd.Args[1], cmd.Args[2]
	switch {
	case !isLiteral(a) && isLiteral(b):
		// `default .spec.x "y"`: value first, the older order.
		cmd.Args[1], cmd.Args[2] = b, a
		return nil
	case isLiteral(a) && !isLiteral(b):
		// `default "y" .spec.x`: fallback first (Sprig's order).
		return nil
	}
	what := "two computed values"
	if isLiteral(a) {
		what = "two literals"
	}
	return &ParseError{Offset: int(id.Pos), Msg: fmt.Sprintf(
		"default %s %s: with %s the argument order is ambiguous (the original engine changed it between releases); write `%s | default %s` (%s, else %s) or `coalesce %s %s`",
		a, b, what, a, b, a, b, a, b)}
}

func isLiteral(n parse.Node) bool {
	switch n.(type) {
	case *parse.StringNode, *parse.NumberNode, *parse.BoolNode, *parse.NilNode:
		return true
	}
	return false
}

// walkNodes calls f for n and, while f returns true, for every node below it.
func walkNodes(n parse.Node, f func(parse.Node) bool) {
	if n == nil {
		return
	}
	switch x := n.(type) {
	case *parse.ListNode:
		if x == nil {
			return
		}
	case *parse.PipeNode:
		if x == nil {
			return
		}
	}
	if !f(n) {
		return
	}
	switch x := n.(type) {
	case *parse.ListNode:
		for _, c := range x.Nodes {
			walkNodes(c, f)
		}
	case *parse.ActionNode:
		walkNodes(x.Pipe, f)
	case *parse.PipeNode:
		for _, d := range x.Decl {
			walkNodes(d, f)
		}
		for _, c := range x.Cmds {
			walkNodes(c, f)
		}
	case *parse.CommandNode:
		for _, a := range x.Args {
			walkNodes(a, f)
		}
	case *parse.ChainNode:
		walkNodes(x.Node, f)
	case *parse.IfNode:
		walkBranch(&x.BranchNode, f)
	case *parse.RangeNode:
		walkBranch(&x.BranchNode, f)
	case *parse.WithNode:
		walkBranch(&x.BranchNode, f)
	case *parse.TemplateNode:
		walkNodes(x.Pipe, f)
	}
}

func walkBranch(b *parse.BranchNode, f func(parse.Node) bool) {
	walkNodes(b.Pipe, f)
	if b.List != nil {
		walkNodes(b.List, f)
	}
	if b.ElseList != nil {
		walkNodes(b.ElseList, f)
	}
}

// ── Parse error positions ────────────────────────────────────────────────────

var parseErrRE = regexp.MustCompile(`^template: [^:]*:(\d+): (.*)$`)

// mapParseError turns a text/template parse error, which names only a line,
// into a *ParseError with the byte offset of the offending action or token.
func mapParseError(src string, err error) *ParseError {
	msg := err.Error()
	line := 1
	if m := parseErrRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	acts := scanActions(src)
	pe := &ParseError{Offset: lineStart(src, line), Msg: "template syntax error: " + msg + parseHint(msg)}
	switch {
	case strings.Contains(msg, "unclosed action"), strings.Contains(msg, "unclosed comment"),
		strings.HasPrefix(msg, "unterminated"):
		for _, a := range acts {
			if !a.closed {
				pe.Offset = a.start
				if a.badQuote >= 0 {
					pe.Offset = a.badQuote
				}
				return pe
			}
		}
	case strings.Contains(msg, "unexpected EOF"):
		// An if/range/with that is never closed: point at the last opener
		// without its {{ end }}.
		if o := unmatchedOpener(acts); o >= 0 {
			pe.Offset = acts[o].start
			pe.Msg = fmt.Sprintf("template syntax error: {{ %s }} has no matching {{ end }}", acts[o].keyword)
			return pe
		}
	case strings.Contains(msg, "unexpected {{end}}"), strings.Contains(msg, "unexpected {{else}}"):
		if i := strayCloser(acts); i >= 0 {
			pe.Offset = acts[i].start
			return pe
		}
	}
	// Otherwise find the action on the reported line that fails on its own.
	for _, a := range acts {
		if lineOf(src, a.start) != line || a.comment {
			continue
		}
		if a.closed {
			inner := a.pipeline(src)
			if strings.TrimSpace(inner) == "" {
				continue
			}
			t := parse.New("probe")
			t.Mode = parse.SkipFuncCheck
			if _, perr := t.Parse("{{"+inner+"}}", "{{", "}}", map[string]*parse.Tree{}); perr == nil {
				continue
			}
		}
		pe.Offset = a.innerStart
		if tok := offendingToken(msg); tok != "" {
			if i := strings.Index(src[a.innerStart:a.end], tok); i >= 0 {
				pe.Offset = a.innerStart + i
			}
		}
		return pe
	}
	return pe
}

func parseHint(msg string) string {
	switch {
	case strings.Contains(msg, "unclosed action"):
		return "; close it with }}"
	case strings.Contains(msg, "bad character"):
		return "; field names with such characters need index, e.g. {{ index .metadata.labels \"app.kubernetes.io/name\" }}"
	}
	return ""
}

var tokenWords = map[string]string{"right paren": ")", "left paren": "(", "right delim": "}}", "left delim": "{{", "pipe": "|"}

var tokenREs = []*regexp.Regexp{
	regexp.MustCompile(`unexpected "([^"]+)"`),
	regexp.MustCompile(`unexpected <([^>]+)>`),
	regexp.MustCompile(`bad character U\+[0-9A-F]+ '(.+)'`),
	regexp.MustCompile(`bad number syntax: "([^"]+)"`),
	regexp.MustCompile(`undefined variable "([^"]+)"`),
	regexp.MustCompile(`unexpected (\S+) in`),
}

func offendingToken(msg string) string {
	for w, tok := range tokenWords {
		if strings.Contains(msg, "unexpected "+w) {
			return tok
		}
	}
	for _, re := range tokenREs {
		if m := re.FindStringSubmatch(msg); m != nil {
			return m[1]
		}
	}
	return ""
}

// action is one {{ … }} of a template source, found by a scanner that
// follows text/template's lexer closely enough to place errors.
type action struct {
	start      int // offset of "{{"
	innerStart int // first byte after "{{" and an optional "- " trim marker
	end        int // offset just after "}}" (or len(src) when unclosed)
	closed     bool
	comment    bool
	keyword    string // if, else, end, range, with, define, block, template, break, continue, or ""
	badQuote   int    // offset of an unterminated quote, or -1
}

// pipeline returns the action's text without delimiters, trim markers and
// its control keyword (`if X` → `X`, `else if X` → `X`).
func (a action) pipeline(src string) string {
	inner := src[a.innerStart:a.end]
	inner = strings.TrimSuffix(inner, "}}")
	inner = strings.TrimSuffix(strings.TrimRight(inner, " \t\r\n"), "-")
	s := strings.TrimSpace(inner)
	switch a.keyword {
	case "end", "break", "continue":
		return ""
	case "else":
		s = strings.TrimSpace(strings.TrimPrefix(s, "else"))
		for _, k := range []string{"if", "with"} {
			if strings.HasPrefix(s, k+" ") {
				return strings.TrimSpace(s[len(k):])
			}
		}
		return ""
	case "if", "range", "with":
		return strings.TrimSpace(s[len(a.keyword):])
	case "define", "block", "template":
		return ""
	}
	return s
}

func scanActions(src string) []action {
	var out []action
	i := 0
	for {
		j := strings.Index(src[i:], "{{")
		if j < 0 {
			return out
		}
		a := action{start: i + j, badQuote: -1}
		k := a.start + 2
		if strings.HasPrefix(src[k:], "- ") || strings.HasPrefix(src[k:], "-\t") || strings.HasPrefix(src[k:], "-\n") {
			k += 2
		}
		a.innerStart = k
		if strings.HasPrefix(strings.TrimLeft(src[k:], " \t\r\n"), "/*") {
			a.comment = true
			if e := strings.Index(src[k:], "*/"); e >= 0 {
				if c := strings.Index(src[k+e:], "}}"); c >= 0 {
					a.end, a.closed = k+e+c+2, true
				}
			}
			if !a.closed {
				a.end = len(src)
				out = append(out, a)
				return out
			}
			out = append(out, a)
			i = a.end
			continue
		}
		p := k
	scan:
		for p < len(src) {
			switch c := src[p]; c {
			case '"', '\'', '`':
				q := p
				p++
				for p < len(src) && src[p] != c {
					if c != '`' && src[p] == '\n' {
						break
					}
					if src[p] == '\\' && c != '`' && p+1 < len(src) {
						p++
					}
					p++
				}
				if p >= len(src) || src[p] != c {
					a.badQuote = q
					break scan
				}
				p++
			case '}':
				if strings.HasPrefix(src[p:], "}}") {
					a.end, a.closed = p+2, true
					break scan
				}
				p++
			default:
				p++
			}
		}
		fields := strings.Fields(strings.TrimSpace(src[k:max(p, k)]))
		if len(fields) > 0 {
			switch w := strings.TrimSuffix(fields[0], "}}"); w {
			case "if", "else", "end", "range", "with", "define", "block", "template", "break", "continue":
				a.keyword = w
			}
		}
		if !a.closed {
			a.end = len(src)
			out = append(out, a)
			return out
		}
		out = append(out, a)
		i = a.end
	}
}

func unmatchedOpener(acts []action) int {
	var stack []int
	for i, a := range acts {
		switch a.keyword {
		case "if", "range", "with", "define", "block":
			stack = append(stack, i)
		case "end":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	if len(stack) == 0 {
		return -1
	}
	return stack[len(stack)-1]
}

func strayCloser(acts []action) int {
	depth := 0
	for i, a := range acts {
		switch a.keyword {
		case "if", "range", "with", "define", "block":
			depth++
		case "end":
			if depth == 0 {
				return i
			}
			depth--
		case "else":
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func lineStart(src string, line int) int {
	off := 0
	for l := 1; l < line; l++ {
		i := strings.IndexByte(src[off:], '\n')
		if i < 0 {
			return off
		}
		off += i + 1
	}
	return off
}

func lineOf(src string, off int) int {
	return 1 + strings.Count(src[:min(off, len(src))], "\n")
}

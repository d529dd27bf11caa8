package cel

import (
	"fmt"
	"strings"
)

// SegmentKind says whether a template segment is text or an expression.
type SegmentKind int

const (
	// TextSegment is literal text, with `$${` already turned into `${`.
	TextSegment SegmentKind = iota
	// ExprSegment is one `${…}` expression.
	ExprSegment
)

// Segment is one piece of a template.
type Segment struct {
	Kind SegmentKind
	// Text is the literal text (escapes resolved) or the expression source
	// between `${` and `}`, as written.
	Text string
	// Offset is the byte offset of the segment in the template: of the `$`
	// of `${` for an expression, of the first byte (or of the `$$` of an
	// escape) for text.
	Offset int
	// End is the byte offset just past the segment (past the closing `}`).
	End int
}

// ExprOffset is the byte offset of an expression's source in the template.
func (s Segment) ExprOffset() int { return s.Offset + 2 }

// Template is a string value split into text and `${…}` expressions.
type Template struct {
	Source   string
	Segments []Segment
}

// Single reports whether the template is exactly one `${…}` and nothing else:
// such a value keeps the expression's type.
func (t *Template) Single() bool {
	return len(t.Segments) == 1 && t.Segments[0].Kind == ExprSegment
}

// Exprs returns the expression segments.
func (t *Template) Exprs() []Segment {
	var out []Segment
	for _, s := range t.Segments {
		if s.Kind == ExprSegment {
			out = append(out, s)
		}
	}
	return out
}

// TemplateError is a problem of a template at a byte offset.
type TemplateError struct {
	Offset  int
	Message string
}

func (e *TemplateError) Error() string { return fmt.Sprintf("at byte %d: %s", e.Offset, e.Message) }

// TemplateErrors are all the problems of one template.
type TemplateErrors []*TemplateError

func (es TemplateErrors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

// ParseTemplate splits s into text and `${…}` expressions.
//
//   - `$${` is a literal `${`.
//   - An expression ends at the first `}` that closes it: braces of map
//     literals nest, and a `}` inside a string literal does not count:
//     single- and double-quoted, triple-quoted (three single or three double
//     quotes), raw (r or R prefix) and bytes (b or B prefix) forms, with
//     backslash escapes in non-raw literals; nor does one inside a `backtick`
//     identifier.
//   - An unterminated `${`, an unterminated string literal, and an empty
//     `${}` are errors; so is a string that mixes `${` with the legacy `{{`.
//
// On error, ParseTemplate returns TemplateErrors (every problem, in order)
// and the segments it could read.
func ParseTemplate(s string) (*Template, error) {
	t := &Template{Source: s}
	var errs TemplateErrors
	if strings.Contains(s, "${") {
		if i := strings.Index(s, "{{"); i >= 0 {
			msg := "a string may not mix CEL ${…} with a legacy {{…}} template; write it all in CEL, e.g. ${self.metadata.name} for {{ .metadata.name }}"
			if i > 0 && s[i-1] == '$' {
				msg = "${{ reads as a legacy {{…}} template; put a space before a map literal: ${ {'key': value} }"
			}
			errs = append(errs, &TemplateError{Offset: i, Message: msg})
			return t, errs
		}
	}
	var lit strings.Builder
	litStart := -1
	flush := func(end int) {
		if litStart >= 0 {
			t.Segments = append(t.Segments, Segment{Kind: TextSegment, Text: lit.String(), Offset: litStart, End: end})
			lit.Reset()
			litStart = -1
		}
	}
	i := 0
	for i < len(s) {
		if strings.HasPrefix(s[i:], "$${") {
			if litStart < 0 {
				litStart = i
			}
			lit.WriteString("${")
			i += 3
			continue
		}
		if strings.HasPrefix(s[i:], "${") {
			flush(i)
			end, err := scanExpr(s, i)
			if err != nil {
				errs = append(errs, err)
				break
			}
			src := s[i+2 : end]
			if strings.TrimSpace(src) == "" {
				errs = append(errs, &TemplateError{Offset: i, Message: "empty ${}: write an expression inside, e.g. ${self.metadata.name}, or $${} for the literal text"})
			} else {
				t.Segments = append(t.Segments, Segment{Kind: ExprSegment, Text: src, Offset: i, End: end + 1})
			}
			i = end + 1
			continue
		}
		if litStart < 0 {
			litStart = i
		}
		lit.WriteByte(s[i])
		i++
	}
	flush(i)
	if len(errs) > 0 {
		return t, errs
	}
	return t, nil
}

// scanExpr returns the offset of the `}` closing the expression whose `${`
// is at dollar.
func scanExpr(s string, dollar int) (int, *TemplateError) {
	start := dollar + 2
	depth := 0
	for j := start; j < len(s); {
		switch c := s[j]; c {
		case '\'', '"':
			end, ok := skipString(s, j, isRawString(s, start, j))
			if !ok {
				return 0, &TemplateError{Offset: j, Message: "unterminated string literal in ${…}; close the quote (a } inside a string does not end the expression)"}
			}
			j = end
			continue
		case '`':
			k := strings.IndexByte(s[j+1:], '`')
			if k < 0 {
				return 0, &TemplateError{Offset: j, Message: "unterminated `identifier` in ${…}; close the backtick"}
			}
			j += k + 2
			continue
		case '{':
			depth++
		case '}':
			if depth == 0 {
				return j, nil
			}
			depth--
		}
		j++
	}
	return 0, &TemplateError{Offset: dollar, Message: "unterminated ${: add the closing }, or write $${ for a literal ${"}
}

// isRawString reports whether the string literal opening at q has a raw
// prefix (r, R, possibly with b/B: rb'…', Br"…").
func isRawString(s string, start, q int) bool {
	raw := false
	k := q - 1
	for n := 0; n < 2 && k >= start && strings.IndexByte("rRbB", s[k]) >= 0; n++ {
		if s[k] == 'r' || s[k] == 'R' {
			raw = true
		}
		k--
	}
	if k >= start && isIdentByte(s[k]) {
		// The letters end an identifier (`bar'`), not a prefix.
		return false
	}
	return raw
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// skipString returns the offset just past the string literal opening at q.
func skipString(s string, q int, raw bool) (int, bool) {
	quote := s[q]
	triple := strings.Repeat(string(quote), 3)
	if strings.HasPrefix(s[q:], triple) {
		for k := q + 3; k < len(s); {
			if !raw && s[k] == '\\' {
				k += 2
				continue
			}
			if strings.HasPrefix(s[k:], triple) {
				return k + 3, true
			}
			k++
		}
		return 0, false
	}
	for k := q + 1; k < len(s); {
		switch s[k] {
		case '\\':
			if !raw {
				k += 2
				continue
			}
		case quote:
			return k + 1, true
		case '\n', '\r':
			return 0, false
		}
		k++
	}
	return 0, false
}

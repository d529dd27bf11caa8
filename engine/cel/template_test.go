package cel

import (
	"reflect"
	"testing"
)

func TestParseTemplate(t *testing.T) {
	txt := func(text string, off, end int) Segment {
		return Segment{Kind: TextSegment, Text: text, Offset: off, End: end}
	}
	ex := func(src string, off, end int) Segment {
		return Segment{Kind: ExprSegment, Text: src, Offset: off, End: end}
	}
	tests := []struct {
		name   string
		in     string
		want   []Segment
		single bool
		errs   TemplateErrors
	}{
		{name: "single expression", in: "${self.spec.replicas}", want: []Segment{ex("self.spec.replicas", 0, 21)}, single: true},
		{name: "interpolation", in: "${self.metadata.name}-svc", want: []Segment{ex("self.metadata.name", 0, 21), txt("-svc", 21, 25)}},
		{name: "two expressions", in: "${a}.${b}.svc", want: []Segment{ex("a", 0, 4), txt(".", 4, 5), ex("b", 5, 9), txt(".svc", 9, 13)}},
		{name: "leading space is interpolation", in: " ${a}", want: []Segment{txt(" ", 0, 1), ex("a", 1, 5)}},
		{name: "escape", in: "$${HOME}", want: []Segment{txt("${HOME}", 0, 8)}},
		{name: "escape then expression", in: "$${x}=${self.a}", want: []Segment{txt("${x}=", 0, 6), ex("self.a", 6, 15)}},
		{name: "lone dollar", in: "cost: $5 ${x}", want: []Segment{txt("cost: $5 ", 0, 9), ex("x", 9, 13)}},
		{name: "nested braces", in: "${ {'a': {'b': 1}}['a']}", want: []Segment{ex(" {'a': {'b': 1}}['a']", 0, 24)}, single: true},
		{name: "nested braces then text", in: "${ {'a': {'b': '}'}}['a'].b}/x", want: []Segment{ex(" {'a': {'b': '}'}}['a'].b", 0, 28), txt("/x", 28, 30)}},
		{name: "brace in single quotes", in: "${'}'}", want: []Segment{ex("'}'", 0, 6)}, single: true},
		{name: "brace in double quotes", in: `${"}" + "{"}`, want: []Segment{ex(`"}" + "{"`, 0, 12)}, single: true},
		{name: "escaped quote", in: `${'it\'s }'}`, want: []Segment{ex(`'it\'s }'`, 0, 12)}, single: true},
		{name: "escaped backslash", in: `${'\\'}x`, want: []Segment{ex(`'\\'`, 0, 7), txt("x", 7, 8)}},
		{name: "raw string", in: `${r'\'}'}`, want: []Segment{ex(`r'\'`, 0, 7), txt("'}", 7, 9)}},
		{name: "raw string with brace", in: `${R"a}\"}`, want: []Segment{ex(`R"a}\"`, 0, 9)}, single: true},
		{name: "triple single", in: `${'''a '} b'''}`, want: []Segment{ex(`'''a '} b'''`, 0, 15)}, single: true},
		{name: "triple double", in: `${"""}"""}`, want: []Segment{ex(`"""}"""`, 0, 10)}, single: true},
		{name: "bytes literal", in: `${b'}'}`, want: []Segment{ex(`b'}'`, 0, 7)}, single: true},
		{name: "raw bytes literal", in: `${br'\'}`, want: []Segment{ex(`br'\'`, 0, 8)}, single: true},
		{name: "identifier ending in r", in: `${bar + '}'}`, want: []Segment{ex(`bar + '}'`, 0, 12)}, single: true},
		{name: "backtick identifier", in: "${self.`a}b`}", want: []Segment{ex("self.`a}b`", 0, 13)}, single: true},
		{name: "text only", in: "plain", want: []Segment{txt("plain", 0, 5)}},
		{name: "unterminated", in: "x-${self.a", want: []Segment{txt("x-", 0, 2)},
			errs: TemplateErrors{{Offset: 2, Message: "unterminated ${: add the closing }, or write $${ for a literal ${"}}},
		{name: "unterminated by string", in: "${'}", want: nil,
			errs: TemplateErrors{{Offset: 2, Message: "unterminated string literal in ${…}; close the quote (a } inside a string does not end the expression)"}}},
		{name: "unterminated triple", in: "${'''}'}", want: nil,
			errs: TemplateErrors{{Offset: 2, Message: "unterminated string literal in ${…}; close the quote (a } inside a string does not end the expression)"}}},
		{name: "unterminated nested", in: "${ {'a': 1}", want: nil,
			errs: TemplateErrors{{Offset: 0, Message: "unterminated ${: add the closing }, or write $${ for a literal ${"}}},
		{name: "empty", in: "a${}b", want: []Segment{txt("a", 0, 1), txt("b", 4, 5)},
			errs: TemplateErrors{{Offset: 1, Message: "empty ${}: write an expression inside, e.g. ${self.metadata.name}, or $${} for the literal text"}}},
		{name: "blank", in: "${ }", want: nil,
			errs: TemplateErrors{{Offset: 0, Message: "empty ${}: write an expression inside, e.g. ${self.metadata.name}, or $${} for the literal text"}}},
		{name: "all problems", in: "${} ${  } ${x", want: []Segment{txt(" ", 3, 4), txt(" ", 9, 10)},
			errs: TemplateErrors{
				{Offset: 0, Message: "empty ${}: write an expression inside, e.g. ${self.metadata.name}, or $${} for the literal text"},
				{Offset: 4, Message: "empty ${}: write an expression inside, e.g. ${self.metadata.name}, or $${} for the literal text"},
				{Offset: 10, Message: "unterminated ${: add the closing }, or write $${ for a literal ${"},
			}},
		{name: "mixed with legacy", in: "${self.metadata.name}-{{ .spec.x }}", want: nil,
			errs: TemplateErrors{{Offset: 22, Message: "a string may not mix CEL ${…} with a legacy {{…}} template; write it all in CEL, e.g. ${self.metadata.name} for {{ .metadata.name }}"}}},
		{name: "map literal right after ${", in: "${{'a': 1}}", want: nil,
			errs: TemplateErrors{{Offset: 1, Message: "${{ reads as a legacy {{…}} template; put a space before a map literal: ${ {'key': value} }"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := ParseTemplate(tc.in)
			if !reflect.DeepEqual(tmpl.Segments, tc.want) {
				t.Errorf("segments:\n got %#v\nwant %#v", tmpl.Segments, tc.want)
			}
			if tc.errs == nil {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				if tmpl.Single() != tc.single {
					t.Errorf("Single() = %v, want %v", tmpl.Single(), tc.single)
				}
				return
			}
			got, ok := err.(TemplateErrors)
			if !ok {
				t.Fatalf("error %v (%T), want TemplateErrors", err, err)
			}
			if !reflect.DeepEqual(got, tc.errs) {
				t.Errorf("errors:\n got %v\nwant %v", got, tc.errs)
			}
		})
	}
}

// The lexer agrees with CEL's own parser: every expression it cuts out
// parses, so a `}` it skipped was really inside a literal.
func TestParseTemplateExpressionsParse(t *testing.T) {
	b := newBackend(t, Options{})
	se, err := b.schemaEnv(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{
		"${ {'a': {'b': 1}}['a']}", "${ {'a': {'b': '}'}}['a'].b}/x", "${'}'}", `${"}" + "{"}`, `${'it\'s }'}`, `${R"a}\"}`,
		`${'''a '} b'''}`, `${"""}"""}`, `${b'}'}`, `${br'\'}`, "${self.`a.b-c/d`}",
	} {
		tmpl, err := ParseTemplate(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		for _, s := range tmpl.Exprs() {
			if _, iss := se.env.Parse(s.Text); iss != nil && iss.Err() != nil {
				t.Errorf("%s: expression %q does not parse: %v", in, s.Text, iss.Err())
			}
		}
	}
}

package cel

import (
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
)

// FuzzParseTemplate splits arbitrary strings into text and `${…}`: an error,
// or segments that tile the input in order, each expression starting with
// `${` and ending with `}`.
func FuzzParseTemplate(f *testing.F) {
	for _, s := range []string{"", "plain", "${self.spec.a}", "a-${x}-b", "$${not}", "${'}'}", "${\"a\" + '}'}", "${r'''}'''}", "${", "}${", "${a}${b}", "${{'a': 1}['a']}", "x$${${y}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tmpl, err := ParseTemplate(s)
		if err != nil {
			return
		}
		at := 0
		for _, seg := range tmpl.Segments {
			if seg.Offset != at || seg.End < seg.Offset || seg.End > len(s) {
				t.Fatalf("segment %+v does not follow byte %d of %q", seg, at, s)
			}
			if seg.Kind == ExprSegment && (!strings.HasPrefix(s[seg.Offset:], "${") || s[seg.End-1] != '}') {
				t.Fatalf("expression segment %+v of %q is not ${…}", seg, s)
			}
			at = seg.End
		}
		if at != len(s) {
			t.Fatalf("segments of %q end at %d, not %d", s, at, len(s))
		}
	})
}

// FuzzCompileEval compiles arbitrary values against the widget schema and
// evaluates what compiles on a sample object: errors, never panics, and
// evaluation bounded by the cost limits.
func FuzzCompileEval(f *testing.F) {
	for _, s := range []string{
		"${self.spec.replicas}", "${self.spec.?nested.?b.orValue('x')}", "${self.metadata.name}-${self.spec.port}",
		"${self.spec.items.map(i, i + 'x')}", "${self.spec.items.all(i, i.size() > 0)}", "${string(self.spec.replicas * 2)}",
		"${self.spec.objs.filter(o, o.value > 1).size()}", "${[1,2,3].map(x, [x, x]).size()}", "${self.spec.config.deep.list[0]}",
		"${1/0}", "${'a'.repeat(3)}", "${self.spec.labels.k}", "${has(self.spec.nested) ? 1 : 2}",
	} {
		f.Add(s)
	}
	b, err := New(Options{})
	if err != nil {
		f.Fatal(err)
	}
	obj := objYAML(f, widgetObj)
	self := widget(f)
	f.Fuzz(func(t *testing.T, src string) {
		e, diags := b.CompileValue(src, &engine.Context{Field: "x", Pos: testPos, Self: self})
		if e == nil {
			if !diags.HasErrors() {
				t.Fatalf("%q: no expression and no error", src)
			}
			return
		}
		_, _ = e.Eval(engine.NewScope(obj))
	})
}

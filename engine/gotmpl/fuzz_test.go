package gotmpl

import (
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
)

// FuzzLegacy parses, checks, translates and evaluates arbitrary legacy
// templates against the test schema and object: errors, never panics. The
// runtime budget (steps and output bytes) bounds every evaluation, so any
// template may be evaluated.
func FuzzLegacy(f *testing.F) {
	for _, s := range []string{
		"{{ .spec.image }}", "{{ .metadata.name }}-{{ .spec.replicas }}", "{{ if eq .spec.tier \"pro\" }}a{{ else }}b{{ end }}",
		"{{ range .spec.items }}{{ . }},{{ end }}", "{{ default \"x\" .spec.missing | upper }}", "{{ printf \"%s-%d\" .metadata.name 3 }}",
		"{{ .spec.nested.inner.value | quote }}", "{{ with .spec.config }}{{ .a }}{{ end }}", "{{ toYaml .spec.config }}",
		"{{ range $k, $v := .spec.config }}{{ $k }}={{ $v }};{{ end }}", "{{ len .spec.items | add 1 }}", "{{ $x := 3 }}{{ $x }}",
		"{{ index .spec.items 0 }}", "{{ repeat 3 \"ab\" }}", "{{ randAlphaNum 8 }}", "{{ .spec.image | b64enc | b64dec }}", "{{", "{{ end }}",
	} {
		f.Add(s)
	}
	b := New(nil)
	obj := testObject()
	f.Fuzz(func(t *testing.T, src string) {
		ctx := testCtx(t)
		ctx.AllowRandom = true
		_, _ = TranslateValue(src, ctx, TranslateOptions{})
		e, diags := b.CompileValue(src, ctx)
		if e == nil {
			if !diags.HasErrors() {
				t.Fatalf("%q: no expression and no error", src)
			}
			return
		}
		_, _ = e.Eval(engine.NewScope(obj))
	})
}

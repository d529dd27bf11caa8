package gotmpl

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

func TestParseCanonicalDefault(t *testing.T) {
	for src, want := range map[string]string{
		`{{ default .spec.x "y" }}`:              `{{default "y" .spec.x}}`, // value first: swapped
		`{{ default "y" .spec.x }}`:              `{{default "y" .spec.x}}`, // fallback first: kept
		`{{ .spec.x | default "y" }}`:            `{{.spec.x | default "y"}}`,
		`{{ default (toUpper .a) 0 }}`:           `{{default 0 (toUpper .a)}}`,
		`{{ default $.spec.x nil }}`:             `{{default nil $.spec.x}}`,
		`{{ if .a }}{{ default .b 1 }}{{ end }}`: `{{if .a}}{{default 1 .b}}{{end}}`,
	} {
		tree, err := Parse(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got := tree.Root.String(); got != want {
			t.Errorf("%s → %s, want %s", src, got, want)
		}
	}
	_, err := Parse("ab\n{{ .x ) }}")
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Offset != 9 || pe.Msg != "template syntax error: unexpected right paren" {
		t.Errorf("Parse error = %#v", err)
	}
}

// TestConcurrentEval evaluates one compiled template and one compiled
// structured condition from many goroutines (run with -race).
func TestConcurrentEval(t *testing.T) {
	ctx := testCtx(t)
	ctx.Coerce = engine.CoerceGuess
	e, diags := New(nil).CompileValue(`{{ .metadata.name }}-{{ .spec.port }}`, ctx)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	c, diags := New(kubeCEL{}).CompileStructured([]*katalog.Condition{cond("spec.port", "gt", "100"), cond("{{ .metadata.name }}", "prefix", "app")}, true, condCtx(t))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				obj := testObject()
				obj["metadata"].(map[string]any)["name"] = fmt.Sprintf("app%d", g)
				obj["spec"].(map[string]any)["port"] = int64(i)
				s := engine.NewScope(obj)
				v, err := e.Eval(s)
				if want := fmt.Sprintf("app%d-%d", g, i); err != nil || v != want {
					t.Errorf("%v, %v; want %s", v, err, want)
					return
				}
				ok, err := c.Eval(s)
				if err != nil || ok != (i > 100) {
					t.Errorf("port %d: %v, %v", i, ok, err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
}

// BenchmarkTemplateEval is one evaluation of a typical name template;
// BenchmarkTemplateEvalBaseline does the same by hand (map lookups and
// fmt.Sprint), for the ratio.
func BenchmarkTemplateEval(b *testing.B) {
	ctx := testCtx(b)
	e, diags := New(nil).CompileValue(`{{ .metadata.name }}-{{ .spec.port }}`, ctx)
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	obj := testObject()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.Eval(engine.NewScope(obj)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTemplateEvalBaseline(b *testing.B) {
	obj := testObject()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		name := obj["metadata"].(map[string]any)["name"]
		port := obj["spec"].(map[string]any)["port"]
		_ = fmt.Sprint(name, "-", port)
	}
}

// BenchmarkStructuredCondition is one `field: spec.tier / equals:` condition
// through CEL.
func BenchmarkStructuredCondition(b *testing.B) {
	c, diags := New(kubeCEL{}).CompileStructured([]*katalog.Condition{cond("spec.tier", "equals", "enterprise")}, true, condCtx(b))
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	obj := testObject()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if ok, err := c.Eval(engine.NewScope(obj)); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}

package gotmpl

import (
	"os"
	"testing"
	"time"

	celgo "github.com/google/cel-go/cel"
	"sigs.k8s.io/yaml"

	"github.com/orkspace/orkestra-cel/engine"
	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/katalog"
)

// BenchmarkMigrated evaluates templates of the legacy example and the CEL
// programs `orkestra migrate` turns them into, on the example's WebApp,
// in the same run: legacy and cel ns/op, and x-legacy = cel time / legacy
// time measured alternately (so both see the same machine load). The
// scope is shared by the iterations, as one object's expressions share it.
func BenchmarkMigrated(b *testing.B) {
	k, diags := katalog.Load("testdata/legacy-website/katalog.yaml")
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	self := k.CRDs[0].Schema()
	raw, err := os.ReadFile("testdata/legacy-website/webapp.yaml")
	if err != nil {
		b.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		b.Fatal(err)
	}
	obj["spec"].(map[string]any)["replicas"] = int64(2)
	obj["spec"].(map[string]any)["port"] = int64(2368)
	cel, err := celengine.New(celengine.Options{Libraries: []celgo.EnvOption{CELLibrary()}})
	if err != nil {
		b.Fatal(err)
	}
	str := typed("string")
	integer := typed("integer")
	cases := []struct {
		name, src string
		expected  *engine.Context
	}{
		{"interpolation", `{{ .metadata.name }}-svc:{{ .spec.port }}`, &engine.Context{Expected: &str}},
		{"whole-field", `{{ .spec.replicas }}`, &engine.Context{Expected: &integer}},
		{"default", `{{ default .spec.environment "dev" }}`, &engine.Context{Expected: &str}},
	}
	for _, c := range cases {
		ctx := c.expected
		ctx.Self, ctx.SelfVersion, ctx.Field, ctx.Entry = self, "v1alpha1", "operatorBox.onCreate.configMaps[0].data.x", "webapp"
		out, err := TranslateValue(c.src, ctx, TranslateOptions{Namespaced: true, Defaulted: true})
		if err != nil {
			b.Fatal(err)
		}
		old, d := New(cel).CompileValue(c.src, ctx)
		if d.HasErrors() {
			b.Fatal(d)
		}
		nw, d := cel.CompileValue(out, ctx)
		if d.HasErrors() {
			b.Fatal(d)
		}
		s := engine.NewScope(obj)
		if a, z := evalExpr(old, obj), evalExpr(nw, obj); !same(a, z, false) {
			b.Fatalf("%s: legacy %s, cel %s", out, a, z)
		}
		eval := func(e engine.Expr) func() {
			return func() {
				if _, err := e.Eval(s); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.Run(c.name+"/legacy", func(b *testing.B) {
			b.ReportAllocs()
			f := eval(old)
			for i := 0; i < b.N; i++ {
				f()
			}
		})
		b.Run(c.name+"/cel", func(b *testing.B) {
			b.ReportAllocs()
			f := eval(nw)
			for i := 0; i < b.N; i++ {
				f()
			}
		})
		b.Run(c.name+"/ratio", func(b *testing.B) {
			b.Logf("%s → %s", c.src, out)
			versus(b, eval(nw), eval(old))
		})
	}
}

// versus runs f and baseline alternately and reports how many times
// slower f is (x-legacy; below 1 is faster) with both ns/op.
func versus(b *testing.B, f, baseline func()) {
	const rounds = 200
	var ft, bt time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		for j := 0; j < rounds; j++ {
			baseline()
		}
		bt += time.Since(start)
		start = time.Now()
		for j := 0; j < rounds; j++ {
			f()
		}
		ft += time.Since(start)
	}
	b.ReportMetric(float64(ft)/float64(bt), "x-legacy")
	b.ReportMetric(float64(ft.Nanoseconds())/float64(b.N*rounds), "cel-ns/op")
	b.ReportMetric(float64(bt.Nanoseconds())/float64(b.N*rounds), "legacy-ns/op")
}

package cel

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/orkspace/orkestra-cel/engine"
)

// Hand-written Go equivalents of the benchmarked expressions: the baseline
// the CEL backend is compared with.

func goWholeField(obj map[string]any) (any, error) {
	spec, ok := obj["spec"].(map[string]any)
	if !ok {
		return nil, engine.ErrAbsent
	}
	v, ok := spec["replicas"]
	if !ok || v == nil {
		return nil, engine.ErrAbsent
	}
	switch x := v.(type) {
	case int64:
		return x, nil
	case float64:
		if x == math.Trunc(x) {
			return int64(x), nil
		}
	}
	return nil, engine.ErrAbsent
}

func goInterpolation(obj map[string]any) (any, error) {
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		return nil, engine.ErrAbsent
	}
	name, ok1 := meta["name"].(string)
	ns, ok2 := meta["namespace"].(string)
	if !ok1 || !ok2 {
		return nil, engine.ErrAbsent
	}
	return name + "." + ns + ".svc.cluster.local", nil
}

func goExpression(obj map[string]any) (any, error) {
	v, err := goWholeField(obj)
	if err != nil {
		return nil, err
	}
	return v.(int64) * 2, nil
}

type benchCase struct {
	name     string
	src      string
	baseline func(map[string]any) (any, error)
}

var benchCases = []benchCase{
	{"whole-field", "${self.spec.replicas}", goWholeField},
	{"interpolation", "${self.metadata.name}.${self.metadata.namespace}.svc.cluster.local", goInterpolation},
	{"expression", "${self.spec.replicas * 2}", goExpression},
}

func compileBench(b *testing.B, src string) engine.Expr {
	backend := newBackend(b, Options{})
	e, diags := backend.CompileValue(src, &engine.Context{Field: "x", Pos: testPos, Self: widget(b)})
	if len(diags) > 0 {
		b.Fatal(diags)
	}
	return e
}

// BenchmarkEval measures Eval of compiled values next to the hand-written Go
// baseline. The scope is shared by the iterations, as the expressions of one
// object share it (for the program path the converted self is memoised in it).
func BenchmarkEval(b *testing.B) {
	obj := objYAML(b, widgetObj)
	for _, bc := range benchCases {
		e := compileBench(b, bc.src)
		b.Run(bc.name+"/cel", func(b *testing.B) {
			s := engine.NewScope(obj)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := e.Eval(s); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"/go", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := bc.baseline(obj); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// ratio runs f and baseline alternately and reports how many times slower f
// is (metric x-go), so that both see the same machine load.
func ratio(b *testing.B, f, baseline func()) {
	const rounds = 1000
	var celTime, goTime time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		for j := 0; j < rounds; j++ {
			baseline()
		}
		goTime += time.Since(start)
		start = time.Now()
		for j := 0; j < rounds; j++ {
			f()
		}
		celTime += time.Since(start)
	}
	b.ReportMetric(float64(celTime)/float64(goTime), "x-go")
	b.ReportMetric(float64(celTime.Nanoseconds())/float64(b.N*rounds), "cel-ns/op")
	b.ReportMetric(float64(goTime.Nanoseconds())/float64(b.N*rounds), "go-ns/op")
}

// BenchmarkEvalRatio reports Eval against the baseline per case, the scope
// shared as in BenchmarkEval.
func BenchmarkEvalRatio(b *testing.B) {
	obj := objYAML(b, widgetObj)
	for _, bc := range benchCases {
		e := compileBench(b, bc.src)
		b.Run(bc.name, func(b *testing.B) {
			s := engine.NewScope(obj)
			ratio(b, func() {
				if _, err := e.Eval(s); err != nil {
					b.Fatal(err)
				}
			}, func() {
				if _, err := bc.baseline(obj); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkConversion converts one Website object from v1alpha1 to v1 the way
// a conversion path does (a new scope per object, plain references, one
// interpolation, a literal), against the same conversion written in Go.
func BenchmarkConversion(b *testing.B) {
	schemas := crdSchemas(b, "testdata/website-crd.yaml")
	backend := newBackend(b, Options{})
	type field struct {
		name string
		e    engine.Expr
	}
	var fields []field
	for _, f := range [][2]string{
		{"image", "${self.spec.image}"}, {"replicas", "${self.spec.replicas}"}, {"port", "${self.spec.port}"},
		{"tier", "${self.spec.tier}"}, {"host", "${self.metadata.name}.${self.metadata.namespace}.svc"},
	} {
		e, diags := backend.CompileValue(f[1], &engine.Context{Field: "spec." + f[0], Pos: testPos, Self: schemas["v1alpha1"]})
		if len(diags) > 0 {
			b.Fatal(diags)
		}
		fields = append(fields, field{f[0], e})
	}
	obj := objYAML(b, `
apiVersion: demo.orkestra.io/v1alpha1
kind: Website
metadata: {name: blog, namespace: web}
spec: {image: "nginx:1.27", replicas: 2, port: 8080, theme: dark, tier: pro}
`)
	celConvert := func() map[string]any {
		s := engine.NewScope(obj)
		spec := make(map[string]any, len(fields)+1)
		for _, f := range fields {
			v, err := f.e.Eval(s)
			if err == engine.ErrAbsent {
				continue
			}
			if err != nil {
				b.Fatal(err)
			}
			spec[f.name] = v
		}
		spec["seo"] = map[string]any{"enabled": false}
		return spec
	}
	goConvert := func() map[string]any {
		in, _ := obj["spec"].(map[string]any)
		meta, _ := obj["metadata"].(map[string]any)
		spec := make(map[string]any, len(fields)+1)
		for _, k := range []string{"image", "replicas", "port", "tier"} {
			if v, ok := in[k]; ok && v != nil {
				spec[k] = v
			}
		}
		name, _ := meta["name"].(string)
		ns, _ := meta["namespace"].(string)
		spec["host"] = name + "." + ns + ".svc"
		spec["seo"] = map[string]any{"enabled": false}
		return spec
	}
	if got, want := celConvert(), goConvert(); !reflect.DeepEqual(got, want) {
		b.Fatalf("conversions differ: %v vs %v", got, want)
	}
	b.Run("cel", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			celConvert()
		}
	})
	b.Run("go", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			goConvert()
		}
	})
	b.Run("ratio", func(b *testing.B) {
		ratio(b, func() { celConvert() }, func() { goConvert() })
	})
}

// BenchmarkCondition measures a compiled condition.
func BenchmarkCondition(b *testing.B) {
	backend := newBackend(b, Options{})
	c, diags := backend.CompileCondition("self.spec.tier != 'free' && self.spec.replicas > 1", &engine.Context{Field: "when", Pos: testPos, Self: widget(b)})
	if len(diags) > 0 {
		b.Fatal(diags)
	}
	obj := objYAML(b, widgetObj)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if ok, err := c.Eval(engine.NewScope(obj)); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkCompile measures compiling against a schema whose environment
// is already built.
func BenchmarkCompile(b *testing.B) {
	backend := newBackend(b, Options{})
	ctx := &engine.Context{Field: "x", Pos: testPos, Self: widget(b)}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, diags := backend.CompileValue("${self.metadata.name}-${self.spec.replicas * 2}", ctx); len(diags) > 0 {
			b.Fatal(diags)
		}
	}
}

package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// largeKatalog writes a katalog of n entries with 20 expressions each
// (deployment, service, configMap fields and conditions, status).
func largeKatalog(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	crd, err := os.ReadFile("testdata/crd.yaml")
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), crd, 0o644); err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	sb.WriteString("apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nspec:\n  crds:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, `    app-%d:
      crdFile: ./crd.yaml
      apiTypes: {group: test.orkestra.io, version: v1, kind: App}
      operatorBox:
        status:
          fields:
            - {path: phase, value: "${self.spec.?tier.orValue('free') == 'pro' ? 'Premium' : 'Standard'}"}
            - {path: ready, value: "${self.spec.?replicas.orValue(1)}"}
        onReconcile:
          deployments:
            - name: "${self.metadata.name}-%d"
              image: "${self.spec.image}"
              replicas: "${self.spec.?replicas.orValue(1) + 1}"
              labels:
                app: "${self.metadata.name}"
                tier: "${self.spec.?tier.orValue('free')}"
              when: "self.spec.image != ''"
          services:
            - name: "${self.metadata.name}-svc-%d"
              port: "${self.spec.?replicas.orValue(80)}"
              targetPort: "${self.spec.?replicas.orValue(8080)}"
              type: "${self.spec.?tier.orValue('free') == 'pro' ? 'LoadBalancer' : 'ClusterIP'}"
              when: "self.spec.?tier.orValue('free') != 'free'"
          configMaps:
            - name: "${self.metadata.name}-cfg-%d"
              data:
                hosts: "${self.spec.?bounded.orValue([]).join(',')}"
                image: "${self.spec.image.lowerAscii()}"
                ns: "${self.metadata.namespace}"
                size: "${string(self.spec.?replicas.orValue(0) * 2)}"
                banner: "${self.metadata.name} runs ${self.spec.image}"
              when: "self.spec.?bounded.orValue([]).size() < 5"
`, i, i, i, i)
	}
	p := filepath.Join(dir, "k.yaml")
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkLoadAndCompileLarge loads and compiles a 100-entry katalog of
// 2000 expressions; it reports time and allocations per expression.
func BenchmarkLoadAndCompileLarge(b *testing.B) {
	p := largeKatalog(b, 100)
	be := backends(b)
	var exprs int
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k, diags := katalog.Load(p)
		if diags.HasErrors() {
			b.Fatal(diags)
		}
		plan, cdiags := engine.Compile(k, be, engine.CompileOptions{})
		if cdiags.HasErrors() {
			b.Fatal(cdiags)
		}
		exprs = plan.Stats.Expressions
	}
	b.StopTimer()
	if exprs != 2000 {
		b.Fatalf("compiled %d expressions, want 2000", exprs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(exprs), "ns/expr")
}

// BenchmarkCompiledExpressionMemory reports the heap a compiled plan (with
// its katalog) keeps per expression: live bytes after a collection, the plan
// held, over the heap before loading. repeated is the 100-entry katalog of
// BenchmarkLoadAndCompileLarge, whose entries share their 20 expressions'
// sources (issue 15 measured about 29 KB before programs were shared; 20 KB
// here before, 2 KB after); unique gives every expression its own source
// (about 35 KB: a cel-go program holds its own table of the environment's
// function overloads).
func BenchmarkCompiledExpressionMemory(b *testing.B) {
	for _, c := range []struct {
		name string
		path string
	}{
		{"repeated", largeKatalog(b, 100)},
		{"unique", uniqueKatalog(b, 100)},
	} {
		b.Run(c.name, func(b *testing.B) {
			be := backends(b)
			var perExpr float64
			for b.Loop() {
				before := liveHeap()
				k, diags := katalog.Load(c.path)
				if diags.HasErrors() {
					b.Fatal(diags)
				}
				plan, cdiags := engine.Compile(k, be, engine.CompileOptions{})
				if cdiags.HasErrors() {
					b.Fatal(cdiags)
				}
				perExpr = float64(liveHeap()-before) / float64(plan.Stats.Expressions)
				runtime.KeepAlive(plan)
			}
			b.ReportMetric(perExpr, "live-B/expr")
		})
	}
}

// uniqueKatalog writes a katalog of n entries with 20 expressions each, no
// two with the same source.
func uniqueKatalog(b testing.TB, n int) string {
	b.Helper()
	dir := b.TempDir()
	crd, err := os.ReadFile("testdata/crd.yaml")
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), crd, 0o644); err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	sb.WriteString("apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nspec:\n  crds:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "    app-%d:\n      crdFile: ./crd.yaml\n      apiTypes: {group: test.orkestra.io, version: v1, kind: App}\n      operatorBox:\n        onReconcile:\n          configMaps:\n            - name: cfg\n              data:\n", i)
		for j := 0; j < 20; j++ {
			fmt.Fprintf(&sb, "                k%d: \"${self.spec.image + '-%d-%d'}\"\n", j, i, j)
		}
	}
	p := filepath.Join(dir, "k.yaml")
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

package simulate

import (
	"io"
	"testing"
)

// BenchmarkFiveCycles runs a 5-cycle spec of a one-entry katalog
// (testdata/shop/simulate-free.yaml: read the spec, load and compile the
// katalog, build the in-memory cluster, reconcile 5 cycles, check), and
// reports it as a ratio to loading and compiling the katalog alone, measured
// in the same run.
func BenchmarkFiveCycles(b *testing.B) {
	const file = "testdata/shop/simulate-free.yaml"
	spec, err := Read(file)
	if err != nil {
		b.Fatal(err)
	}
	var compileNs float64
	b.Run("baseline-compile", func(b *testing.B) {
		for b.Loop() {
			if _, err := compile(io.Discard, spec.Run.Katalog, nil); err != nil {
				b.Fatal(err)
			}
		}
		compileNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("simulate", func(b *testing.B) {
		for b.Loop() {
			if outcome, out := runFile(b, file, Options{}); outcome != Passed {
				b.Fatalf("outcome %s:\n%s", outcome, out)
			}
		}
		ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(ns/1e6, "ms/spec")
		if compileNs > 0 {
			b.ReportMetric(ns/compileNs, "x-compile")
		}
	})
}

package storage

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
)

const benchObjects = 10000

var (
	benchOnce sync.Once
	benchCRD  *apiextensionsv1.CustomResourceDefinition
)

// flipStorage makes the other version the storage version and waits until
// the API server stores at it: every object then needs a migration.
func flipStorage(b *testing.B) string {
	b.Helper()
	crd := getCRD(b, benchCRD.Name)
	to := "v2"
	if StorageVersion(crd) == "v2" {
		to = "v1"
	}
	setStorage(b, crd.Name, to)
	m, err := New(testCfg, Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := m.awaitStorage(context.Background(), getCRD(b, crd.Name)); err != nil {
		b.Fatal(err)
	}
	return to
}

// naiveRewrite is the baseline: what a migration written the obvious way
// does — one list of every object, then an unchanged update (PUT of the
// object as read) of each, one after the other.
func naiveRewrite(b *testing.B, d dynamic.Interface, version string) int {
	b.Helper()
	res := d.Resource(gvrOf(benchCRD, version))
	list, err := res.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range list.Items {
		o := &list.Items[i]
		if _, err := res.Namespace(o.GetNamespace()).Update(context.Background(), o, metav1.UpdateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	return len(list.Items)
}

// BenchmarkMigrate10k migrates 10 000 objects against envtest, first with
// the baseline (naiveRewrite), then with the Migrator (metadata-only
// pages of 500, merge patches carrying only the resourceVersion, 4
// workers, no rate limit), and reports both rates, their ratio and the API
// calls per object. Run it with -benchtime=1x: one iteration is a full
// migration of each.
func BenchmarkMigrate10k(b *testing.B) {
	benchOnce.Do(func() {
		benchCRD = testCRD("benchmarks")
		installCRD(b, benchCRD)
		start := time.Now()
		createObjects(b, benchCRD, "v1", benchObjects)
		b.Logf("created %d objects in %s", benchObjects, time.Since(start).Round(time.Millisecond))
	})
	var baseCalls, calls requestCounter
	baseDyn := dynamic.NewForConfigOrDie(countingConfig(&baseCalls))
	m, err := New(countingConfig(&calls), Options{})
	if err != nil {
		b.Fatal(err)
	}
	var baseTime, ourTime time.Duration
	var objects int64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		to := flipStorage(b)
		baseCalls.reset()
		b.StartTimer()
		start := time.Now()
		n := naiveRewrite(b, baseDyn, to)
		baseTime += time.Since(start)
		b.StopTimer()
		if n != benchObjects {
			b.Fatalf("baseline rewrote %d objects, want %d", n, benchObjects)
		}

		to = flipStorage(b)
		// The flip above left storedVersions listing both versions; the
		// Migrator rewrites everything at the new one and prunes.
		calls.reset()
		b.StartTimer()
		start = time.Now()
		res, err := m.Migrate(context.Background(), benchCRD.Name)
		ourTime += time.Since(start)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if res.Migrated+res.Skipped != benchObjects || !slices.Equal(res.StoredAfter, []string{to}) {
			b.Fatalf("migration: %+v", res)
		}
		objects += res.Migrated + res.Skipped
		b.StartTimer()
	}
	b.StopTimer()
	ours := float64(objects) / ourTime.Seconds()
	base := float64(objects) / baseTime.Seconds()
	b.ReportMetric(ours, "objects/s")
	b.ReportMetric(base, "baseline-objects/s")
	b.ReportMetric(ours/base, "x-baseline")
	b.ReportMetric(float64(calls.total.Load())/float64(benchObjects), "calls/object")
	b.ReportMetric(float64(baseCalls.total.Load())/float64(benchObjects), "baseline-calls/object")
	b.Logf("last run: %s", fmt.Sprint(calls.count("GET", "/apis/storage.test.orkestra.io/"), " lists and discovery reads, ", calls.count("PATCH", "/namespaces/"), " object patches, ", calls.count("PATCH", "customresourcedefinitions"), " CRD patches, ", calls.count("PUT", "customresourcedefinitions"), " CRD status writes"))
}

package storage

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
)

// migrated returns a CRD of plural with n objects written at v1, then v2
// made the storage version: storedVersions is [v1 v2].
func migrationCase(t *testing.T, plural string, n int) (*apiextensionsv1.CustomResourceDefinition, []string) {
	t.Helper()
	crd := testCRD(plural)
	installCRD(t, crd)
	names := createObjects(t, crd, "v1", n)
	setStorage(t, crd.Name, "v2")
	if got := getCRD(t, crd.Name).Status.StoredVersions; !slices.Equal(got, []string{"v1", "v2"}) {
		t.Fatalf("storedVersions after the storage switch = %v, want [v1 v2]", got)
	}
	return crd, names
}

func assertAllStoredAt(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, names []string, version string) {
	t.Helper()
	stored := storedAPIVersions(t, crd)
	want := crd.Spec.Group + "/" + version
	for _, n := range names {
		if got, ok := stored[n]; !ok {
			t.Errorf("etcd holds no %s", n)
		} else if got != want {
			t.Errorf("etcd holds %s at %s, want %s", n, got, want)
		}
	}
}

func TestMigrateRewritesEveryObjectAndPrunesStoredVersions(t *testing.T) {
	crd, names := migrationCase(t, "alphas", 25)
	assertAllStoredAt(t, crd, names, "v1")

	var calls requestCounter
	var last Progress
	m, err := New(countingConfig(&calls), Options{PageSize: 10, Progress: func(p Progress) { last = p }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Migrate(context.Background(), crd.Name)
	if err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	if res.Method != MethodOrkestra || res.Migrated != 25 || res.Skipped != 0 || res.Pages != 3 || res.Resumed {
		t.Errorf("result = %+v, want method orkestra, 25 migrated, 0 skipped, 3 pages, not resumed", res)
	}
	if !slices.Equal(res.StoredBefore, []string{"v1", "v2"}) || !slices.Equal(res.StoredAfter, []string{"v2"}) {
		t.Errorf("stored versions %v → %v, want [v1 v2] → [v2]", res.StoredBefore, res.StoredAfter)
	}
	assertAllStoredAt(t, crd, names, "v2")

	after := getCRD(t, crd.Name)
	if !slices.Equal(after.Status.StoredVersions, []string{"v2"}) {
		t.Errorf("status.storedVersions = %v, want [v2]", after.Status.StoredVersions)
	}
	if _, ok := after.Annotations[AnnotationProgress]; ok {
		t.Errorf("the progress annotation is still on the CRD: %s", after.Annotations[AnnotationProgress])
	}
	cond := apihelpers.FindCRDCondition(after, apiextensionsv1.StorageMigrating)
	if cond == nil || cond.Status != apiextensionsv1.ConditionFalse || cond.Reason != "MigrationSucceeded" {
		t.Errorf("StorageMigrating condition = %+v, want False/MigrationSucceeded", cond)
	}
	if last.Migrated != 25 || last.Remaining != 0 || last.Method != MethodOrkestra {
		t.Errorf("last progress = %+v, want 25 migrated, 0 remaining, method orkestra", last)
	}
	// One write per object, one list per page, one progress save per page
	// but the last.
	if got := calls.count("PATCH", "/apis/storage.test.orkestra.io/v2/namespaces/"); got != 25 {
		t.Errorf("object writes = %d, want 25", got)
	}
	if got := calls.count("GET", "/apis/storage.test.orkestra.io/v2/alphas"); got != 3 {
		t.Errorf("list calls = %d, want 3", got)
	}
	if got := calls.count("PATCH", "customresourcedefinitions/alphas"); got != 3 {
		t.Errorf("CRD patches = %d, want 3 (2 progress saves, 1 removal)", got)
	}

	// A second run finds nothing to do and writes nothing.
	calls = requestCounter{}
	res, err = m.Migrate(context.Background(), crd.Name)
	if err != nil || res.Method != MethodNone || res.Migrated != 0 {
		t.Errorf("second Migrate = %+v, %v; want nothing done", res, err)
	}
	if got := calls.count("PATCH", ""); got != 0 {
		t.Errorf("second run wrote %d times, want 0", got)
	}
}

func TestMigrateResumesAfterARestartWithoutRedoingFinishedPages(t *testing.T) {
	crd, names := migrationCase(t, "betas", 30)

	// The first run stops in the middle of its second page.
	ctx, cancel := context.WithCancel(context.Background())
	var first requestCounter
	m1, err := New(countingConfig(&first), Options{PageSize: 10, Workers: 1, Progress: func(p Progress) {
		if p.Migrated == 15 {
			cancel()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m1.Migrate(ctx, crd.Name)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted Migrate: err = %v, want context.Canceled", err)
	}
	mid := getCRD(t, crd.Name)
	saved, ok, reason := savedState(mid)
	if !ok || saved.Pages != 1 || saved.Migrated != 10 || saved.Continue == "" {
		t.Fatalf("saved progress = %+v (ok %v, %s), want page 1 with 10 migrated and a continue token", saved, ok, reason)
	}
	if !slices.Equal(mid.Status.StoredVersions, []string{"v1", "v2"}) {
		t.Fatalf("storedVersions after the interrupted run = %v, want [v1 v2]", mid.Status.StoredVersions)
	}

	// A new Migrator (a restarted process) goes on after page 1.
	var second requestCounter
	m2, err := New(countingConfig(&second), Options{PageSize: 10, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := m2.Migrate(context.Background(), crd.Name)
	if err != nil {
		t.Fatalf("resumed Migrate: %v", err)
	}
	if !res.Resumed || res.Pages != 3 {
		t.Errorf("result = %+v, want resumed with 3 pages in all", res)
	}
	if got := second.count("PATCH", "/apis/storage.test.orkestra.io/v2/namespaces/"); got != 20 {
		t.Errorf("the resumed run wrote %d objects, want 20 (pages 2 and 3 only)", got)
	}
	// Objects of page 2 the first run wrote already are rewritten again
	// (their page was not finished); they count as migrated both times.
	if res.Migrated+res.Skipped != 30 {
		t.Errorf("migrated %d + skipped %d, want 30 in all", res.Migrated, res.Skipped)
	}
	assertAllStoredAt(t, crd, names, "v2")
	if got := getCRD(t, crd.Name).Status.StoredVersions; !slices.Equal(got, []string{"v2"}) {
		t.Errorf("storedVersions = %v, want [v2]", got)
	}
}

func TestMigrateSkipsObjectsChangedOrDeletedDuringTheRun(t *testing.T) {
	// Listed in key order: ns-a holds the even objects, ns-b the odd ones;
	// pages of 5: [a0 a2 a4 a6 a8] [a10 b1 b3 b5 b7] [b9 b11].
	crd, names := migrationCase(t, "gammas", 12)
	gvr := gvrOf(crd, "v2")
	ctx := context.Background()
	var once atomic.Bool
	m, err := New(testCfg, Options{PageSize: 5, Workers: 1, Progress: func(p Progress) {
		if p.Migrated != 1 || !once.CompareAndSwap(false, true) {
			return
		}
		// After the first write (one worker: a2 is not written yet):
		// delete a4 and change a6 of the page being written, and delete
		// a10 of a page not listed yet — which the next page lists all
		// the same: continued lists are a snapshot of the first one.
		for _, name := range []string{"gammas-00004", "gammas-00010"} {
			if err := dyn.Resource(gvr).Namespace("ns-a").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Errorf("deleting %s: %v", name, err)
			}
		}
		patch := []byte(`{"spec":{"n":100}}`)
		if _, err := dyn.Resource(gvr).Namespace("ns-a").Patch(ctx, "gammas-00006", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Errorf("patching: %v", err)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Migrate(ctx, crd.Name)
	if err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	if res.Migrated != 9 || res.Skipped != 3 {
		t.Errorf("migrated %d, skipped %d; want 9 and 3 (a4 and a10 deleted, a6 changed after the list)", res.Migrated, res.Skipped)
	}
	stored := storedAPIVersions(t, crd)
	for _, gone := range []string{"ns-a/gammas-00004", "ns-a/gammas-00010"} {
		if _, ok := stored[gone]; ok {
			t.Errorf("the deleted object %s is still in etcd", gone)
		}
	}
	left := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == "ns-a/gammas-00004" || n == "ns-a/gammas-00010" })
	assertAllStoredAt(t, crd, left, "v2")
	obj, err := dyn.Resource(gvr).Namespace("ns-a").Get(ctx, "gammas-00006", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n, _, _ := unstructured.NestedInt64(obj.Object, "spec", "n"); n != 100 {
		t.Errorf("the object changed during the run has spec.n %d, want the change (100) kept", n)
	}
}

func TestMigrateCountsAConflictAsSkipped(t *testing.T) {
	crd, _ := migrationCase(t, "deltas", 1)
	m, err := New(testCfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	gvr := gvrOf(crd, "v2")
	list, err := m.meta.Resource(gvr).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list: %v (%d items)", err, len(list.Items))
	}
	obj := list.Items[0]
	// Someone writes the object after the list: its resourceVersion moves.
	if _, err := dyn.Resource(gvr).Namespace(obj.Namespace).Patch(context.Background(), obj.Name, types.MergePatchType, []byte(`{"spec":{"n":7}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	wrote, err := m.rewriteOne(context.Background(), gvr, &obj)
	if err != nil || wrote {
		t.Errorf("rewriting a stale object: wrote %v, err %v; want a skip (conflict) without error", wrote, err)
	}
	obj.Name = "gone"
	wrote, err = m.rewriteOne(context.Background(), gvr, &obj)
	if err != nil || wrote {
		t.Errorf("rewriting a deleted object: wrote %v, err %v; want a skip (not found) without error", wrote, err)
	}
}

func TestMigrateLeavesStoredVersionsWhenTheCRDChangedMeanwhile(t *testing.T) {
	t.Run("storage version switched back", func(t *testing.T) {
		crd, _ := migrationCase(t, "epsilons", 6)
		var once atomic.Bool
		m, err := New(testCfg, Options{PageSize: 3, Workers: 1, Progress: func(p Progress) {
			if p.Migrated == 1 && once.CompareAndSwap(false, true) {
				if err := switchStorage(crd.Name, "v1"); err != nil {
					t.Error(err)
				}
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Migrate(context.Background(), crd.Name)
		if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "generation") {
			t.Fatalf("err = %v, want ErrChanged naming the generation", err)
		}
		if got := getCRD(t, crd.Name).Status.StoredVersions; !slices.Equal(got, []string{"v1", "v2"}) {
			t.Errorf("storedVersions = %v, want [v1 v2] left alone", got)
		}
	})
	t.Run("storedVersions written by someone else", func(t *testing.T) {
		crd, _ := migrationCase(t, "zetas", 4)
		var once atomic.Bool
		m, err := New(testCfg, Options{PageSize: 2, Workers: 1, Progress: func(p Progress) {
			if p.Migrated != 1 || !once.CompareAndSwap(false, true) {
				return
			}
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				c, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), crd.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				c.Status.StoredVersions = []string{"v2", "v1"}
				_, err = ext.ApiextensionsV1().CustomResourceDefinitions().UpdateStatus(context.Background(), c, metav1.UpdateOptions{})
				return err
			})
			if err != nil {
				t.Errorf("writing storedVersions: %v", err)
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Migrate(context.Background(), crd.Name)
		if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "[v2 v1]") {
			t.Fatalf("err = %v, want ErrChanged naming the new storedVersions", err)
		}
		if got := getCRD(t, crd.Name).Status.StoredVersions; !slices.Equal(got, []string{"v2", "v1"}) {
			t.Errorf("storedVersions = %v, want [v2 v1] (what the other writer set)", got)
		}
	})
}

func TestMigrateIsRateLimited(t *testing.T) {
	crd, _ := migrationCase(t, "etas", 10)
	m, err := New(testCfg, Options{QPS: 10, Burst: 1})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := m.Migrate(context.Background(), crd.Name)
	if err != nil || res.Migrated != 10 {
		t.Fatalf("Migrate = %+v, %v", res, err)
	}
	// 10 writes at 10/s with a bucket of 1: the last waits 0.9 s.
	if d := time.Since(start); d < 850*time.Millisecond {
		t.Errorf("10 writes at QPS 10 took %s, want at least 0.9s", d)
	}
	if _, err := New(testCfg, Options{QPS: -1}); err == nil || err.Error() != "the storage migration QPS must not be negative, got -1" {
		t.Errorf("negative QPS: err = %v", err)
	}
}

func TestMigrateFallsBackWhenTheBuiltinMigratorDoesNotProgress(t *testing.T) {
	// envtest serves storagemigration.k8s.io/v1 but runs no
	// kube-controller-manager: a StorageVersionMigration never gets a
	// condition.
	crd, names := migrationCase(t, "thetas", 5)
	var calls requestCounter
	m, err := New(countingConfig(&calls), Options{BuiltinTimeout: time.Second, BuiltinPoll: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Migrate(context.Background(), crd.Name)
	if err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	if res.Method != MethodOrkestra || res.Migrated != 5 {
		t.Errorf("result = %+v, want 5 migrated by orkestra", res)
	}
	if got := calls.count("POST", "storageversionmigrations"); got != 1 {
		t.Errorf("StorageVersionMigrations created = %d, want 1", got)
	}
	if got := calls.count("DELETE", "storageversionmigrations"); got != 1 {
		t.Errorf("StorageVersionMigrations deleted = %d, want the one that made no progress", got)
	}
	assertAllStoredAt(t, crd, names, "v2")

	// The next migration of this Migrator does not try again.
	crd2, _ := migrationCase(t, "iotas", 2)
	calls = requestCounter{}
	if _, err := m.Migrate(context.Background(), crd2.Name); err != nil {
		t.Fatal(err)
	}
	if got := calls.count("POST", "storageversionmigrations"); got != 0 {
		t.Errorf("second migration created %d StorageVersionMigrations, want 0", got)
	}
}

func TestDryRunListsWithoutWriting(t *testing.T) {
	crd, names := migrationCase(t, "kappas", 7)
	var calls requestCounter
	m, err := New(countingConfig(&calls), Options{PageSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	p, err := m.DryRun(context.Background(), crd.Name, func(ns, name string) { listed = append(listed, ns+"/"+name) })
	if err != nil {
		t.Fatal(err)
	}
	if !p.Needed || p.Objects != 7 || p.StorageVersion != "v2" || !slices.Equal(p.StoredVersions, []string{"v1", "v2"}) {
		t.Errorf("plan = %+v", p)
	}
	slices.Sort(listed)
	want := slices.Sorted(slices.Values(names))
	if !slices.Equal(listed, want) {
		t.Errorf("listed %v, want %v", listed, want)
	}
	for _, method := range []string{"PATCH", "PUT", "POST", "DELETE"} {
		if got := calls.count(method, ""); got != 0 {
			t.Errorf("dry run made %d %s calls", got, method)
		}
	}
	assertAllStoredAt(t, crd, names, "v1")
}

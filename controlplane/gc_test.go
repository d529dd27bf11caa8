package controlplane

import (
	"bytes"
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/watchlist"
)

// TestGarbageCollector: on a control plane without kube-controller-manager,
// the dependents of a deleted owner are deleted; dependents of owners that
// exist (one created a moment before), or of kinds not served, are kept.
func TestGarbageCollector(t *testing.T) {
	assets, err := FindAssets(t.Context(), "", &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	cp, err := Start(t.Context(), assets, t.TempDir(), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- NewGarbageCollector(cp.Config).Run(ctx) }()
	defer func() { cancel(); <-done }()
	cs := kubernetes.NewForConfigOrDie(cp.Config)
	cms := cs.CoreV1().ConfigMaps("default")

	mk := func(name string, owners ...metav1.OwnerReference) {
		t.Helper()
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ref := func(kind, apiVersion, name string, uid types.UID) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid}
	}
	mk("owner")
	owner, _ := cms.Get(ctx, "owner", metav1.GetOptions{})
	mk("child", ref("ConfigMap", "v1", "owner", owner.UID))
	mk("orphan", ref("ConfigMap", "v1", "gone", "no-such-uid"))
	mk("foreign", ref("Gizmo", "example.com/v1", "g", "u"))
	mk("two-owners", ref("ConfigMap", "v1", "owner", owner.UID), ref("ConfigMap", "v1", "gone", "no-such-uid"))

	gone := func(name string) bool {
		_, err := cms.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}
	waitGone := func(name string) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !gone(name); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s was not collected", name)
			}
		}
	}
	waitGone("orphan")
	time.Sleep(2 * time.Second) // several sweeps
	for _, kept := range []string{"owner", "child", "foreign", "two-owners"} {
		if gone(kept) {
			t.Errorf("%s was deleted; its owner exists (or is of a kind not served)", kept)
		}
	}
	if err := cms.Delete(ctx, "owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone("child")
	waitGone("two-owners")
	if gone("foreign") {
		t.Error("the dependent of a kind the cluster does not serve was deleted")
	}
}

// TestNamespaceDeletion: on a control plane without kube-controller-manager,
// a deleted namespace is emptied and removed as its namespace controller
// would do; an object holding a finalizer of its own holds the namespace
// (Terminating) until it is released; other namespaces are left alone.
func TestNamespaceDeletion(t *testing.T) {
	assets, err := FindAssets(t.Context(), "", &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	cp, err := Start(t.Context(), assets, t.TempDir(), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- NewGarbageCollector(cp.Config).Run(ctx) }()
	defer func() { cancel(); <-done }()
	cs := kubernetes.NewForConfigOrDie(cp.Config)

	for _, ns := range []string{"doomed", "kept"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, cm := range []*corev1.ConfigMap{
			{ObjectMeta: metav1.ObjectMeta{Name: "plain"}},
			{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"example.com/hold"}}},
		} {
			if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	until := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting until %s", what)
			}
		}
	}
	gone := func(err error) bool { return apierrors.IsNotFound(err) }
	until("the deleted namespace's unheld objects are deleted", func() bool {
		_, e1 := cs.CoreV1().ConfigMaps("doomed").Get(ctx, "plain", metav1.GetOptions{})
		_, e2 := cs.CoreV1().Secrets("doomed").Get(ctx, "s", metav1.GetOptions{})
		return gone(e1) && gone(e2)
	})
	until("the held object is being deleted", func() bool {
		cm, err := cs.CoreV1().ConfigMaps("doomed").Get(ctx, "held", metav1.GetOptions{})
		return err == nil && cm.DeletionTimestamp != nil
	})
	time.Sleep(2 * time.Second) // several sweeps
	if ns, err := cs.CoreV1().Namespaces().Get(ctx, "doomed", metav1.GetOptions{}); err != nil || ns.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("namespace doomed with a held object: want it Terminating, got %v (err %v)", ns.Status.Phase, err)
	}
	held, _ := cs.CoreV1().ConfigMaps("doomed").Get(ctx, "held", metav1.GetOptions{})
	held.Finalizers = nil
	if _, err := cs.CoreV1().ConfigMaps("doomed").Update(ctx, held, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	until("the released namespace is removed", func() bool {
		_, err := cs.CoreV1().Namespaces().Get(ctx, "doomed", metav1.GetOptions{})
		return gone(err)
	})
	for _, name := range []string{"plain", "held"} {
		if cm, err := cs.CoreV1().ConfigMaps("kept").Get(ctx, name, metav1.GetOptions{}); err != nil || cm.DeletionTimestamp != nil {
			t.Errorf("configmap kept/%s of a namespace not deleted was touched (err %v)", name, err)
		}
	}
}

// TestCollectorListsThenWatches: client-go's informers take the
// collector's client as one that lists and then watches (no streamed
// initial list, which on this control plane waits seconds for a new CRD's
// kind, holding back the cleanup of its custom resources' children).
func TestCollectorListsThenWatches(t *testing.T) {
	if !watchlist.DoesClientNotSupportWatchListSemantics(listThenWatch{}) {
		t.Error("client-go would stream the collector's initial lists")
	}
}

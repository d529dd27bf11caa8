// Package envtesting starts the real API server that tests of Kubernetes
// behaviour run against, and finds the module root their fixtures live
// under: one copy for every package's tests.
package envtesting

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/orkspace/orkestra-cel/envassets"
)

// Start starts a kube-apiserver and etcd for the test and stops them when it
// ends. Missing binaries fail the test: the behaviour under test needs a real
// API server, and a skip would pass without proving anything.
func Start(t testing.TB) *rest.Config {
	t.Helper()
	assets, err := envassets.Find(t.Context(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	env := &envtest.Environment{BinaryAssetsDirectory: assets}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest from %s: %v", assets, err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Logf("stopping envtest: %v", err)
		}
	})
	return cfg
}

// RepoRoot is the module root (tests run in their package's directory).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

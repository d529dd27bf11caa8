package envassets

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Nothing found: an error that says how to get the binaries.
func TestFindNothing(t *testing.T) {
	t.Setenv("KUBEBUILDER_ASSETS", "")
	t.Chdir(t.TempDir())
	_, err := Find(context.Background(), "", nil, t.TempDir())
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "hack/envtest-assets.sh") {
		t.Fatalf("Find: %v", err)
	}
}

// A directory given or in KUBEBUILDER_ASSETS must hold both binaries.
func TestFindChecksTheDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "etcd"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Find(context.Background(), dir, nil)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "lacks kube-apiserver") {
		t.Fatalf("Find(dir): %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kube-apiserver"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBEBUILDER_ASSETS", dir)
	if got, err := Find(context.Background(), "", nil); err != nil || got != dir {
		t.Fatalf("Find from KUBEBUILDER_ASSETS: %q, %v", got, err)
	}
}

// The script of a checkout above a search directory runs, its progress shown
// as it goes, and its last stdout line is the directory.
func TestFindRunsTheScript(t *testing.T) {
	t.Setenv("KUBEBUILDER_ASSETS", "")
	root, assets := t.TempDir(), t.TempDir()
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if err := os.WriteFile(filepath.Join(assets, b), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(root, Script)
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte("echo building >&2\necho "+assets+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	var progress bytes.Buffer
	got, err := Find(context.Background(), "", &progress, sub)
	if err != nil || got != assets {
		t.Fatalf("Find: %q, %v", got, err)
	}
	if !strings.Contains(progress.String(), "building") {
		t.Fatalf("progress %q", progress.String())
	}
}

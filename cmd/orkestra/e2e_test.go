package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/controlplane"
)

// The specs and the katalog are our own (testdata/e2e), using the
// constructs of upstream's pkg/e2e/fixture/e2e.yaml (iAlexeze/orkestra):
// each runs on a fresh local control plane, the operator in process.

func runE2ESpecs(t *testing.T, files ...string) (string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	for i, f := range files {
		files[i] = filepath.Join("testdata/e2e", f)
	}
	err := runE2E(t.Context(), &out, &errOut, e2eFlags{files: files, runtime: "in-process", verbosity: -1}, nil)
	code := 0
	var ec exitCode
	switch {
	case errors.As(err, &ec):
		code = int(ec)
	case err != nil:
		t.Fatalf("orkestra e2e: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	t.Logf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	return out.String() + errOut.String(), code
}

func wantAll(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("the output lacks %q", w)
		}
	}
}

// TestE2EPasses: setup, include with merge keys, note-gated expectations,
// the DSL (get with jsonpath and jq, describe, port-forward to the
// runtime's API, apply refused, patch), simulated workloads and the garbage
// collector, exit 0.
func TestE2EPasses(t *testing.T) {
	out, code := runE2ESpecs(t, "pass.yaml")
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	wantAll(t, out,
		"✓ Setup applied before the custom resources",
		"✓ The Widget reconciles into a ConfigMap and a ready Deployment",
		"✓ The same, through a merge key",
		"✓ Status and data carry the Widget's values",
		"✓ The API server refuses an invalid Widget",
		"✓ Scaling the Widget scales and readies its Deployment",
		"✓ Gated in by a note",
		`- Gated out by a note (not run: its when/or does not hold ({{ affirmative }} equals "no"))`,
		"✓ Deleting the Widget removes its children",
		"8 passed, 0 failed, 0 skipped")
}

// TestE2EFails: a failing expectation exits 1 showing what was observed,
// runs its onFailure at once and the spec's at the end; the next
// expectation still runs.
func TestE2EFails(t *testing.T) {
	out, code := runE2ESpecs(t, "fail.yaml")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	wantAll(t, out, `✗ A wrong expectation`, `kubectl.get[0]: equals: want "7", got "2"`, "diagnostics-of-the-expectation",
		"✓ A right one still runs", "kubectl get Widget small", "kind: Widget", "1 passed, 1 failed, 0 skipped")
	if strings.Contains(out, "managedFields") {
		t.Error("the diagnostic get shows managedFields (kubectl hides them)")
	}
}

// TestE2ESuiteSkips: a suite runs its imports; an import whose
// expectations cannot run here (container logs on a control plane without
// nodes, a program not on PATH) exits 3 — never counted as passed.
func TestE2ESuiteSkips(t *testing.T) {
	out, code := runE2ESpecs(t, "suite.yaml")
	if code != 3 {
		t.Fatalf("exit %d, want 3", code)
	}
	wantAll(t, out, "Running E2E: widgets-pass", "Running E2E: widgets-skip",
		"~ Logs need a running container (skipped: kubectl.logs[0]: no container runs on the local control plane",
		`needs orkestra-no-such-program, which is not on PATH`, "✓ This one passes",
		"Suite widgets-suite: 9 passed, 0 failed, 2 skipped, 0 invalid spec(s)")
}

// TestE2EHelmNeedsHelm: a setup with a Helm step cannot run without helm
// on PATH: its expectations are skipped, saying so, and no cluster starts.
func TestE2EHelmNeedsHelm(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	out, code := runE2ESpecs(t, "helm.yaml")
	if code != 3 {
		t.Fatalf("exit %d, want 3", code)
	}
	wantAll(t, out, "setup.helm needs helm on PATH (to install prereq), which is not there")
	if strings.Contains(out, "starting kube-apiserver") {
		t.Error("a control plane started for a spec that cannot run")
	}
}

// TestE2EInvalid: a katalog that does not load makes the spec invalid
// (exit 2) with the katalog's file:line:col; so does a spec with a typo,
// before anything runs.
func TestE2EInvalid(t *testing.T) {
	out, code := runE2ESpecs(t, "invalid.yaml")
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	wantAll(t, out, "bad-katalog.yaml:11:34:", "undefined field 'sise'")

	dir := t.TempDir()
	spec := filepath.Join(dir, "e2e.yaml")
	os.WriteFile(spec, []byte("apiVersion: orkestra.orkspace.io/v1\nkind: E2E\nimports: [{path: ./x.yaml, fresh: true}]\n"), 0o600)
	var o, e bytes.Buffer
	err := runE2E(t.Context(), &o, &e, e2eFlags{files: []string{spec}, runtime: "in-process", verbosity: -1}, nil)
	var ec exitCode
	if !errors.As(err, &ec) || ec != 2 || !strings.Contains(e.String(), "e2e.yaml:3:28: imports[0].fresh: unknown key \"fresh\"") || !strings.Contains(e.String(), "nothing ran") {
		t.Errorf("exit %v\n%s", err, e.String())
	}
}

// TestE2EKind: cluster.provider kind is honoured when kind is on PATH: the
// cluster is created under the spec's name, its kubeconfig used, and it is
// deleted at the end (reuse: false). The kind here is a stand-in script
// whose "cluster" is a local control plane.
func TestE2EKind(t *testing.T) {
	assets, err := controlplane.FindAssets(t.Context(), "", &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cp, err := controlplane.Start(t.Context(), assets, dir, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	log := filepath.Join(dir, "kind.log")
	script := fmt.Sprintf(`#!/bin/sh
echo "$@" >> %s
case "$1 $2" in
  "get clusters") exit 0 ;;
  "get kubeconfig") cat %s ;;
esac
`, log, cp.Kubeconfig)
	bin := filepath.Join(dir, "bin")
	os.MkdirAll(bin, 0o755)
	if err := os.WriteFile(filepath.Join(bin, "kind"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	out, code := runE2ESpecs(t, "kind.yaml")
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	wantAll(t, out, "→ creating kind cluster ork-e2e-test", "E2E Results: widgets-kind (kind cluster ork-e2e-test, the operator running in process)")
	calls, _ := os.ReadFile(log)
	if got := string(calls); got != "get clusters\ncreate cluster --name ork-e2e-test\nget kubeconfig --name ork-e2e-test\ndelete cluster --name ork-e2e-test\n" {
		t.Errorf("kind was called:\n%s", got)
	}
}

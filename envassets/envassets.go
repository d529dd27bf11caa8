// Package envassets finds the kube-apiserver and etcd binaries that
// controller-runtime's envtest runs: for the conformance suite, `orkestra
// dev` and the tests, from one place.
package envassets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Script is the script of an Orkestra checkout that provides (once) and
// prints the directory of kube-apiserver and etcd.
const Script = "hack/envtest-assets.sh"

// ErrNotFound explains how to get the binaries.
var ErrNotFound = errors.New("kube-apiserver and etcd (a real API server for envtest) were not found. " +
	"Set KUBEBUILDER_ASSETS to a directory holding both binaries — in an Orkestra checkout run " +
	"`export KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh)` (or `make envtest`), which builds them from the " +
	"Go module proxy; elsewhere `go run sigs.k8s.io/controller-runtime/tools/setup-envtest@latest use -p path 1.37.x` prints such a directory")

// Find returns the directory holding kube-apiserver and etcd: dir
// when given, else $KUBEBUILDER_ASSETS, else the output of Script
// found in searchDirs, the working directory or one of their parents.
func Find(ctx context.Context, dir string, progress io.Writer, searchDirs ...string) (string, error) {
	check := func(d, from string) (string, error) {
		var missing []string
		for _, b := range []string{"kube-apiserver", "etcd"} {
			if st, err := os.Stat(filepath.Join(d, b)); err != nil || st.IsDir() {
				missing = append(missing, b)
			}
		}
		if len(missing) > 0 {
			return "", fmt.Errorf("%s names %s, which lacks %s: %w", from, d, strings.Join(missing, " and "), ErrNotFound)
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			return d, nil
		}
		return abs, nil
	}
	if dir != "" {
		return check(dir, "the assets directory option")
	}
	if env := os.Getenv("KUBEBUILDER_ASSETS"); env != "" {
		return check(env, "KUBEBUILDER_ASSETS")
	}
	if wd, err := os.Getwd(); err == nil {
		searchDirs = append(searchDirs, wd)
	}
	seen := map[string]bool{}
	for _, start := range searchDirs {
		d, err := filepath.Abs(start)
		if err != nil {
			continue
		}
		for {
			if seen[d] {
				break
			}
			seen[d] = true
			script := filepath.Join(d, Script)
			if st, err := os.Stat(script); err == nil && !st.IsDir() {
				out, err := runScript(ctx, script, progress)
				if err != nil {
					return "", err
				}
				return check(out, script)
			}
			parent := filepath.Dir(d)
			if parent == d {
				break
			}
			d = parent
		}
	}
	return "", ErrNotFound
}

func runScript(ctx context.Context, script string, progress io.Writer) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 45*time.Minute) // a first build compiles both from source
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Dir = filepath.Dir(filepath.Dir(script))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if progress != nil {
		// A first build takes minutes: show it as it goes.
		fmt.Fprintln(progress, "finding kube-apiserver and etcd with", script, "(the first run may build them)…")
		cmd.Stderr = io.MultiWriter(&stderr, progress)
	}
	if err := cmd.Run(); err != nil {
		tail := strings.TrimSpace(stderr.String())
		if len(tail) > 2000 {
			tail = "…" + tail[len(tail)-2000:]
		}
		return "", fmt.Errorf("%s failed (%v): %s: %w", script, err, tail, ErrNotFound)
	}
	out := strings.TrimSpace(stdout.String())
	if i := strings.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:]
	}
	return out, nil
}

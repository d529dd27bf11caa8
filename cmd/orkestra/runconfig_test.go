package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRunKubeconfigIsNotThrottled: `orkestra run --kubeconfig FILE` is not
// held to client-go's default of 5 requests a second (1000 custom resources
// would take minutes to converge); the API server's priority and fairness
// limits it, as in a pod.
func TestRunKubeconfigIsNotThrottled(t *testing.T) {
	file := filepath.Join(t.TempDir(), "kubeconfig")
	kc := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`
	if err := os.WriteFile(file, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	rf := runFlags{kubeconfig: file}
	cfg, err := rf.restConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.QPS >= 0 || cfg.RateLimiter != nil {
		t.Errorf("QPS %v, rate limiter %v: want no client-side limit (QPS < 0)", cfg.QPS, cfg.RateLimiter)
	}
}

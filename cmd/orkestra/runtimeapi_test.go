package main

import "testing"

// TestRuntimeAPI runs testdata/e2e/runtime-api on a local control plane:
// the runtime's HTTP API answers upstream's routes through the real server
// (health, info, custom resources with children and events, the summary),
// endpoints: switches routes off with a 404, and the preReconcile gate
// leaves the App's Deployment as it was while it holds the App back.
func TestRuntimeAPI(t *testing.T) {
	out, code := runE2ESpecs(t, "runtime-api/e2e.yaml")
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	wantAll(t, out,
		"✓ The App reconciles; the runtime reports it healthy and not gated",
		"✓ Disabled, the App is gated and its Deployment stays as it was",
		"✓ Enabled again, the Deployment follows and the gate is cleared",
		"✓ The Route's health route is off, its other routes are served",
		"✓ The Vault serves no route, and stays in the summary",
		"✓ Deleting the custom resources removes their children",
		"6 passed, 0 failed, 0 skipped")
}

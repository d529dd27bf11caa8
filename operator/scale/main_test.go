// Package scale measures one replica of the runtime holding many custom
// resources: convergence time, memory per custom resource at rest, and the
// API writes of an idle resync, against baselines measured in the same run
// (see BenchmarkScale). It holds only tests.
package scale

import (
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	if kubeconfig := os.Getenv(envRuntime); kubeconfig != "" {
		// Started by the benchmark as the runtime under measurement.
		if err := runRuntime(kubeconfig); err != nil {
			fmt.Fprintf(os.Stderr, "runtime: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

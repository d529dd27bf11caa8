// Package scale measures one replica of the runtime holding many custom
// resources: convergence time, memory per custom resource at rest, and the
// API writes of an idle resync, against baselines measured in the same run
// (see BenchmarkScale). It holds only tests.
package scale

import (
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"
)

func TestMain(m *testing.M) {
	if kubeconfig := os.Getenv(envRuntime); kubeconfig != "" {
		// Started by the benchmark as the runtime under measurement; its
		// log goes to a file the benchmark shows when it fails.
		ctrl.SetLogger(textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(os.Stderr))))
		if err := runRuntime(kubeconfig); err != nil {
			fmt.Fprintf(os.Stderr, "runtime: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	ctrl.SetLogger(logr.Discard())
	os.Exit(m.Run())
}

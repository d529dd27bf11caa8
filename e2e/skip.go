package e2e

import (
	"errors"
	"fmt"
)

// cannotRun is the error of a check that cannot run where the spec runs
// (logs of a container on a control plane without nodes): its expectation
// is reported as skipped with the reason, never as passed.
type cannotRun struct{ reason string }

func (c *cannotRun) Error() string { return c.reason }

func cannotRunf(format string, args ...any) error {
	return &cannotRun{reason: fmt.Sprintf(format, args...)}
}

// skipReason is the reason of a cannotRun error, "" for any other error.
func skipReason(err error) string {
	var c *cannotRun
	if errors.As(err, &c) {
		return c.reason
	}
	return ""
}

// noContainers is why container checks cannot run on a control plane
// without nodes.
const noContainers = "no container runs on the local control plane (no kubelet, no nodes); run the spec with --kubeconfig on a cluster with nodes"

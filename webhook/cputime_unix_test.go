//go:build unix

package webhook

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user + system) the process has used: on a
// busy machine a steadier measure of work than wall-clock time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

//go:build race

package webhook

// allocOverhead is how much more the race detector makes a conversion
// allocate (measured: about 1.8×).
const allocOverhead = 2.0

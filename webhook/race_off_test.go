//go:build !race

package webhook

// allocOverhead is how much more the race detector makes a conversion
// allocate; none without it.
const allocOverhead = 1.0

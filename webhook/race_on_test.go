//go:build race

package webhook

// allocOverhead is how much more the race detector makes a conversion
// allocate (measured: about 1.8× for the identity and CEL converters, up to
// 4.9× for legacy templates); the bound is exact without -race.
const allocOverhead = 5.0

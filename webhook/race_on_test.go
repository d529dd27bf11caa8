//go:build race

package webhook

// allocOverhead is how much more the race detector makes a conversion
// allocate (measured: about 1.8× for the identity and CEL converters, up to
// 4.9× for legacy templates); the bound is exact without -race.
const allocOverhead = 5.0

// promptObjects and promptRounds size the prompt client's reviews beside
// slow bodies: the race detector makes a 100-object review take 0.3 to 1 s
// on a busy machine, so fewer, smaller reviews (the budget's fairness does
// not depend on their size).
const promptObjects, promptRounds = 20, 200

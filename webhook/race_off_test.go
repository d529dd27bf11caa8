//go:build !race

package webhook

// allocOverhead is how much more the race detector makes a conversion
// allocate; none without it.
const allocOverhead = 1.0

// promptObjects and promptRounds size the prompt client's reviews beside
// slow bodies: issue 28's 100-object reviews, 500 of them per round.
const promptObjects, promptRounds = 100, 500

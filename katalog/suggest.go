package katalog

import "strings"

// Suggest returns the candidate closest to name when it is close enough to be
// a likely typo (edit distance ≤ 2, or ≤ a third of the name), else "".
func Suggest(name string, candidates []string) string {
	best, bestD := "", -1
	lname := strings.ToLower(name)
	for _, c := range candidates {
		d := EditDistance(lname, strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 {
		return ""
	}
	limit := 2
	if l := len(name) / 3; l > limit {
		limit = l
	}
	if bestD <= limit {
		return best
	}
	return ""
}

// DidYouMean formats a suggestion as a sentence suffix, or "" when none.
func DidYouMean(name string, candidates []string) string {
	if s := Suggest(name, candidates); s != "" {
		return "; did you mean " + quote(s) + "?"
	}
	return ""
}

func quote(s string) string { return "\"" + s + "\"" }

// EditDistance is the Levenshtein distance between a and b, in runes.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

package katalog

import (
	"sort"
	"strings"
)

// Suggestions returns the candidates close enough to name to be a likely
// typo, best first, at most three: within an edit distance of a third of the
// name (at least 2; 1 for names of up to three characters), or one a prefix
// of the other. Case and backquotes are ignored. It is the one policy behind
// every "did you mean" of the loader and the backends.
func Suggestions(name string, candidates []string) []string {
	type scored struct {
		s string
		d int
	}
	lname := strings.ToLower(strings.Trim(name, "`"))
	limit := max(2, len(lname)/3)
	if len(lname) <= 3 {
		limit = 1
	}
	var found []scored
	seen := map[string]bool{}
	for _, c := range candidates {
		if seen[c] || c == name {
			continue
		}
		seen[c] = true
		lc := strings.ToLower(strings.Trim(c, "`"))
		d := EditDistance(lname, lc)
		switch {
		case d <= limit:
		case len(lname) >= 3 && len(lc) >= 3 && (strings.HasPrefix(lc, lname) || strings.HasPrefix(lname, lc)):
			d = limit + 1
		default:
			continue
		}
		found = append(found, scored{c, d})
	}
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].d != found[j].d {
			return found[i].d < found[j].d
		}
		return found[i].s < found[j].s
	})
	out := make([]string, 0, 3)
	for i := 0; i < len(found) && i < 3; i++ {
		out = append(out, found[i].s)
	}
	return out
}

// DidYouMean formats a suggestion as a sentence suffix, or "" when none.
func DidYouMean(name string, candidates []string) string {
	if s := Suggestions(name, candidates); len(s) > 0 {
		return "; did you mean " + quote(s[0]) + "?"
	}
	return ""
}

func quote(s string) string { return "\"" + s + "\"" }

// EditDistance is the optimal string alignment distance between a and b, in
// runes: Levenshtein's insertions, deletions and substitutions, and a swap of
// two adjacent runes counting as one edit (the commonest typo).
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
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
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

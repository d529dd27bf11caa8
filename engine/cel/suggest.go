package cel

import (
	"sort"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/katalog"
)

// suggestions returns the candidates close to name: within Levenshtein
// distance 2, or one a prefix of the other, best first, at most three.
func suggestions(name string, candidates []string) []string {
	type scored struct {
		s string
		d int
	}
	var found []scored
	seen := map[string]bool{}
	lname := strings.ToLower(strings.Trim(name, "`"))
	for _, c := range candidates {
		if seen[c] || c == name {
			continue
		}
		seen[c] = true
		lc := strings.ToLower(strings.Trim(c, "`"))
		d := katalog.EditDistance(lname, lc)
		maxD := 2
		if len(lname) <= 3 {
			maxD = 1
		}
		switch {
		case d <= maxD:
		case len(lname) >= 3 && len(lc) >= 3 && (strings.HasPrefix(lc, lname) || strings.HasPrefix(lname, lc)):
			d = 3
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
	var out []string
	for i := 0; i < len(found) && i < 3; i++ {
		out = append(out, found[i].s)
	}
	return out
}

// didYouMean returns "; did you mean x?" (or nothing).
func didYouMean(name string, candidates []string) string {
	s := suggestions(name, candidates)
	switch len(s) {
	case 0:
		return ""
	case 1:
		return "; did you mean " + s[0] + "?"
	}
	return "; did you mean " + strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1] + "?"
}

func propNames(s *structuralschema.Structural) []string {
	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

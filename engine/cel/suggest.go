package cel

import (
	"strings"

	"github.com/orkspace/orkestra-cel/katalog"
)

// didYouMean returns "; did you mean x?" (or nothing).
func didYouMean(name string, candidates []string) string {
	s := katalog.Suggestions(name, candidates)
	switch len(s) {
	case 0:
		return ""
	case 1:
		return "; did you mean " + s[0] + "?"
	}
	return "; did you mean " + strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1] + "?"
}

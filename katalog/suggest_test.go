package katalog

import (
	"strings"
	"testing"
)

func TestSuggestions(t *testing.T) {
	cases := []struct {
		name       string
		candidates []string
		want       string
	}{
		{"jbo", []string{"job", "jobs", "pod"}, "job"},       // a swap is one edit
		{"bb", []string{"a", "b"}, "b"},                      // short names: one edit
		{"imagee", []string{"image", "replicas"}, "image"},   // an extra letter
		{"toInteger", []string{"toInt", "toFloat"}, "toInt"}, // a prefix
		{"monitorin", []string{"monitoring", "port"}, "monitoring"},
		{"replicas", []string{"image", "port"}, ""}, // nothing close
		{"Image", []string{"image"}, "image"},       // case ignored
	}
	for _, c := range cases {
		if got := strings.Join(Suggestions(c.name, c.candidates), ","); got != c.want {
			t.Errorf("Suggestions(%q, %v) = %q, want %q", c.name, c.candidates, got, c.want)
		}
	}
	if got := EditDistance("ab", "ba"); got != 1 {
		t.Errorf("EditDistance(ab, ba) = %d, want 1", got)
	}
	if got := EditDistance("kitten", "sitting"); got != 3 {
		t.Errorf("EditDistance(kitten, sitting) = %d, want 3", got)
	}
}

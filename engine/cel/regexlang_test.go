package cel

import "testing"

func TestPatternInclusion(t *testing.T) {
	intLang := exactLang(`^[+-]?[0-9]{1,18}$`)
	for _, tc := range []struct {
		pattern string
		maxLen  int64
		target  *lang
		want    bool
	}{
		{`^(0|-?[1-9][0-9]*)$`, 20, intLang, false}, // 20 digits overflow
		{`^(0|-?[1-9][0-9]*)$`, 18, intLang, true},
		{`^[0-9]+$`, 0, intLang, false},
		{`^[0-9]{1,9}$`, 0, intLang, true},
		{`[0-9]+`, 9, intLang, false}, // unanchored: "a1" matches
		{`^\d{1,5}$`, 0, intLang, true},
		{`^[a-z]+$`, 0, intLang, false},
		{`^(?i)[0-9]+$`, 5, intLang, true},
		{`^[A-Z]+$`, 0, exactLang(`^(?:[A-Za-z]+)$`), true},
		{`^(0s|-?(([1-9]|[1-5][0-9])s|([1-9]|[1-5][0-9])m([0-9]|[1-5][0-9])s|[1-9][0-9]{0,5}h([0-9]|[1-5][0-9])m([0-9]|[1-5][0-9])s))$`, 24, durationLang, true},
		{`^[0-9]+[smh]$`, 7, durationLang, true}, // 6 digits: at most 999999h
		{`^[0-9]+[smh]$`, 0, durationLang, false},
		{`^.*$`, 0, durationLang, false},
		{`^(0|-?(([1-9][0-9]{0,2}|[1-9][0-9]{0,8}([1-9][0-9]{2}|0[1-9][0-9]|00[1-9]))m|([1-9][0-9]{0,2}|[1-9][0-9]{0,5}([1-9][0-9]{2}|0[1-9][0-9]|00[1-9]))|([1-9][0-9]{0,2}|[1-9][0-9]{0,2}([1-9][0-9]{2}|0[1-9][0-9]|00[1-9]))k|[1-9][0-9]{0,2}M))$`, 16, quantityLang, true},
		{`^[0-9]+(Mi|Gi)$`, 0, quantityLang, true},
		{`^[0-9]+(MB|GB)$`, 0, quantityLang, false},
	} {
		l, ok := patternLang(tc.pattern, tc.maxLen)
		if !ok {
			if tc.want {
				t.Errorf("%s: not modelled", tc.pattern)
			}
			continue
		}
		if got := l.subsetOf(tc.target); got != tc.want {
			t.Errorf("%s (maxLength %d) ⊆ target: %v, want %v", tc.pattern, tc.maxLen, got, tc.want)
		}
	}
	if _, ok := patternLang(`^a\bb$`, 0); ok {
		t.Error("a word boundary must not be modelled")
	}
	if !enumLang([]string{"1", "42"}).subsetOf(intLang) || enumLang([]string{"1", "x"}).subsetOf(intLang) {
		t.Error("enum languages")
	}
}

func TestMinCount(t *testing.T) {
	for pattern, want := range map[string]int{
		`^[a-z0-9]([a-z0-9.-]{0,30}[a-z0-9])?:[0-9]{1,5}$`: 1,
		`^[^:]+:[^:]+:[^:]+$`:                              2,
		`^[^:]+(:[0-9]+)?$`:                                0,
		`^(a:b|c:d:e)$`:                                    1,
		`^(x:){3}$`:                                        3,
		`^(x:)+$`:                                          1,
		`.*`:                                               0,
	} {
		if got := minCount(pattern, ':'); got != want {
			t.Errorf("minCount(%s) = %d, want %d", pattern, got, want)
		}
	}
}

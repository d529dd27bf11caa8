package gotmpl

import "github.com/orkspace/orkestra-cel/engine/notes"

// The duration functions (upstream pkg/note/time.go): Go durations plus d,
// w, mo (30 days) and y (365 days), as rotateAfter reads them.

var durationFamily = family{name: "durations (Go's units plus `d`, `w`, `mo` = 30d, `y` = 365d)", functions: []*function{
	noteFunction("durationSeconds", notes.DurationSeconds, argString, 0, "`durationSeconds` (`7d` → 604800; 0 when invalid)"),
	spaceless(noteFunction("durationAdd", notes.DurationAdd, argStrings2, 1, "`durationAdd A B` (a Go duration: `1d` + `12h` → `36h0m0s`; `0s` when either is invalid)")),
	noteFunction("durationValid", notes.DurationValid, argString, 0, "`durationValid` (`\"\"` is not)"),
	valueFirst(noteFunction("timeFormat", notes.TimeFormat, argStrings2, 2, "`timeFormat TIMESTAMP LAYOUT` (Go's layout, UTC; `\"\"` when the timestamp does not parse)")),
}}

package gotmpl

import "github.com/orkspace/orkestra-cel/engine/notes"

// The semver functions (upstream pkg/note/semver.go): versions as the
// Masterminds library reads them; invalid input gives a zero value.

var semverFamily = family{name: "semver", functions: []*function{
	spaceless(noteFunction("semverMajor", notes.SemverMajor, argString, 1, "`semverMajor`")),
	spaceless(noteFunction("semverMinor", notes.SemverMinor, argString, 1, "`semverMinor`")),
	spaceless(noteFunction("semverPatch", notes.SemverPatch, argString, 1, "`semverPatch` (one component; a leading `v` allowed; `\"\"` when invalid)")),
	noteFunction("semverValid", notes.SemverValid, argString, 0, "`semverValid`"),
	valueFirst(noteFunction("semverCompare", notes.SemverCompare, argStrings2, 0, "`semverCompare A B` (-1, 0, 1; 0 when either is invalid)")),
	valueFirst(noteFunction("semverBump", notes.SemverBump, argStrings2, 1, "`semverBump V major\\|minor\\|patch` (prerelease dropped: `2.1.0-rc1` patch → `2.1.1`; V when invalid)")),
	valueFirst(noteFunction("semverConstraint", notes.SemverConstraint, argStrings2, 0, "`semverConstraint V C` (`>=1.2.0,<2.0.0`, `^1.0`, `~1.2`, `1.x`, `\\|\\|`; false when either is invalid)")),
}}

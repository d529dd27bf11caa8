package notes

import (
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// The semver functions (upstream pkg/note/semver.go): versions as the
// Masterminds library reads them (a leading "v" allowed, missing minor and
// patch read as 0), invalid input giving a zero value, never an error.

func semverPart(v string, part func(*semver.Version) uint64) string {
	sv, err := semver.NewVersion(v)
	if err != nil {
		return ""
	}
	return strconv.FormatUint(part(sv), 10)
}

// SemverMajor, SemverMinor and SemverPatch are one component as a string,
// "" for an invalid version.
func SemverMajor(v string) string { return semverPart(v, (*semver.Version).Major) }
func SemverMinor(v string) string { return semverPart(v, (*semver.Version).Minor) }
func SemverPatch(v string) string { return semverPart(v, (*semver.Version).Patch) }

// SemverValid reports whether v is a version.
func SemverValid(v string) bool {
	_, err := semver.NewVersion(v)
	return err == nil
}

// SemverCompare is -1, 0 or 1 as a is older, equal or newer than b; 0 when
// either is invalid.
func SemverCompare(a, b string) int64 {
	sa, err := semver.NewVersion(a)
	if err != nil {
		return 0
	}
	sb, err := semver.NewVersion(b)
	if err != nil {
		return 0
	}
	return int64(sa.Compare(sb))
}

// SemverBump increments the major, minor or patch component (any case),
// zeroing those after it and dropping any prerelease and build metadata
// (2.1.0-rc1 patch → 2.1.1); an invalid version or component gives v back.
func SemverBump(v, component string) string {
	sv, err := semver.NewVersion(strings.TrimPrefix(v, "v"))
	if err != nil {
		return v
	}
	major, minor, patch := sv.Major(), sv.Minor(), sv.Patch()
	switch strings.ToLower(component) {
	case "major":
		major, minor, patch = major+1, 0, 0
	case "minor":
		minor, patch = minor+1, 0
	case "patch":
		patch++
	default:
		return v
	}
	return semver.New(major, minor, patch, "", "").String()
}

// SemverConstraint reports whether v satisfies a constraint (">=1.2.0,<2.0.0",
// "^1.0", "~1.2", "1.x", "||" for or); false when either is invalid.
func SemverConstraint(v, constraint string) bool {
	sv, err := semver.NewVersion(v)
	if err != nil {
		return false
	}
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return false
	}
	return c.Check(sv)
}

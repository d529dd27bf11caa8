package notes

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
)

// The data, strings and domain functions of the original library (upstream
// pkg/note/data.go and the catalog's data, strings and domain entries).

// Slugify lower-cases s, turns every character but a-z, 0-9 and "-" into
// "-", collapses runs of "-" and trims them from both ends:
// "My Team / Platform" → "my-team-platform".
func Slugify(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r == '-' || r > unicode.MaxASCII || !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			dash = true
			continue
		}
		if dash && b.Len() > 0 {
			b.WriteByte('-')
		}
		dash = false
		b.WriteRune(r)
	}
	return b.String()
}

// SHA256Sum is the first 8 hex characters of the SHA-256 of s.
func SHA256Sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:4])
}

// TruncateName cuts s to at most n bytes, adding nothing (unlike truncate's
// "...", which a Kubernetes name may not hold).
func TruncateName(s string, n int) (string, error) {
	if n < 0 {
		return "", fmt.Errorf("truncateName: negative length %d", n)
	}
	if len(s) <= n {
		return s, nil
	}
	return s[:n], nil
}

// RepoSlug is the name of a repository reference: its last path segment
// (after "/" or the ":" of git@host:repo), without a trailing "/" or
// ".git", slugified. "git@github.com:myorg/payments-api.git" →
// "payments-api".
func RepoSlug(s string) string {
	s = strings.TrimRight(strings.TrimSpace(s), "/")
	if i := strings.LastIndexAny(s, "/:"); i >= 0 {
		s = s[i+1:]
	}
	return Slugify(strings.TrimSuffix(s, ".git"))
}

// ToBase64 is the standard base64 of s (a Secret's data).
func ToBase64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// FromBase64 decodes standard base64; anything else gives "".
func FromBase64(s string) string {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return ""
	}
	return string(b)
}

// ToJSON is the JSON of any value; a value JSON cannot hold gives "{}".
func ToJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// Concat joins strings without a separator.
func Concat(parts ...string) string { return strings.Join(parts, "") }

// Lookup is the value paired with key in alternating key/value pairs, the
// first match winning; "" when none matches. A trailing unpaired argument
// is ignored.
func Lookup(key string, pairs ...string) string {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i] == key {
			return pairs[i+1]
		}
	}
	return ""
}

// DomainBare is DomainHost without a leading "www.".
func DomainBare(v any) string { return strings.TrimPrefix(DomainHost(v), "www.") }

// EqTernary is ifTrue when v, printed ("" for nil), equals target, else
// ifFalse.
func EqTernary(v any, target string, ifTrue, ifFalse any) any {
	s := ""
	if v != nil {
		s = fmt.Sprint(v)
	}
	if s == target {
		return ifTrue
	}
	return ifFalse
}

// ToList splits a comma-separated string into trimmed items; "" gives [].
func ToList(s string) []string {
	if s == "" {
		return []string{}
	}
	parts := strings.Split(s, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}

// CronField is field i (0 to 4) of a schedule, as cronMinute … cronDow.
func CronField(expr string, i int) (string, error) {
	if i < 0 || i > 4 {
		return "", fmt.Errorf("cronField: index %d is not 0 to 4", i)
	}
	return cronField("cronField", expr, i)
}

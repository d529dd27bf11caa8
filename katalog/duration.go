package katalog

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseLifetime is ParseDuration for a lifetime (rotateAfter): "never"
// means it never ends, and returns 0 as the empty string does.
func ParseLifetime(s string) (time.Duration, error) {
	if strings.TrimSpace(s) == "never" {
		return 0, nil
	}
	return ParseDuration(s)
}

// ParseDuration parses the durations katalogs use: Go durations (90s, 1h30m)
// plus the upstream units d (day), w (week), mo (30 days) and y (365 days).
// "" returns 0; "never" is an error: where a duration is required, reading
// it as 0 would mean the key's default or at once, never "never".
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	if s == "never" {
		return 0, fmt.Errorf("never is not a duration here: this key needs one (e.g. 90s, 15m, 12h, 7d); only rotateAfter reads never (it never rotates)")
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return 0, fmt.Errorf("duration %q is negative", s)
		}
		return d, nil
	}
	units := []struct {
		suffix string
		d      time.Duration
	}{{"mo", 30 * 24 * time.Hour}, {"d", 24 * time.Hour}, {"w", 7 * 24 * time.Hour}, {"y", 365 * 24 * time.Hour}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			n, err := strconv.ParseFloat(num, 64)
			if err == nil && n >= 0 {
				return time.Duration(n * float64(u.d)), nil
			}
		}
	}
	return 0, fmt.Errorf("%q is not a duration; write e.g. 90s, 15m, 12h, 7d, 2w, 3mo or 1y", s)
}

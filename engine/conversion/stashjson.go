package conversion

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"unicode/utf8"
)

// encodeStash writes the stash as JSON with sorted keys — the same text
// encoding/json produces, without its reflection, which dominated the cost of
// a conversion.
func encodeStash(stash map[string]*stashEntry) ([]byte, error) {
	b := make([]byte, 0, 128)
	versions := sortedKeys(stash)
	b = append(b, '{')
	for i, v := range versions {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, v)
		b = append(b, ':', '{')
		e := stash[v]
		comma := false
		if len(e.Set) > 0 {
			b = append(b, `"set":`...)
			var err error
			if b, err = appendValue(b, map[string]any(e.Set)); err != nil {
				return nil, err
			}
			comma = true
		}
		if len(e.Unset) > 0 {
			if comma {
				b = append(b, ',')
			}
			b = append(b, `"unset":[`...)
			for j, p := range e.Unset {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, '[')
				for k, seg := range p {
					if k > 0 {
						b = append(b, ',')
					}
					b = appendString(b, seg)
				}
				b = append(b, ']')
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func appendValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, fmt.Errorf("cannot keep %v in the round-trip annotation", x)
		}
		// The format encoding/json uses.
		abs, fmtc := math.Abs(x), byte('f')
		if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
			fmtc = 'e'
		}
		b = strconv.AppendFloat(b, x, fmtc, -1, 64)
		if fmtc == 'e' {
			if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
				b[n-2] = b[n-1]
				b = b[:n-1]
			}
		}
		return b, nil
	case map[string]any:
		b = append(b, '{')
		for i, k := range sortedKeys(x) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendValue(b, x[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendValue(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	return nil, fmt.Errorf("cannot keep a %T in the round-trip annotation", v)
}

const hex = "0123456789abcdef"

// appendString quotes s as encoding/json does (HTML-safe, invalid UTF-8
// replaced by U+FFFD).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Package jsonval is the JSON codec of the plain values expressions evaluate
// to and unstructured objects are made of (map[string]any, []any, string,
// int64, float64, bool, nil). It encodes them as encoding/json writes them
// with HTML escaping off, map keys sorted, without reflection (the /convert
// response, the conversion stash annotation), decodes JSON in one pass into
// them (decode.go: the ConversionReview on the /convert hot path), and
// compares them as JSON does (equal.go).
package jsonval

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Append encodes unstructured content. Map keys are sorted. Values of
// other types than the unstructured ones go through encoding/json.
func Append(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return AppendString(b, v), nil
	case bool:
		if v {
			return append(b, "true"...), nil
		}
		return append(b, "false"...), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(v), 10), nil
	case float64:
		return appendFloat(b, v)
	case map[string]any:
		return appendMap(b, v)
	case []any:
		b = append(b, '[')
		for i, item := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = Append(b, item); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case map[string]string:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, k)
			b = append(b, ':')
			b = AppendString(b, v[k])
		}
		return append(b, '}'), nil
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			return b, err
		}
		return append(b, raw...), nil
	}
}

type member struct {
	key   string
	value any
}

func appendMap(b []byte, m map[string]any) ([]byte, error) {
	var arr [16]member
	members := arr[:0]
	for k, v := range m {
		members = append(members, member{k, v})
	}
	// Insertion sort: maps of objects are small, and it does not allocate.
	for i := 1; i < len(members); i++ {
		for j := i; j > 0 && members[j].key < members[j-1].key; j-- {
			members[j], members[j-1] = members[j-1], members[j]
		}
	}
	b = append(b, '{')
	for i := range members {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, members[i].key)
		b = append(b, ':')
		var err error
		if b, err = Append(b, members[i].value); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// appendFloat formats like encoding/json.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, fmt.Errorf("unsupported value: %v", f)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

const hexDigits = "0123456789abcdef"

// AppendString quotes s like encoding/json without HTML escaping: control
// characters, quote and backslash escaped, invalid UTF-8 as U+FFFD, U+2028
// and U+2029 escaped.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
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
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
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
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

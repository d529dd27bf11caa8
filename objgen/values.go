package objgen

import (
	"encoding/json"
	"math"
	"reflect"
)

// normalize returns v as apimachinery's JSON decoder would produce it: numbers
// with an integral value that fits int64 become int64, other numbers float64,
// other integer kinds int64; maps and lists are normalized recursively.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
		return x
	case float64:
		if x == math.Trunc(x) && x >= math.MinInt64 && x < math.MaxInt64 && !math.IsInf(x, 0) {
			return int64(x)
		}
		return x
	case float32:
		return normalize(float64(x))
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case int:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	}
	return v
}

// deepCopy copies maps and lists; scalars are shared.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopy(e)
		}
		return l
	case map[string]string:
		m := make(map[string]string, len(x))
		for k, e := range x {
			m[k] = e
		}
		return m
	}
	return v
}

func deepCopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return deepCopy(m).(map[string]any)
}

// canonical is a key for deep equality of JSON values (map keys sorted).
func canonical(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		// not JSON: fall back to Go syntax, still deterministic for our values
		return reflect.ValueOf(v).String()
	}
	return string(b)
}

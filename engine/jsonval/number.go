package jsonval

import (
	"encoding/json"
	"math"
)

// Int is v as an int64 when it is an integer: a Go integer that int64
// holds, or a whole float64 (or float32) in int64's range, [-2^63, 2^63).
// The rule keeps every value exact — each such float is an integer int64
// holds exactly, where a bound at ±2^53 would leave whole floats above it
// as floats — and it is what the API server gives back for the float: Go's
// JSON encoder writes a whole float below 1e21 without an exponent, and the
// API machinery decodes a number that fits int64 as int64. It is the one
// rule for which whole floats become integers.
func Int(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint:
		return uintInt(uint64(x))
	case uint64:
		return uintInt(x)
	case float32:
		return floatInt(float64(x))
	case float64:
		return floatInt(x)
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, true
		}
	}
	return 0, false
}

func uintInt(u uint64) (int64, bool) {
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// floatInt: -2^63 is a float64, and 2^63 (float64(math.MaxInt64) rounds to
// it) is the first whole float beyond int64.
func floatInt(f float64) (int64, bool) {
	if f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
		return 0, false // NaN and the infinities fail the first or the range test
	}
	return int64(f), true
}

// Normalize turns the numbers of unstructured content into the types the
// API machinery uses, in place: integers (Int) int64, every other number
// float64; maps and lists recursively. It returns v.
func Normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = Normalize(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = Normalize(e)
		}
		return x
	case string, bool, nil:
		return v
	}
	if i, ok := Int(v); ok {
		return i
	}
	switch x := v.(type) {
	case float32:
		return float64(x)
	case uint:
		return float64(x)
	case uint64:
		return float64(x)
	case json.Number:
		f, _ := x.Float64()
		return f
	}
	return v
}

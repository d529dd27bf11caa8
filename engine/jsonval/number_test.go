package jsonval

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

// Whole floats become int64 across int64's whole range, exactly, and at
// its edges: 2^53 and beyond are no different from 3; -2^63 is an int64,
// 2^63 (where float64(math.MaxInt64) rounds to) is not.
func TestInt(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want int64
		ok   bool
	}{
		{float64(3), 3, true},
		{-0.0, 0, true},
		{float64(1 << 53), 1 << 53, true},
		{float64(1<<53 + 2), 1<<53 + 2, true},
		{-float64(1 << 53), -(1 << 53), true},
		{float64(1 << 62), 1 << 62, true},
		{math.Nextafter(1<<63, 0), 1<<63 - 1024, true},
		{float64(math.MinInt64), math.MinInt64, true},
		{float64(math.MaxInt64), 0, false}, // 2^63
		{math.Nextafter(-(1 << 63), math.Inf(-1)), 0, false},
		{1.5, 0, false},
		{math.NaN(), 0, false},
		{math.Inf(1), 0, false},
		{math.Inf(-1), 0, false},
		{float32(16777216), 16777216, true},
		{int64(math.MaxInt64), math.MaxInt64, true},
		{int(-7), -7, true},
		{uint64(math.MaxInt64), math.MaxInt64, true},
		{uint64(math.MaxInt64 + 1), 0, false},
		{json.Number("9223372036854775807"), math.MaxInt64, true},
		{json.Number("9223372036854775808"), 0, false},
		{json.Number("1e3"), 0, false}, // as the API machinery reads it: a float
		{"3", 0, false},
		{true, 0, false},
	} {
		got, ok := Int(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Int(%#v) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestNormalize(t *testing.T) {
	in := map[string]any{
		"a": float64(1 << 60), "b": 2.5, "c": []any{int32(4), float32(0.5), json.Number("7"), json.Number("1e3")},
		"d": map[string]any{"e": uint64(math.MaxUint64), "f": "8", "g": nil, "h": true},
	}
	want := map[string]any{
		"a": int64(1 << 60), "b": 2.5, "c": []any{int64(4), 0.5, int64(7), 1000.0},
		"d": map[string]any{"e": float64(math.MaxUint64), "f": "8", "g": nil, "h": true},
	}
	if got := Normalize(in); !reflect.DeepEqual(got, want) {
		t.Errorf("Normalize = %#v\nwant %#v", got, want)
	}
}

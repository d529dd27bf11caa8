package jsonval

import (
	"bytes"
	"math"
	"testing"
)

// stdEncode is what encoding/json writes with HTML escaping off.
func TestAppendMatchesEncodingJSON(t *testing.T) {
	values := []any{
		nil, true, false, "", "plain", "q\"\\\n\r\t\b\f\x01\x1f", "<>&", "\u2028\u2029", "é€😀", "bad\xffutf8",
		int64(0), int64(-42), int64(math.MaxInt64), int64(math.MinInt64), 7, int32(-7),
		0.0, 1.5, -2.25, 1e20, 1e21, 1e-6, 1e-7, 123456789.125, math.SmallestNonzeroFloat64, math.MaxFloat64,
		map[string]any{}, []any{}, map[string]any{"b": int64(1), "a": []any{"x", nil, map[string]any{"z": false, "y": 0.5}}},
		map[string]string{"k2": "v2", "k1": "v1"}, []string{"typed", "fallback"},
	}
	for _, v := range values {
		want, err := stdEncode(t, v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Append(nil, v)
		if err != nil {
			t.Errorf("%#v: %v", v, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%#v:\n got %s\nwant %s", v, got, want)
		}
	}
	for _, bad := range []any{math.NaN(), math.Inf(1), map[string]any{"x": []any{math.Inf(-1)}}} {
		if _, err := Append(nil, bad); err == nil {
			t.Errorf("%v: want an error", bad)
		}
	}
}

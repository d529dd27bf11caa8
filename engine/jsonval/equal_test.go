package jsonval

import "testing"

func TestEqual(t *testing.T) {
	cases := []struct {
		a, b any
		want bool
	}{
		{int64(3), float64(3), true},
		{int64(3), float64(3.5), false},
		{int32(2), int64(2), true},
		{"3", int64(3), false},
		{nil, nil, true},
		{nil, map[string]any{}, false},
		{map[string]any{"a": int64(1), "b": []any{"x", true}}, map[string]any{"b": []any{"x", true}, "a": float64(1)}, true},
		{map[string]any{"a": int64(1)}, map[string]any{"a": int64(1), "b": nil}, false},
		{[]any{int64(1)}, []any{int64(1), int64(2)}, false},
		{[]any{"a"}, []any{"b"}, false},
		{true, "true", false},
		{int64(1<<53 + 1), int64(1 << 53), false}, // exact beyond 2^53
		{int64(1<<53 + 1), int64(1<<53 + 1), true},
	}
	for _, c := range cases {
		if got := Equal(c.a, c.b); got != c.want {
			t.Errorf("Equal(%#v, %#v) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := Equal(c.b, c.a); got != c.want {
			t.Errorf("Equal(%#v, %#v) = %v, want %v (reversed)", c.b, c.a, got, c.want)
		}
	}
}

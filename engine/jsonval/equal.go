package jsonval

import "reflect"

// Equal compares unstructured values as JSON does: maps by their entries,
// lists item by item, numbers by value (an int64 and a whole float64 are
// equal, as they are once encoded). It is the one equality the conversion
// stash, drift detection and the conformance suite share.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !Equal(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if x, ok := a.(int64); ok {
		if y, ok := b.(int64); ok {
			return x == y // exact beyond 2^53
		}
	}
	if x, ok := Number(a); ok {
		y, ok := Number(b)
		return ok && x == y
	}
	return reflect.DeepEqual(a, b)
}

// Number returns a numeric value as a float64 (the Go integer types that
// typed structs leave in unstructured content included).
func Number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

package objgen

import (
	"encoding/json"
	"reflect"
)

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

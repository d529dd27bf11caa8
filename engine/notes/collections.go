package notes

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	"sigs.k8s.io/yaml"
)

// The collection functions (upstream pkg/note/as.go, listmap.go): lists and
// maps of any shape, never failing — a value of another shape reads as
// empty.

// AsList is a list as it is, or a string holding a JSON or YAML list
// parsed; anything else is [].
func AsList(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case string:
		var out []any
		if yaml.Unmarshal([]byte(x), &out) == nil && out != nil {
			return out
		}
	}
	return []any{}
}

// AsMap is a map as it is, or a string holding a JSON or YAML map parsed;
// anything else is {}.
func AsMap(v any) map[string]any {
	switch x := v.(type) {
	case map[string]any:
		return x
	case string:
		var out map[string]any
		if yaml.Unmarshal([]byte(x), &out) == nil && out != nil {
			return out
		}
	}
	return map[string]any{}
}

// AsString prints a value: a map or list as JSON, nil as "", anything else
// as Go prints it.
func AsString(v any) string {
	switch v.(type) {
	case nil:
		return ""
	case map[string]any, []any:
		b, err := json.Marshal(v)
		if err != nil {
			return ""
		}
		return string(b)
	}
	return fmt.Sprint(v)
}

// ListGet is item i of a list, nil when out of range or not a list.
func ListGet(l any, i int) any {
	x, _ := l.([]any)
	if i < 0 || i >= len(x) {
		return nil
	}
	return x[i]
}

// ListHas: an item of the list equals v.
func ListHas(l any, v any) bool {
	x, _ := l.([]any)
	for _, e := range x {
		if reflect.DeepEqual(e, v) {
			return true
		}
	}
	return false
}

// ListLen is the length of a list, 0 for anything else.
func ListLen(l any) int {
	x, _ := l.([]any)
	return len(x)
}

// MapGet is m[key], nil when absent or not a map.
func MapGet(m any, key string) any {
	x, _ := m.(map[string]any)
	return x[key]
}

// MapKeys are a map's keys, sorted; [] for anything else.
func MapKeys(m any) []string {
	x, _ := m.(map[string]any)
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// MapValues are a map's values in the order of its sorted keys.
func MapValues(m any) []any {
	x, _ := m.(map[string]any)
	out := make([]any, 0, len(x))
	for _, k := range MapKeys(m) {
		out = append(out, x[k])
	}
	return out
}

package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// fieldReader reads evaluated simplified fields with the types the builders
// need. The first problem is kept in err (naming the field); later reads
// return zero values.
type fieldReader struct {
	fields map[string]any
	base   string
	err    error
}

func (f *fieldReader) path(key string) string { return f.base + "." + key }

func (f *fieldReader) fail(key string, format string, args ...any) {
	if f.err == nil {
		f.err = fmt.Errorf("%s: %s", f.path(key), fmt.Sprintf(format, args...))
	}
}

func (f *fieldReader) has(key string) bool {
	v, ok := f.fields[key]
	return ok && v != nil
}

// str returns a string field; scalars of other types are formatted.
func (f *fieldReader) str(key string) string {
	v, ok := f.fields[key]
	if !ok || v == nil {
		return ""
	}
	s, ok := scalarString(v)
	if !ok {
		f.fail(key, "expects a string, got %s", describe(v))
	}
	return s
}

func scalarString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case int64:
		return strconv.FormatInt(x, 10), true
	case int:
		return strconv.Itoa(x), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

// int returns an integer field; ok is false when it is absent.
func (f *fieldReader) int(key string) (int64, bool) {
	v, ok := f.fields[key]
	if !ok || v == nil {
		return 0, false
	}
	if i, ok := jsonval.Int(v); ok {
		return i, true
	}
	switch x := v.(type) {
	case string:
		if i, err := strconv.ParseInt(x, 10, 64); err == nil {
			return i, true
		}
	}
	f.fail(key, "expects an integer, got %s", describe(v))
	return 0, false
}

// int32 returns an integer field that must fit in [lo, hi], or nil.
func (f *fieldReader) int32(key string, lo, hi int64) *int32 {
	i, ok := f.int(key)
	if !ok {
		return nil
	}
	if i < lo || i > hi {
		f.fail(key, "%d is out of range [%d, %d]", i, lo, hi)
		return nil
	}
	v := int32(i)
	return &v
}

func (f *fieldReader) bool(key string) *bool {
	v, ok := f.fields[key]
	if !ok || v == nil {
		return nil
	}
	switch x := v.(type) {
	case bool:
		return &x
	case string:
		if b, err := strconv.ParseBool(x); err == nil {
			return &b
		}
	}
	f.fail(key, "expects true or false, got %s", describe(v))
	return nil
}

// strMap returns a map of strings (labels, data, …); nil when absent.
func (f *fieldReader) strMap(key string) map[string]string {
	v, ok := f.fields[key]
	if !ok || v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		if sm, ok := v.(map[string]string); ok {
			out := make(map[string]string, len(sm))
			for k, s := range sm {
				out[k] = s
			}
			return out
		}
		f.fail(key, "expects a map of strings, got %s", describe(v))
		return nil
	}
	out := make(map[string]string, len(m))
	for k, item := range m {
		if item == nil {
			out[k] = ""
			continue
		}
		s, ok := scalarString(item)
		if !ok {
			f.fail(key+"."+k, "expects a string, got %s", describe(item))
			return nil
		}
		out[k] = s
	}
	return out
}

// strList returns a list of strings; nil when absent.
func (f *fieldReader) strList(key string) []string {
	v, ok := f.fields[key]
	if !ok || v == nil {
		return nil
	}
	l, ok := v.([]any)
	if !ok {
		if sl, ok := v.([]string); ok {
			return append([]string(nil), sl...)
		}
		f.fail(key, "expects a list of strings, got %s", describe(v))
		return nil
	}
	out := make([]string, 0, len(l))
	for i, item := range l {
		s, ok := scalarString(item)
		if !ok {
			f.fail(fmt.Sprintf("%s[%d]", key, i), "expects a string, got %s", describe(item))
			return nil
		}
		out = append(out, s)
	}
	return out
}

// into decodes a Kubernetes sub-object (a probe, a list of volumes, …)
// written in full in the katalog into its typed struct: unknown or misspelled
// field names are errors, not silently dropped.
func (f *fieldReader) into(key string, out any) {
	v, ok := f.fields[key]
	if !ok || v == nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		f.fail(key, "%v", err)
		return
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		f.fail(key, "%s", decodeMessage(err))
	}
}

func decodeMessage(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		where := te.Field
		if where == "" {
			return fmt.Sprintf("expects %s, got a %s", jsonType(te.Type.Kind().String()), te.Value)
		}
		return fmt.Sprintf("%s: expects %s, got a %s", where, jsonType(te.Type.Kind().String()), te.Value)
	}
	return err.Error()
}

func jsonType(goKind string) string {
	switch goKind {
	case "slice", "array":
		return "a list"
	case "struct", "map", "ptr":
		return "an object"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	}
	return "a number"
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("the string %q", x)
	case bool:
		return fmt.Sprintf("the boolean %v", x)
	case int64, int, int32, float64:
		return fmt.Sprintf("the number %v", x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return fmt.Sprintf("an object with keys %v", keys)
	case []any:
		return fmt.Sprintf("a list of %d items", len(x))
	}
	return fmt.Sprintf("%T", v)
}

// jsonValue normalises an evaluated value into unstructured content
// (map[string]any, []any, string, int64, float64, bool, nil).
func jsonValue(v any) (any, error) {
	switch x := v.(type) {
	case nil, string, int64, float64, bool:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case uint64:
		if x > math.MaxInt64 {
			return float64(x), nil
		}
		return int64(x), nil
	case float32:
		return float64(x), nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, item := range x {
			n, err := jsonValue(item)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = n
		}
		return out, nil
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, s := range x {
			out[k] = s
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			n, err := jsonValue(item)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = n
		}
		return out, nil
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out, nil
	}
	// Anything else: through JSON.
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("a %T cannot be written to an object: %w", v, err)
	}
	var out any
	if err := utiljson.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// intOrString reads a number or a percentage (maxSurge, minAvailable, …):
// an integer, or a string that is an integer ("1", as the original
// katalogs quote them) or ends in % ("25%"); nil when absent.
func (f *fieldReader) intOrString(key string) *intstr.IntOrString {
	v, ok := f.fields[key]
	if !ok || v == nil {
		return nil
	}
	if s, ok := v.(string); ok {
		s = strings.TrimSpace(s)
		if strings.HasSuffix(s, "%") {
			if _, err := strconv.Atoi(strings.TrimSuffix(s, "%")); err == nil {
				x := intstr.FromString(s)
				return &x
			}
			f.fail(key, "%q is not a percentage such as 25%%", s)
			return nil
		}
	}
	i, ok := f.int(key)
	if !ok {
		return nil
	}
	if i < 0 || i > math.MaxInt32 {
		f.fail(key, "%d is out of range [0, %d]", i, math.MaxInt32)
		return nil
	}
	x := intstr.FromInt32(int32(i))
	return &x
}

// int64 returns an integer field as a pointer, nil when absent.
func (f *fieldReader) int64(key string) *int64 {
	i, ok := f.int(key)
	if !ok {
		return nil
	}
	return &i
}

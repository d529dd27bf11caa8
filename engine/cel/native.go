package cel

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// ToNative turns a CEL value into plain Go data ready for JSON: int64,
// float64, string, bool, nil, map[string]any and []any. Timestamps become
// RFC 3339 strings, durations Go duration strings ("1h30m0s"), bytes standard
// base64, uints int64 (an error above MaxInt64). optional.none() is
// engine.ErrAbsent; inside a map it omits the key. Objects read from `self`
// come out as deep copies in their schema's shape (integers as int64, null
// and undeclared fields dropped), never aliasing the input.
func ToNative(v ref.Val) (any, error) {
	switch v := v.(type) {
	case *mapVal:
		return v.n.native(v.m)
	case *listVal:
		return v.n.native(v.l)
	case types.String:
		return string(v), nil
	case types.Int:
		return int64(v), nil
	case types.Bool:
		return bool(v), nil
	case types.Double:
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%v cannot be represented in JSON", f)
		}
		return f, nil
	case types.Null:
		return nil, nil
	case types.Uint:
		if uint64(v) > math.MaxInt64 {
			return nil, fmt.Errorf("uint %d is too large for an integer field", uint64(v))
		}
		return int64(v), nil
	case types.Bytes:
		return base64.StdEncoding.EncodeToString([]byte(v)), nil
	case types.Timestamp:
		return v.Time.Format(time.RFC3339Nano), nil
	case types.Duration:
		return v.Duration.String(), nil
	case *types.Optional:
		if !v.HasValue() {
			return nil, engine.ErrAbsent
		}
		return ToNative(v.GetValue())
	case *types.Err:
		return nil, v
	case *types.Unknown:
		return nil, fmt.Errorf("unknown value %v", v)
	case traits.Mapper:
		out := make(map[string]any)
		for it := v.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			ks, ok := k.(types.String)
			if !ok {
				return nil, fmt.Errorf("map key %v is %s; JSON object keys must be strings", k, k.Type().TypeName())
			}
			nv, err := ToNative(v.Get(k))
			if errors.Is(err, engine.ErrAbsent) {
				continue
			}
			if err != nil {
				return nil, err
			}
			out[string(ks)] = nv
		}
		return out, nil
	case traits.Lister:
		size, _ := v.Size().(types.Int)
		out := make([]any, 0, int(size))
		for it := v.Iterator(); it.HasNext() == types.True; {
			nv, err := ToNative(it.Next())
			if errors.Is(err, engine.ErrAbsent) {
				return nil, errors.New("a list element is optional.none() or omit(); lists cannot have holes: filter the list instead")
			}
			if err != nil {
				return nil, err
			}
			out = append(out, nv)
		}
		return out, nil
	case ref.Type:
		return nil, fmt.Errorf("type %s is not a value", v.TypeName())
	case nil:
		return nil, errors.New("no value")
	}
	return nil, fmt.Errorf("a %s value cannot be represented in JSON", v.Type().TypeName())
}

// native is ToNative of n.toVal(raw), computed directly: the fast path of
// plain references uses it, ToNative of wrapped data too, so both agree.
func (n *node) native(raw any) (any, error) {
	if raw == nil {
		return nil, nil
	}
	// Scalars already in their JSON form are returned as they are (the same
	// interface value: no allocation).
	switch n.kind {
	case kString:
		if _, ok := raw.(string); ok {
			return raw, nil
		}
	case kInt:
		if _, ok := raw.(int64); ok {
			return raw, nil
		}
		if i, ok := asInt(raw); ok {
			return i, nil
		}
	case kBool:
		if _, ok := raw.(bool); ok {
			return raw, nil
		}
	case kNumber:
		if f, ok := raw.(float64); ok && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return raw, nil
		}
		if f, ok := asFloat(raw); ok {
			return ToNative(types.Double(f))
		}
	case kIntOrString:
		switch raw.(type) {
		case string, int64:
			return raw, nil
		}
		if i, ok := asInt(raw); ok {
			return i, nil
		}
	case kObject:
		m, ok := raw.(map[string]any)
		if !ok {
			break
		}
		out := make(map[string]any, len(m))
		var errs keyedErr
		for k, v := range m {
			if v == nil {
				continue
			}
			child := dynNode
			if p := n.byName[k]; p != nil {
				child = p.n
			} else if !n.preserve {
				continue
			}
			nv, err := child.native(v)
			if err != nil {
				errs.add(k, err)
				continue
			}
			out[k] = nv
		}
		if errs.err != nil {
			return nil, errs.err
		}
		return out, nil
	case kMap:
		m, ok := raw.(map[string]any)
		if !ok {
			break
		}
		out := make(map[string]any, len(m))
		var errs keyedErr
		for k, v := range m {
			nv, err := n.elem.native(v)
			if err != nil {
				errs.add(k, err)
				continue
			}
			out[k] = nv
		}
		if errs.err != nil {
			return nil, errs.err
		}
		return out, nil
	case kList:
		l, ok := raw.([]any)
		if !ok {
			break
		}
		out := make([]any, len(l))
		for i, v := range l {
			nv, err := n.elem.native(v)
			if err != nil {
				return nil, err
			}
			out[i] = nv
		}
		return out, nil
	case kDyn:
		switch v := raw.(type) {
		case map[string]any:
			return dynMapNode.native(v)
		case []any:
			return dynListNode.native(v)
		case string, bool, int64, float64:
			if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
				break
			}
			return v, nil
		}
		return ToNative(dynVal(raw))
	}
	return nil, errors.New(n.typeError(raw))
}

// formatInterpolated formats one value of a string interpolation. Integers
// print in decimal, booleans as true/false, doubles in the shortest form that
// reads back to the same number, without an exponent (1000000, 0.5) except
// below 1e-6 or from 1e21 on (1e-07, 1e+21), as JavaScript prints numbers.
func appendInterpolated(b *strings.Builder, v any) bool {
	var tmp [32]byte
	switch v := v.(type) {
	case string:
		b.WriteString(v)
	case int64:
		b.Write(strconv.AppendInt(tmp[:0], v, 10))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case float64:
		b.WriteString(formatDouble(v))
	default:
		return false
	}
	return true
}

func formatDouble(f float64) string {
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// describeNative names the shape of a plain value, for runtime messages.
func describeNative(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case int64:
		return "int"
	case float64:
		return "double"
	case bool:
		return "bool"
	case map[string]any:
		return "a map"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%T", v)
}

// conform checks a value computed at runtime (from a dyn expression) against
// the schema where it lands, returning it with whole numbers in integer
// fields as int64. where names the target for messages.
func conform(v any, s *structuralschema.Structural, where string) (any, error) {
	if s == nil || v == nil {
		return v, nil
	}
	if s.XIntOrString {
		switch x := v.(type) {
		case string, int64:
			return v, nil
		case float64:
			if i, ok := asInt(x); ok {
				return i, nil
			}
		}
		return nil, runtimeMismatch(v, where, "an integer or a string")
	}
	switch s.Type {
	case "integer":
		if i, ok := asInt(v); ok {
			return i, nil
		}
		return nil, runtimeMismatch(v, where, "an integer")
	case "number":
		switch v.(type) {
		case int64, float64:
			return v, nil
		}
		return nil, runtimeMismatch(v, where, "a number")
	case "string":
		if str, ok := v.(string); ok {
			if err := checkEnumValue(str, s, where); err != nil {
				return nil, err
			}
			return v, nil
		}
		return nil, runtimeMismatch(v, where, "a string")
	case "boolean":
		if _, ok := v.(bool); ok {
			return v, nil
		}
		return nil, runtimeMismatch(v, where, "a boolean")
	case "array":
		l, ok := v.([]any)
		if !ok {
			return nil, runtimeMismatch(v, where, expectedWord(s))
		}
		for i, e := range l {
			ne, err := conform(e, s.Items, fmt.Sprintf("%s[%d]", where, i))
			if err != nil {
				return nil, err
			}
			l[i] = ne
		}
		return l, nil
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return nil, runtimeMismatch(v, where, expectedWord(s))
		}
		var addl *structuralschema.Structural
		if s.AdditionalProperties != nil {
			addl = s.AdditionalProperties.Structural
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sub := where + "." + k
			var target *structuralschema.Structural
			if ps, ok := s.Properties[k]; ok {
				target = &ps
			} else if addl != nil {
				target = addl
			} else if len(s.Properties) > 0 && !s.XPreserveUnknownFields {
				return nil, fmt.Errorf("yields an object with field %s, but %s has no field %s%s",
					k, where, k, fieldHint(k, s))
			}
			nv, err := conform(m[k], target, sub)
			if err != nil {
				return nil, err
			}
			m[k] = nv
		}
		return m, nil
	}
	return v, nil
}

func runtimeMismatch(v any, where, want string) error {
	return fmt.Errorf("yields %s at runtime, but %s expects %s", describeNative(v), where, want)
}

func checkEnumValue(v any, s *structuralschema.Structural, where string) error {
	if s.ValueValidation == nil || len(s.ValueValidation.Enum) == 0 {
		return nil
	}
	for _, e := range s.ValueValidation.Enum {
		if jsonval.Equal(e.Object, v) {
			return nil
		}
	}
	return fmt.Errorf("yields %s, which %s does not allow (allowed: %s)", formatEnumValue(v), where, enumList(s))
}

// keyedErr keeps the error of the first key in sorted order, so that a value
// with several bad fields always reports the same one.
type keyedErr struct {
	key string
	err error
}

func (k *keyedErr) add(key string, err error) {
	if k.err == nil || key < k.key {
		k.key, k.err = key, err
	}
}

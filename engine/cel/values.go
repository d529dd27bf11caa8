package cel

import (
	"fmt"
	"reflect"
	"sort"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"

	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// The lazy value adapter: unstructured data (map[string]any, []any, int64,
// float64, string, bool, nil, as apimachinery decodes JSON and YAML) becomes a
// CEL value without copying. Maps and lists are wrapped; a field is converted
// when an expression reads it, following the schema node at its position.
//
// Conventions, all shared by field selection, has(), optional selection,
// iteration, size and ToNative:
//   - in an object with declared properties, a null field is absent (as in
//     the API server's CEL);
//   - fields an object's schema does not declare are invisible, unless the
//     object preserves unknown fields: then they are dyn values;
//   - integer fields accept whole float64 values (some decoders produce
//     them); number fields accept integers;
//   - keys iterate in sorted order, so expressions over maps are
//     deterministic (no drift from Go's map order).

// toVal converts raw, found at n, to a CEL value.
func (n *node) toVal(raw any) ref.Val {
	if raw == nil {
		return types.NullValue
	}
	switch n.kind {
	case kObject, kMap:
		if m, ok := raw.(map[string]any); ok {
			return &mapVal{m: m, n: n}
		}
	case kList:
		if l, ok := raw.([]any); ok {
			return &listVal{l: l, n: n}
		}
	case kString:
		if s, ok := raw.(string); ok {
			return types.String(s)
		}
	case kInt:
		if i, ok := asInt(raw); ok {
			return types.Int(i)
		}
	case kNumber:
		if f, ok := asFloat(raw); ok {
			return types.Double(f)
		}
	case kBool:
		if b, ok := raw.(bool); ok {
			return types.Bool(b)
		}
	case kIntOrString:
		if s, ok := raw.(string); ok {
			return types.String(s)
		}
		if i, ok := asInt(raw); ok {
			return types.Int(i)
		}
	case kDyn:
		return dynVal(raw)
	}
	return types.NewErr("%s", n.typeError(raw))
}

// dynVal converts data without a schema.
func dynVal(raw any) ref.Val {
	switch v := raw.(type) {
	case nil:
		return types.NullValue
	case map[string]any:
		return &mapVal{m: v, n: dynMapNode}
	case []any:
		return &listVal{l: v, n: dynListNode}
	case string:
		return types.String(v)
	case bool:
		return types.Bool(v)
	case int64:
		return types.Int(v)
	case int:
		return types.Int(v)
	case int32:
		return types.Int(v)
	case float64:
		return types.Double(v)
	case float32:
		return types.Double(v)
	}
	return types.DefaultTypeAdapter.NativeToValue(raw)
}

// asInt is an integer value as CEL's int (jsonval.Int).
func asInt(raw any) (int64, bool) {
	switch raw.(type) {
	case int64, int, int32, float64, float32:
		return jsonval.Int(raw)
	}
	return 0, false
}

func asFloat(raw any) (float64, bool) {
	switch v := raw.(type) {
	case float64:
		return v, true
	case float32:
		return float64(v), true
	case int64:
		return float64(v), true
	case int:
		return float64(v), true
	case int32:
		return float64(v), true
	}
	return 0, false
}

// typeError describes data that does not match its schema.
func (n *node) typeError(raw any) string {
	return fmt.Sprintf("%s: expected %s, got %s", n.selfPath(), n.kindWord(), dataWord(raw))
}

func (n *node) kindWord() string {
	switch n.kind {
	case kObject:
		return "an object"
	case kMap:
		return "a map"
	case kList:
		return "a list"
	case kString:
		return "a string"
	case kInt:
		return "an integer"
	case kNumber:
		return "a number"
	case kBool:
		return "a boolean"
	case kIntOrString:
		return "an integer or a string"
	}
	return "a value"
}

func dataWord(raw any) string {
	switch v := raw.(type) {
	case nil:
		return "null"
	case string:
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		return fmt.Sprintf("string %q", v)
	case bool:
		return fmt.Sprintf("boolean %v", v)
	case int64, int, int32:
		return fmt.Sprintf("integer %v", v)
	case float64, float32:
		return fmt.Sprintf("number %v", v)
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%T", raw)
}

// mapVal is an object (declared properties) or a map (additionalProperties,
// or a map inside dyn data) over unstructured data.
type mapVal struct {
	m map[string]any
	n *node
}

var (
	_ traits.Mapper = (*mapVal)(nil)
	_ traits.Lister = (*listVal)(nil)
)

// lookup finds the data field a CEL key refers to: the raw value and its
// schema node. ok is false when the field is absent (or null in an object).
func (v *mapVal) lookup(key string) (any, *node, bool) {
	if v.n.kind == kObject {
		if p := v.n.prop(key); p != nil {
			raw, ok := v.m[p.name]
			if !ok || raw == nil {
				return nil, nil, false
			}
			return raw, p.n, true
		}
		if !v.n.preserve {
			return nil, nil, false
		}
		raw, ok := v.m[key]
		if !ok || raw == nil {
			return nil, nil, false
		}
		return raw, dynNode, true
	}
	raw, ok := v.m[key]
	if !ok {
		return nil, nil, false
	}
	return raw, v.n.elem, true
}

func (v *mapVal) Find(key ref.Val) (ref.Val, bool) {
	k, ok := key.(types.String)
	if !ok {
		return types.ValOrErr(key, "unsupported key type %s; keys of %s are strings", key.Type().TypeName(), v.n.selfPath()), false
	}
	raw, n, found := v.lookup(string(k))
	if !found {
		return nil, false
	}
	return n.toVal(raw), true
}

func (v *mapVal) Get(key ref.Val) ref.Val {
	val, found := v.Find(key)
	if found {
		return val
	}
	if val != nil {
		return val
	}
	return types.ValOrErr(key, "no such key: %v", key)
}

func (v *mapVal) Contains(key ref.Val) ref.Val {
	val, found := v.Find(key)
	if !found && val != nil && types.IsUnknownOrError(val) {
		return val
	}
	return types.Bool(found)
}

// keys are the visible keys, sorted, as CEL names (escaped for declared
// properties of objects, as in the API server).
func (v *mapVal) keys() []string {
	keys := make([]string, 0, len(v.m))
	if v.n.kind != kObject {
		for k := range v.m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return keys
	}
	for k, raw := range v.m {
		if raw == nil {
			continue
		}
		if p := v.n.byName[k]; p != nil {
			if p.cel != "" {
				keys = append(keys, p.cel)
			} else {
				keys = append(keys, p.name)
			}
			continue
		}
		if v.n.preserve {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func (v *mapVal) Size() ref.Val {
	if v.n.kind != kObject {
		return types.Int(len(v.m))
	}
	count := 0
	for k, raw := range v.m {
		if raw == nil {
			continue
		}
		if v.n.byName[k] != nil || v.n.preserve {
			count++
		}
	}
	return types.Int(count)
}

func (v *mapVal) Iterator() traits.Iterator {
	return &mapIter{mapVal: v, keys: v.keys()}
}

type mapIter struct {
	*mapVal
	keys []string
	i    int
}

func (it *mapIter) HasNext() ref.Val { return types.Bool(it.i < len(it.keys)) }

func (it *mapIter) Next() ref.Val {
	if it.i >= len(it.keys) {
		return nil
	}
	k := it.keys[it.i]
	it.i++
	return types.String(k)
}

func (v *mapVal) Equal(other ref.Val) ref.Val {
	o, ok := other.(traits.Mapper)
	if !ok {
		return types.False
	}
	if v.Size() != o.Size() {
		return types.False
	}
	for _, k := range v.keys() {
		key := types.String(k)
		ov, found := o.Find(key)
		if !found {
			return types.False
		}
		mv, _ := v.Find(key)
		eq := mv.Equal(ov)
		if eq != types.True {
			return eq
		}
	}
	return types.True
}

func (v *mapVal) ConvertToNative(typeDesc reflect.Type) (any, error) {
	if typeDesc == reflect.TypeOf(v.m) {
		return v.m, nil
	}
	native, err := v.n.native(v.m)
	if err != nil {
		return nil, err
	}
	return types.DefaultTypeAdapter.NativeToValue(native).ConvertToNative(typeDesc)
}

func (v *mapVal) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case types.MapType:
		return v
	case types.TypeType:
		return types.MapType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", types.MapType, t.TypeName())
}

func (v *mapVal) Type() ref.Type { return types.MapType }
func (v *mapVal) Value() any     { return v.m }

// listVal is a list over unstructured data.
type listVal struct {
	l []any
	n *node
}

func (v *listVal) Get(idx ref.Val) ref.Val {
	i, err := types.IndexOrError(idx)
	if err != nil {
		return types.ValOrErr(idx, "%v", err)
	}
	if i < 0 || i >= len(v.l) {
		return types.NewErr("index out of bounds: %v", idx)
	}
	return v.n.elem.toVal(v.l[i])
}

func (v *listVal) Size() ref.Val { return types.Int(len(v.l)) }

func (v *listVal) Contains(val ref.Val) ref.Val {
	if types.IsUnknownOrError(val) {
		return val
	}
	var firstErr ref.Val
	for _, raw := range v.l {
		eq := v.n.elem.toVal(raw).Equal(val)
		if eq == types.True {
			return types.True
		}
		if eq != types.False && firstErr == nil {
			firstErr = eq
		}
	}
	if firstErr != nil {
		return firstErr
	}
	return types.False
}

func (v *listVal) Add(other ref.Val) ref.Val {
	o, ok := other.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	size, _ := o.Size().(types.Int)
	elems := make([]ref.Val, 0, len(v.l)+int(size))
	for _, raw := range v.l {
		elems = append(elems, v.n.elem.toVal(raw))
	}
	for it := o.Iterator(); it.HasNext() == types.True; {
		elems = append(elems, it.Next())
	}
	return types.NewRefValList(types.DefaultTypeAdapter, elems)
}

func (v *listVal) Iterator() traits.Iterator { return &listIter{listVal: v} }

type listIter struct {
	*listVal
	i int
}

func (it *listIter) HasNext() ref.Val { return types.Bool(it.i < len(it.l)) }

func (it *listIter) Next() ref.Val {
	if it.i >= len(it.l) {
		return nil
	}
	raw := it.l[it.i]
	it.i++
	return it.n.elem.toVal(raw)
}

func (v *listVal) Equal(other ref.Val) ref.Val {
	o, ok := other.(traits.Lister)
	if !ok {
		return types.False
	}
	if types.Int(len(v.l)) != o.Size() {
		return types.False
	}
	for i, raw := range v.l {
		eq := v.n.elem.toVal(raw).Equal(o.Get(types.Int(i)))
		if eq != types.True {
			return eq
		}
	}
	return types.True
}

func (v *listVal) ConvertToNative(typeDesc reflect.Type) (any, error) {
	if typeDesc == reflect.TypeOf(v.l) && v.n.elem.kind == kDyn {
		return v.l, nil
	}
	native, err := v.n.native(v.l)
	if err != nil {
		return nil, err
	}
	return types.DefaultTypeAdapter.NativeToValue(native).ConvertToNative(typeDesc)
}

func (v *listVal) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case types.ListType:
		return v
	case types.TypeType:
		return types.ListType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", types.ListType, t.TypeName())
}

func (v *listVal) Type() ref.Type { return types.ListType }
func (v *listVal) Value() any     { return v.l }

// activation binds `self` for one evaluation; it is memoised per scope.
type activation struct {
	self ref.Val
	vars map[string]ref.Val
}

func (a *activation) ResolveName(name string) (any, bool) {
	if name == "self" {
		return a.self, true
	}
	v, ok := a.vars[name]
	return v, ok
}

func (a *activation) Parent() interpreter.Activation { return nil }

// rootVal is `self` for obj.
func (n *node) rootVal(obj map[string]any) ref.Val {
	if obj == nil {
		obj = map[string]any{}
	}
	return &mapVal{m: obj, n: n}
}

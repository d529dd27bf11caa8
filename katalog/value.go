package katalog

import (
	"gopkg.in/yaml.v3"
)

// ValueKind is the shape of a Value.
type ValueKind int

const (
	NullValue ValueKind = iota
	StringValue
	IntValue
	FloatValue
	BoolValue
	MapValue
	ListValue
	// SelectValue is chosen when the object is reconciled, by a name: a
	// profile named by an expression (Value.Select).
	SelectValue
)

func (k ValueKind) String() string {
	switch k {
	case NullValue:
		return "null"
	case StringValue:
		return "string"
	case IntValue:
		return "integer"
	case FloatValue:
		return "number"
	case BoolValue:
		return "boolean"
	case MapValue:
		return "map"
	case ListValue:
		return "list"
	case SelectValue:
		return "selection"
	}
	return "unknown"
}

// Value is a YAML value of a katalog with its source position. Templated parts
// of a katalog (resource fields, conversion outputs, status values) stay
// Values so that every later diagnostic can point at the exact scalar.
type Value struct {
	Kind ValueKind
	// Str is the scalar's text as written (for strings, the decoded string).
	Str string
	// Scalar is the decoded scalar: string, int64, float64, bool or nil.
	Scalar any
	// Quoted reports a string scalar written in quotes (`"80"` rather than `80`).
	Quoted bool
	Map    []*MapEntry
	List   []*Value
	Pos    Pos
	// Node is the YAML node the value came from; `migrate` rewrites it in place
	// to keep comments and formatting.
	Node *yaml.Node
	// Select holds the cases of a SelectValue.
	Select *Selection
}

// Selection is a value chosen by a name when the object is reconciled: a
// profile whose name is an expression expands at load into every profile it
// may name, and the name picks one.
type Selection struct {
	// Key is the name: a string value (an expression) of the katalog.
	Key *Value
	// What names the choice in messages ("resource profile").
	What  string
	Cases []SelectCase
}

// SelectCase is one name a Selection may pick.
type SelectCase struct {
	Name string
	// Fold: the name matches in any case (built-in profiles); otherwise
	// exactly (profiles the katalog defines).
	Fold bool
	// Value is what the name stands for; nil leaves the field unset.
	Value *Value
}

// MapEntry is one key of a map Value, in document order.
type MapEntry struct {
	Key    string
	KeyPos Pos
	Value  *Value
}

// Get returns the value of key in a map Value, or nil.
func (v *Value) Get(key string) *Value {
	if v == nil || v.Kind != MapValue {
		return nil
	}
	for _, e := range v.Map {
		if e.Key == key {
			return e.Value
		}
	}
	return nil
}

// Entry returns the map entry for key, or nil.
func (v *Value) Entry(key string) *MapEntry {
	if v == nil || v.Kind != MapValue {
		return nil
	}
	for _, e := range v.Map {
		if e.Key == key {
			return e
		}
	}
	return nil
}

// Plain returns the value as plain Go data (map[string]any, []any, scalars),
// without positions.
func (v *Value) Plain() any {
	if v == nil {
		return nil
	}
	switch v.Kind {
	case MapValue:
		m := make(map[string]any, len(v.Map))
		for _, e := range v.Map {
			m[e.Key] = e.Value.Plain()
		}
		return m
	case ListValue:
		l := make([]any, len(v.List))
		for i, item := range v.List {
			l[i] = item.Plain()
		}
		return l
	default:
		return v.Scalar
	}
}

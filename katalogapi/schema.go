package katalogapi

import (
	"reflect"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// Schema is the structural schema of the JSON encoding of v's type (a
// response type of this package), from its fields and json tags: what a
// remote cross read of the route answering with it is typed by. Maps of
// anything, and interface values, are objects of any fields (x-kubernetes-
// preserve-unknown-fields); nothing is required, as another runtime's
// version may leave a field out.
func Schema(v any) *structuralschema.Structural {
	s := schemaOf(reflect.TypeOf(v))
	return &s
}

func schemaOf(t reflect.Type) structuralschema.Structural {
	for t.Kind() == reflect.Pointer {
		s := schemaOf(t.Elem())
		s.Nullable = true
		return s
	}
	typed := func(name string) structuralschema.Structural {
		return structuralschema.Structural{Generic: structuralschema.Generic{Type: name}}
	}
	switch t.Kind() {
	case reflect.String:
		return typed("string")
	case reflect.Bool:
		return typed("boolean")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return typed("integer")
	case reflect.Float32, reflect.Float64:
		return typed("number")
	case reflect.Slice, reflect.Array:
		s := typed("array")
		item := schemaOf(t.Elem())
		s.Items = &item
		return s
	case reflect.Map:
		if t.Elem().Kind() == reflect.Interface {
			return anyObject()
		}
		s := typed("object")
		item := schemaOf(t.Elem())
		s.AdditionalProperties = &structuralschema.StructuralOrBool{Bool: true, Structural: &item}
		return s
	case reflect.Struct:
		s := typed("object")
		s.Properties = map[string]structuralschema.Structural{}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			s.Properties[name] = schemaOf(f.Type)
		}
		return s
	}
	return structuralschema.Structural{Extensions: structuralschema.Extensions{XPreserveUnknownFields: true}}
}

func anyObject() structuralschema.Structural {
	return structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Extensions: structuralschema.Extensions{XPreserveUnknownFields: true}}
}

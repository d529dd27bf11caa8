package gotmpl

import (
	"github.com/google/cel-go/cel"

	"github.com/orkspace/orkestra-cel/engine/notes"
)

// The collection functions (upstream pkg/note/as.go, listmap.go): lists and
// maps of any shape, a value of another shape reading as empty. Their CEL
// counterparts take dyn; a call is not translated, since what the legacy
// engine does depends on the shape the data has, where CEL's own list and
// map operations (size, in, [?k], keys) are typed.

const dataShaped = "what it does depends on the shape of the data; call the CEL counterpart of the same name, or CEL's typed list and map operations"

var collectionsFamily = family{name: "collections (any shape; another reads as empty)", functions: []*function{
	collection("asList", notes.AsList, cel.ListType(cel.DynType), "`asList` (a list, or a string holding a JSON or YAML list; else `[]`)", cel.DynType),
	collection("asMap", notes.AsMap, cel.MapType(cel.StringType, cel.DynType), "`asMap` (a map, or a string holding one; else `{}`)", cel.DynType),
	collection("asString", notes.AsString, cel.StringType, "`asString` (maps and lists as JSON)", cel.DynType),
	collection("listGet", notes.ListGet, cel.DynType, "`listGet L I` (nil when out of range)", cel.DynType, cel.IntType),
	collection("listHas", notes.ListHas, cel.BoolType, "`listHas L X`", cel.DynType, cel.DynType),
	collection("listLen", notes.ListLen, cel.IntType, "`listLen L` (0 for anything but a list)", cel.DynType),
	collection("mapGet", notes.MapGet, cel.DynType, "`mapGet M KEY` (nil when absent)", cel.DynType, cel.StringType),
	collection("mapKeys", notes.MapKeys, cel.ListType(cel.StringType), "`mapKeys` (sorted)", cel.DynType),
	collection("mapValues", notes.MapValues, cel.ListType(cel.DynType), "`mapValues` (in the order of the sorted keys)", cel.DynType),
}}

// collection is the row of a collection function: fn with the original's
// signature for templates, and its CEL counterpart over the same
// implementation.
func collection(name string, fn any, result *cel.Type, doc string, args ...*cel.Type) *function {
	return &function{name: name, fn: fn, doc: doc, noCEL: dataShaped,
		celDecl: anyFunction(name, fn, result, args...)}
}

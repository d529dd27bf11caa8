package gotmpl

import "github.com/orkspace/orkestra-cel/engine/notes"

// The provenance annotations upstream's serve gateway sets on a custom
// resource it submits (upstream pkg/note/gateway_serve.go); this runtime
// has no gateway, but the annotations are plain metadata.

var serveFamily = family{name: "serve provenance (annotations of upstream's gateway; OBJ is usually `.`)", functions: []*function{
	objectFunction("getServeTarget", notes.GetServeTarget, "`getServeTarget`"),
	objectFunction("getServeAlias", notes.GetServeAlias, "`getServeAlias`"),
	objectFunction("getServeSource", notes.GetServeSource, "`getServeSource`"),
	objectFunction("hasServeTarget", notes.HasServeTarget, "`hasServeTarget`"),
	objectFunction("hasServeAlias", notes.HasServeAlias, "`hasServeAlias`"),
	objectFunction("hasServeSource", notes.HasServeSource, "`hasServeSource` (the `orkestra.orkspace.io/serve-*` annotations)"),
	objectFunction("isDirectApply", notes.IsDirectApply, "`isDirectApply` (none of them is set)"),
}}

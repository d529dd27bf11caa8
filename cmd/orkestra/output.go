package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// writeObjectsAs writes objects as YAML documents or, with format json, as
// one JSON document: the object itself when there is one, else a List.
func writeObjectsAs(w io.Writer, format string, objs []map[string]any) error {
	if format != "json" {
		return writeObjects(w, objs)
	}
	var doc any = map[string]any{"apiVersion": "v1", "kind": "List", "items": objs}
	if len(objs) == 1 {
		doc = objs[0]
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// checkOutput refuses an -o value outside allowed.
func checkOutput(o string, allowed ...string) error {
	if !slices.Contains(allowed, o) {
		return fmt.Errorf("-o %q: use one of %s", o, strings.Join(allowed, ", "))
	}
	return nil
}

package engine

import (
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/katalogapi"
)

// Remote cross reads (katalog.CrossSource): cross.<as> is the JSON object
// another process answered — another Orkestra runtime's /katalog route,
// typed by that route's response type (katalogapi), or an endpoint's,
// typed by the schema it declares, else any object. Legacy templates read
// it as upstream's readCross gives it: the answer plus found.

// RemoteTitle marks the schema of a remote read's value (Generic.Title):
// migrate translates its legacy reads by the answer's shape, which is not
// an object's (no metadata shortcuts).
const RemoteTitle = "orkestra.orkspace.io/remote-cross-read"

// RemoteRead is a compiled cross read with source:.
type RemoteRead struct {
	Source *katalog.Observation
	// Endpoint is the URL of an endpoint read; Name and Namespace the
	// selector, evaluated for a per-object route (Namespace is
	// source.namespace when given); nil when absent.
	Endpoint, Name, Namespace *Node
}

// remoteRead compiles a remote read's expressions over the custom resource.
func (c *compiler) remoteRead(sc compileScope, ob *katalog.Observation) *RemoteRead {
	str := &structuralschema.Structural{Generic: structuralschema.Generic{Type: "string"}}
	r := &RemoteRead{Source: ob}
	value := func(v *katalog.Value, field string) *Node {
		if v == nil {
			return nil
		}
		return c.value(sc, v, str, target{field: field, coerce: CoerceTyped})
	}
	src := ob.Remote
	if src.Endpoint != nil {
		r.Endpoint = value(src.Endpoint, ob.Field+".source.endpoint")
		return r
	}
	if !src.Protocol.PerObject() {
		return r
	}
	r.Name = value(ob.Name, ob.Field+".selector.name")
	if src.Namespace != nil {
		r.Namespace = value(src.Namespace, ob.Field+".source.namespace")
	} else {
		r.Namespace = value(ob.Namespace, ob.Field+".selector.namespace")
	}
	return r
}

// remoteSchemas types a remote read: CEL reads the answer, legacy
// templates the answer with upstream's found ("true"/"false").
func remoteSchemas(src *katalog.CrossSource) (cel, legacy structuralschema.Structural) {
	switch {
	case src.Endpoint == nil:
		cel = *katalogapi.Schema(src.Protocol.Response())
	case src.Schema != nil:
		cel = *src.Schema
	default:
		cel = anyObject
	}
	cel.Title = RemoteTitle
	legacy = cel
	legacy.Properties = make(map[string]structuralschema.Structural, len(cel.Properties)+1)
	for k, v := range cel.Properties {
		legacy.Properties[k] = v
	}
	legacy.Properties["found"] = scalar("string")
	return cel, legacy
}

// SetRemote sets what the remote read as: read answered; nil when it found
// nothing (or failed and reads as not found). CEL: cross.<as> is the answer,
// absent when nil. Legacy: the answer with found — its own, else "true"
// when it has a name (upstream's rule, pkg/utils/common FetchCrossViaHTTP),
// else "false" — and spec and status, empty when it has no such key (as a
// cross read's object: a field of them reads as missing, not as a
// failure);
// upstream's placeholder {found: "false", spec: {}, status: {}} when nil.
func (l *Live) SetRemote(as string, answer map[string]any) {
	l.cross, l.crossLegacy = copyMap(l.cross), copyMap(l.crossLegacy)
	if answer == nil {
		delete(l.cross, as)
		l.crossLegacy[as] = map[string]any{"found": "false", "spec": map[string]any{}, "status": map[string]any{}}
		return
	}
	legacy := make(map[string]any, len(answer)+3)
	for k, v := range answer {
		legacy[k] = v
	}
	for _, k := range []string{"spec", "status"} {
		if _, ok := legacy[k]; !ok {
			legacy[k] = map[string]any{}
		}
	}
	if _, ok := legacy["found"]; !ok {
		legacy["found"] = "false"
		if answer["name"] != nil {
			legacy["found"] = "true"
		}
	}
	l.cross[as], l.crossLegacy[as] = answer, legacy
}

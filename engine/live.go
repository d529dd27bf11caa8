package engine

import (
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/engine/kubeschema"
	"github.com/orkspace/orkestra-cel/katalog"
)

// Live inputs are what an entry's expressions read besides the custom
// resource and its children: the objects it observes through cross reads
// (CEL `cross.<as>`, legacy `.cross.<as>`) and the results of its external
// calls (CEL `external.<name>`, legacy `.external.<name>`). Each is typed
// at load: a cross read by the observed CRD's schema, a call's decoded body
// by the schema it declares. The operator reads and calls (operator/live);
// Live holds the values of one reconcile.

// Names of the live inputs' variables (CEL) and roots (legacy).
const (
	CrossVar    = "cross"
	ExternalVar = "external"
)

// Observation is a compiled katalog.Observation.
type Observation struct {
	Source *katalog.Observation
	GVK    schema.GroupVersionKind
	// Name, Namespace and LabelSelector select the observed objects,
	// evaluated over the custom resource; nil when absent.
	Name, Namespace, LabelSelector *Node
	// Gate is a watch's or an event's enqueueGate; nil when absent.
	Gate *ObservationGate
}

// ExternalCall is a compiled katalog.ExternalCall.
type ExternalCall struct {
	Source *katalog.ExternalCall
	// URL, Body and Headers (a map node) are evaluated over the custom
	// resource, the cross reads and the results of the calls before it;
	// Body and Headers are nil when absent.
	URL, Body, Headers *Node
	When               Condition
}

// Autoscale is a compiled workload autoscale:.
type Autoscale struct {
	Source   *katalog.Autoscale
	Up, Down *ScaleRule
}

// ScaleRule is a compiled scaleUp or scaleDown.
type ScaleRule struct {
	Source *katalog.ScaleRule
	When   Condition
}

// live compiles the entry's observations and external calls, and returns
// the scope its other expressions compile in: sc with the cross and external
// variables (and legacy roots) the entry declares.
func (c *compiler) live(sc compileScope, e *Entry) compileScope {
	box := sc.entry.Box
	if box == nil {
		return sc
	}
	str := &structuralschema.Structural{Generic: structuralschema.Generic{Type: "string"}}
	for _, ob := range box.Observations {
		if ob.Remote != nil {
			e.Remote = append(e.Remote, c.remoteRead(sc, ob))
			continue
		}
		o := &Observation{Source: ob, GVK: ob.GVK}
		t := target{coerce: CoerceTyped}
		sel := func(v *katalog.Value, key string) *Node {
			if v == nil {
				return nil
			}
			t.field = ob.Field + "." + key
			return c.value(sc, v, str, t)
		}
		o.Name, o.Namespace, o.LabelSelector = sel(ob.Name, "name"), sel(ob.Namespace, "namespace"), sel(ob.LabelSelector, "labelSelector")
		var declared []string
		if box.Gates != nil {
			declared = box.Gates.Sentinels
		}
		o.Gate = c.observationGate(sc, e, ob, declared)
		e.Observations = append(e.Observations, o)
	}
	cel, legacy := crossSchemas(box.Observations)
	if cel != nil {
		sc = sc.withInput(CrossVar, cel, legacy)
	}
	if len(box.External) == 0 {
		return sc
	}
	for i, call := range box.External {
		// A call reads the results of the calls before it.
		cel, legacy := externalSchemas(box.External[:i])
		csc := sc.withInput(ExternalVar, cel, legacy)
		ec := &ExternalCall{Source: call}
		t := target{field: call.Field + ".url", coerce: CoerceTyped}
		if call.URL != nil {
			ec.URL = c.value(csc, call.URL, str, t)
		}
		if call.Body != nil {
			t.field = call.Field + ".body"
			ec.Body = c.value(csc, call.Body, str, t)
		}
		if call.Headers != nil && call.Headers.Kind == katalog.MapValue {
			t.field = call.Field + ".headers"
			ec.Headers = c.value(csc, call.Headers, &structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, AdditionalProperties: &structuralschema.StructuralOrBool{Bool: true, Structural: str}}, t)
		}
		ec.When = c.conditions(csc, call.When, call.Or, call.Field)
		e.External = append(e.External, ec)
	}
	cel, legacy = externalSchemas(box.External)
	return sc.withInput(ExternalVar, cel, legacy)
}

// withInput is sc with a variable name typed by cel, readable by legacy
// templates as the root key name typed by legacy.
func (sc compileScope) withInput(name string, cel, legacy *structuralschema.Structural) compileScope {
	out := sc
	out.vars = append(append([]Var(nil), sc.vars...), Var{Name: name, Schema: cel})
	root := structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}}
	if r := sc.rootFor(Legacy); r != nil {
		root = *r
	}
	props := make(map[string]structuralschema.Structural, len(root.Properties)+1)
	for k, v := range root.Properties {
		props[k] = v
	}
	props[name] = *legacy
	root.Properties = props
	out.legacyRoot = &root
	return out
}

// crossSchemas types the cross variable: per cross read its object (or a
// list of them, strategy: all), typed by the observed CRD's schema; the
// legacy root adds upstream's keys found, name, namespace, labels and
// annotations. nil when the entry reads nothing.
func crossSchemas(obs []*katalog.Observation) (cel, legacy *structuralschema.Structural) {
	cel, legacy = object(nil), object(nil)
	for _, ob := range obs {
		if !ob.Exposed() {
			continue
		}
		if ob.Remote != nil {
			cel.Properties[ob.As], legacy.Properties[ob.As] = remoteSchemas(ob.Remote)
			continue
		}
		obj := observedSchema(ob)
		lobj := *obj
		lobj.Properties = make(map[string]structuralschema.Structural, len(obj.Properties)+5)
		for k, v := range obj.Properties {
			lobj.Properties[k] = v
		}
		lobj.Properties["found"] = scalar("string")
		lobj.Properties["name"] = scalar("string")
		lobj.Properties["namespace"] = scalar("string")
		lobj.Properties["labels"] = stringMap()
		lobj.Properties["annotations"] = stringMap()
		if ob.All {
			cel.Properties[ob.As] = listOf(*obj)
			legacy.Properties[ob.As] = listOf(lobj)
		} else {
			cel.Properties[ob.As] = *obj
			legacy.Properties[ob.As] = lobj
		}
	}
	if len(cel.Properties) == 0 {
		return nil, nil
	}
	return cel, legacy
}

// observedSchema is the schema of one observed object: its CRD version's
// schema with apiVersion, kind and ObjectMeta; any object when untyped.
func observedSchema(ob *katalog.Observation) *structuralschema.Structural {
	if !ob.Typed || ob.CRD == nil || ob.CRD.Schemas[ob.GVK.Version] == nil {
		return &anyObject
	}
	s := *ob.CRD.Schemas[ob.GVK.Version]
	s.Type = "object"
	s.Properties = make(map[string]structuralschema.Structural, len(s.Properties)+3)
	for k, v := range ob.CRD.Schemas[ob.GVK.Version].Properties {
		s.Properties[k] = v
	}
	s.Properties["apiVersion"] = scalar("string")
	s.Properties["kind"] = scalar("string")
	s.Properties["metadata"] = *kubeschema.ObjectMeta()
	return &s
}

// externalSchemas types the external variable for calls: per call its
// result — CEL: called (bool), status (int), body (string), error (string)
// and json (the body decoded, typed by the call's schema, else any); the
// legacy root: upstream's strings called ("true"/"false"), status ("200",
// "" without a response), body, error, json, and a JSON object body's keys
// (legacyResult).
func externalSchemas(calls []*katalog.ExternalCall) (cel, legacy *structuralschema.Structural) {
	cel, legacy = object(nil), object(nil)
	var names []string
	for _, call := range calls {
		names = append(names, call.Name)
		body := anyValue()
		if call.Schema != nil {
			body = *call.Schema
		}
		text := scalar("string")
		text.ValueValidation = &structuralschema.ValueValidation{MaxLength: &call.MaxBytes}
		result := object(map[string]structuralschema.Structural{
			"called": scalar("boolean"), "status": scalar("integer"), "body": text, "error": scalar("string"), "json": body,
		})
		// Every result has these (a call not made: false, 0, "", "").
		result.ValueValidation = &structuralschema.ValueValidation{Required: []string{"called", "status", "body", "error"}}
		cel.Properties[call.Name] = *result
		legacy.Properties[call.Name] = *legacyResult(body, text)
	}
	// Every declared call has a result.
	cel.ValueValidation = &structuralschema.ValueValidation{Required: names}
	return cel, legacy
}

// legacyResult types a call's result in upstream's shape: its own keys,
// json, and a JSON object body's keys merged below them (upstream's
// .external.<name>.<key>): typed by the call's schema when it declares an
// object, any key when it declares none.
func legacyResult(body, text structuralschema.Structural) *structuralschema.Structural {
	own := map[string]structuralschema.Structural{
		"called": scalar("string"), "status": scalar("string"), "body": text, "error": scalar("string"), "json": body,
	}
	props := map[string]structuralschema.Structural{}
	for k, p := range body.Properties {
		props[k] = p
	}
	for k, p := range own {
		props[k] = p
	}
	out := object(props)
	switch {
	case body.Type == "" && len(body.Properties) == 0:
		// No schema (or an untyped one): the body may hold any key.
		out.XPreserveUnknownFields = true
	case body.Type == "object":
		out.XPreserveUnknownFields = body.XPreserveUnknownFields
		out.AdditionalProperties = body.AdditionalProperties
	}
	return out
}

func object(props map[string]structuralschema.Structural) *structuralschema.Structural {
	if props == nil {
		props = map[string]structuralschema.Structural{}
	}
	return &structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Properties: props}
}

func scalar(t string) structuralschema.Structural {
	return structuralschema.Structural{Generic: structuralschema.Generic{Type: t}}
}

func stringMap() structuralschema.Structural {
	s := scalar("string")
	return structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, AdditionalProperties: &structuralschema.StructuralOrBool{Bool: true, Structural: &s}}
}

func listOf(item structuralschema.Structural) structuralschema.Structural {
	return structuralschema.Structural{Generic: structuralschema.Generic{Type: "array"}, Items: &item}
}

func anyValue() structuralschema.Structural {
	return structuralschema.Structural{Extensions: structuralschema.Extensions{XPreserveUnknownFields: true}}
}

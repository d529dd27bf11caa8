package katalog

import (
	"sort"

	"github.com/orkspace/orkestra-cel/katalogapi"
)

// JSONSchemaID is the $id of the katalog's JSON Schema.
const JSONSchemaID = "https://github.com/orkspace/orkestra-cel/schema/katalog.schema.json"

// JSONSchema is the JSON Schema (draft 2020-12) of a katalog document,
// generated from the loader's key tables (keys.go and the tables beside the
// decoders): a map accepts exactly the keys its decoder accepts. Keys of the
// original format that this runtime does not implement are left out, so an
// editor flags them as `orkestra check` does. Values that are expressions
// (CEL `${…}`, legacy `{{…}}`) or literals are not constrained further:
// check types them against the CRD.
func JSONSchema() map[string]any {
	defs := map[string]any{
		"condition": conditionSchema(),
		"when": desc("Conditions: a CEL string, or a list of CEL strings and structured conditions; all must hold.",
			oneOf(str(), arr(oneOf(str(), ref("condition"))))),
		"hooks":       hooksSchema(),
		"box":         boxSchema(),
		"entry":       entrySchema(false),
		"listEntry":   entrySchema(true),
		"motifImport": obj(motifImportKeys, map[string]any{"motif": desc("Path of a kind: Motif file, relative to this file.", str())}, false),
		"note":        obj(noteKeys, map[string]any{"shadow": boolean()}, false),
		"statusBlock": statusSchema(),
	}
	for key, k := range ResourceKinds {
		defs["kind."+key] = kindSchema(k)
	}
	props := map[string]any{
		"apiVersion": desc("orkestra.orkspace.io/v1 (or the older orkestra.konductor.io/v1Alpha).", enum(APIVersionV1, APIVersionV1Alpha)),
		"kind":       desc("Katalog, or Komposer for a document that composes katalogs.", enum("Katalog", "Komposer")),
		"metadata":   obj(metadataKeys, nil, false),
		"spec": obj(specKeys, map[string]any{
			"crds": desc("The CRD entries: a map keyed by entry name, or a list of entries with name.",
				oneOf(map[string]any{"type": "object", "additionalProperties": ref("entry")}, arr(ref("listEntry")))),
			"finalizers":   arr(str()),
			"imports":      arr(ref("motifImport")),
			"allowedHosts": desc("Hosts external calls may reach: exact names or *.suffix.", arr(str())),
		}, false),
		"imports":  obj([]string{"files"}, map[string]any{"files": desc("Katalog files to compose, relative to this file.", arr(str()))}, false),
		"sources":  obj([]string{"files"}, map[string]any{"files": arr(str())}, false),
		"gateway":  obj(gatewayKeys, nil, false),
		"notes":    desc("User-defined template functions.", oneOf(arr(ref("note")), obj([]string{"functions"}, map[string]any{"functions": arr(ref("note"))}, false))),
		"profiles": profilesSchema(),
		"lifecycle": desc("The katalog's lifecycle (upstream's registry): a deprecated katalog does not start unless a Komposer accepts it.", obj(patternLifecycleKeys, map[string]any{
			"maturity": enumOf(maturities),
			"deprecation": obj(patternDeprecationKeys, map[string]any{"message": str(), "migratedTo": str(),
				"timeline": obj(timelineKeys, map[string]any{"from": desc("YYYY-MM-DD", str()), "to": desc("YYYY-MM-DD", str())}, false),
				"accept":   obj(ownAcceptKeys, map[string]any{"beforeEol": boolean(), "eol": boolean()}, false)}, false),
			"compatibility": obj(compatibilityKeys, map[string]any{"kubernetes": str(), "orkestra": str()}, false),
			"accept":        obj(acceptKeys, map[string]any{"patterns": arr(obj(acceptPatternKeys, map[string]any{"name": str(), "author": str(), "version": desc("A semantic version range.", str())}, false))}, false),
		}, false)),
		"security": obj(securityKeys, map[string]any{
			"deletionProtection":  obj(protectionKeys, map[string]any{"enabled": boolean()}, false),
			"namespaceProtection": obj(protectionKeys, map[string]any{"enabled": boolean()}, false),
		}, false),
	}
	s := obj(topKeys, props, false)
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["$id"] = JSONSchemaID
	s["title"] = "Orkestra katalog"
	s["required"] = []string{"apiVersion", "kind"}
	s["$defs"] = defs
	return s
}

func entrySchema(listForm bool) map[string]any {
	keys := entryKeys
	if !listForm {
		keys = entryKeys[1:]
	}
	s := obj(keys, map[string]any{
		"name":                 str(),
		"enabled":              boolean(),
		"description":          str(),
		"crdFile":              desc("The CRD manifest, relative to this file; without it the schema comes from --crd, the cluster, or is untyped.", str()),
		"crFiles":              arr(str()),
		"namespaced":           boolean(),
		"workers":              integer(),
		"resync":               desc("Informer resync period, e.g. 30s.", str()),
		"queue":                obj(queueKeys, nil, false),
		"apiTypes":             obj(apiTypesKeys, map[string]any{"scope": enum("Namespaced", "Cluster"), "namespaced": boolean()}, false),
		"operatorBox":          ref("box"),
		"reconciler":           ref("box"),
		"conversion":           conversionSchema(),
		"imports":              arr(ref("motifImport")),
		"allowedNamespaces":    arr(str()),
		"restrictedNamespaces": arr(str()),
		"deprecated":           boolean(),
		"deprecationWarning":   str(),
		"validation":           validationSchema(),
		"mutation":             mutationSchema(),
		"normalize": desc("Spec fields rewritten on a copy of the custom resource before the entry's expressions read it (never written back).",
			obj(normalizeKeys, map[string]any{"audit": boolean(), "spec": map[string]any{"type": "object", "additionalProperties": true},
				"types": map[string]any{"type": "object", "additionalProperties": enumOf(normalizeTypes)}}, false)),
		"endpoints": desc("Routes of the runtime's HTTP API for this entry (default: all served); enabled: false turns them all off.",
			obj(endpointKeys, map[string]any{"enabled": boolean(), "health": boolean(), "info": boolean(), "validation": boolean()}, false)),
		"crossAccess": desc("false: cross reads of this entry's custom resources (by any entry) read nothing, as if none existed.", boolean()),
		"enrich":      desc("Data read beside the children: pods (each workload child's pod summaries, _pods, which the pod functions read).", arr(enum("pods"))),
		"admission":   obj(admissionKeys, map[string]any{"validation": validationSchema(), "mutation": mutationSchema(), "conversion": conversionSchema()}, false),
	}, false)
	if listForm {
		s["required"] = []string{"name"}
	}
	return s
}

func boxSchema() map[string]any {
	hooks := map[string]any{OnCreate: ref("hooks"), OnReconcile: ref("hooks"), OnDelete: ref("hooks")}
	props := map[string]any{
		"default":    boolean(),
		"finalizers": arr(str()),
		"status":     ref("statusBlock"),
		"emit": obj(emitKeys, map[string]any{"status": ref("statusBlock"),
			"events": desc("Kubernetes Events recorded on the custom resource after a reconcile, by name.",
				map[string]any{"type": "object", "additionalProperties": obj(emitEventKeys, map[string]any{
					"reason": str(), "message": str(), "type": enum("Normal", "Warning"),
					"on":   oneOf(enum(OnSuccess, OnFailure, OnAlways), arr(enum(OnSuccess, OnFailure, OnAlways))),
					"when": ref("when"), "or": ref("when")}, false)})}, false),
		"imports": arr(ref("motifImport")),
		"workers": integer(),
		"queue":   obj(queueKeys, nil, false),
		"preReconcile": obj(preReconcileKeys, map[string]any{"when": ref("when"), "or": ref("when"), "anyOf": ref("when"),
			"sentinels":     desc("The sentinels computed for this entry's custom resources, which its gates may read.", sentinelsSchema()),
			"reconcileGate": gateSchema(), "enqueueGate": gateSchema()}, false),
		"prune": desc(pruneDoc, boolean()),
		"runtime": obj(runtimeKeys, map[string]any{"finalizers": arr(str()), "allowedNamespaces": arr(str()),
			"cleanup": desc("Delete the custom resource once when/or has held for deleteAfter.",
				obj(cleanupKeys, map[string]any{"when": ref("when"), "or": ref("when"), "deleteAfter": str()}, false))}, false),
		"cross": desc("Custom resources this entry reads (cross.<as>); a change to one reconciles its readers.", arr(crossSchema())),
		"watch": desc("Objects whose changes reconcile this entry's custom resources.", arr(watchSchema())),
		"observe": desc("The newest spelling of cross and watch, and Kubernetes Events that reconcile.", obj(observeKeys, map[string]any{
			"cross": arr(crossSchema()), "watch": arr(watchSchema()), "include": str(),
			"events": map[string]any{"type": "object", "additionalProperties": eventSchema()}}, false)),
	}
	rprops := map[string]any{"default": boolean(), "workers": integer(), "queue": obj(queueKeys, nil, false), "imports": arr(ref("motifImport"))}
	for k, v := range hooks {
		props[k] = v
		rprops[k] = v
	}
	props["reconciler"] = obj(reconcilerKeys, rprops, false)
	props["reconcile"] = obj(reconcilerKeys, rprops, false)
	return obj(boxKeys, props, false)
}

const pruneDoc = "true: delete the child when its condition stops holding (and forEach children whose item is gone); false: leave it. The nearest of declaration, hook and operatorBox wins; without any, drift-corrected children other than Jobs are deleted when their condition stops holding."

func hooksSchema() map[string]any {
	props := map[string]any{"prune": desc(pruneDoc, boolean()), "external": desc("HTTP calls made before the hook's children are built; results read as external.<name>.", arr(externalSchema()))}
	for key := range ResourceKinds {
		props[key] = arr(ref("kind." + key))
	}
	return obj(append(hookKeys(), "external"), props, false)
}

func crossSchema() map[string]any {
	return obj(crossKeys, map[string]any{"crd": desc("An entry of this katalog (with source.host: of the other runtime).", str()), "as": str(), "strategy": enum("first", "all"), "maxMatches": integer(),
		"selector": obj(crossSelectorKeys, map[string]any{"name": str(), "namespace": str(), "labelSelector": str()}, false),
		"source":   desc("Read through HTTP instead of this operator's informers: another Orkestra runtime's /katalog API (host, protocol) or any JSON endpoint.", crossSourceSchema())}, false)
}

func crossSourceSchema() map[string]any {
	routes := make([]string, len(katalogapi.Routes))
	for i, r := range katalogapi.Routes {
		routes[i] = string(r)
	}
	return obj(crossSourceKeys, map[string]any{"endpoint": str(), "host": str(), "protocol": enumOf(routes), "type": desc("Older name of protocol.", enumOf(routes)),
		"namespace": str(), "token": desc("An environment variable of the operator: $NAME.", str()), "cacheFor": str(), "timeout": str(),
		"retries": integer(), "maxBytes": integer(), "continueOnError": boolean(),
		"auth":   obj(crossAuthKeys, map[string]any{"token": str(), "scheme": enum("Bearer", "Basic"), "secretRef": obj(secretRefKeys, nil, false)}, false),
		"schema": desc("OpenAPI v3 schema of the endpoint's JSON answer (cross.<as>).", map[string]any{"type": "object"})}, false)
}

func watchSchema() map[string]any {
	return obj(watchKeys, map[string]any{"on": arr(enum(EventCreate, EventUpdate, EventDelete)), "keyFrom": obj(keyFromKeys, nil, false),
		"enqueueGate": gateSchema(), "include": desc("A file whose watch: list replaces this watch.", str())}, false)
}

func eventSchema() map[string]any {
	ref := obj(objectMatchKeys, nil, false)
	return obj(eventKeys, map[string]any{"on": arr(enum(EventCreate, EventUpdate, EventDelete)), "keyFrom": obj(keyFromKeys, nil, false),
		"enqueueGate": gateSchema(), "regarding": ref, "related": ref}, false)
}

func gateSchema() map[string]any {
	return obj(gateKeys, map[string]any{"when": ref("when"), "or": ref("when"), "anyOf": ref("when"), "failPolicy": enum(FailOpen, FailClosed),
		"sentinels": desc("The gate passes when one of these is true.", sentinelsSchema())}, false)
}

func sentinelsSchema() map[string]any {
	return arr(enumOf(SentinelNames))
}

func externalSchema() map[string]any {
	s := obj(externalKeys, map[string]any{"name": str(), "url": str(), "method": enum("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"),
		"headers": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": []string{"string", "integer", "boolean"}}},
		"body":    str(), "token": desc("An environment variable of the operator: $NAME.", str()), "timeout": str(), "cacheFor": str(),
		"expectedStatus": integer(), "continueOnError": boolean(), "retries": integer(), "maxBytes": integer(),
		"when": ref("when"), "or": ref("when"), "anyOf": ref("when"),
		"auth":   obj(externalAuthKeys, map[string]any{"scheme": enum("Bearer", "Basic"), "secretRef": obj(secretRefKeys, nil, false)}, false),
		"schema": desc("OpenAPI v3 schema of the JSON response body (external.<name>.json).", map[string]any{"type": "object"})}, false)
	s["required"] = []string{"name", "url"}
	return s
}

func autoscaleSchema() map[string]any {
	cond := obj(scaleCondKeys, map[string]any{"when": ref("when"), "or": ref("when"), "anyOf": ref("when")}, false)
	return obj(autoscaleKeys, map[string]any{"min": integer(), "max": integer(), "cooldown": str(),
		"scaleUp":   obj(scaleUpKeys, map[string]any{"conditions": cond, "target": integer(), "increment": integer()}, false),
		"scaleDown": obj(scaleDownKeys, map[string]any{"conditions": cond, "target": integer(), "decrement": integer()}, false)}, false)
}

func kindSchema(k *KindSpec) map[string]any {
	keys := append(k.FieldNames(), ControlKeys...)
	props := map[string]any{"when": ref("when"), "or": ref("when"), "anyOf": ref("when"), "once": boolean(), "rotateAfter": str(),
		"reconcile":     desc("true: drift-corrected on every reconcile (the default under onReconcile); false: created once, never updated (the default under onCreate).", boolean()),
		"prune":         desc(pruneDoc, boolean()),
		"forEach":       forEachSchema(),
		"forceConflict": desc("false: apply this child without force (a field another manager owns fails the apply); default: the entry's forceConflict, else true.", boolean()),
		"id":            desc("Names the declaration for dependsOn.", map[string]any{"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"}),
		"readyWhen":     desc("CEL booleans over the observed child (self); all must hold for it to be ready.", ref("when")),
		"dependsOn":     desc("Declarations (by id) this one waits for: a list of ids (ready), or id → ready|created.", oneOf(arr(str()), map[string]any{"type": "object", "additionalProperties": oneOf(enumOf(childConditions), obj([]string{"condition"}, map[string]any{"condition": enumOf(childConditions)}, false))}))}
	if k.Fields["replicas"] != nil && !k.Open {
		keys = append(keys, "autoscale")
		props["autoscale"] = desc("Replicas computed on every reconcile from conditions, between min and max.", autoscaleSchema())
	}
	if k.Open {
		keys = append(keys, "metadata", "hasStatus")
		props["metadata"] = obj(customMetadataKeys, map[string]any{"namespaced": boolean()}, false)
		props["hasStatus"] = boolean()
	}
	return obj(keys, props, k.Open)
}

// forEachSchema is one iterator ({field, as}, or kro's {alias: field}) or a
// list of them (the cartesian product).
func forEachSchema() map[string]any {
	iter := oneOf(obj(forEachKeys, map[string]any{"field": str(), "as": str()}, false),
		map[string]any{"type": "object", "minProperties": 1, "maxProperties": 1, "additionalProperties": str()})
	return desc("One child per item of a list or map field of the custom resource; a list of iterators (each with an alias) makes one child per combination of their items.",
		oneOf(iter, map[string]any{"type": "array", "minItems": 1, "items": iter}))
}

func statusSchema() map[string]any {
	field := obj(statusFieldKeys, map[string]any{"path": str(), "when": ref("when"), "clearOnFalse": boolean(),
		"type": enum("string", "str", "default", "int", "integer", "float", "bool", "boolean", "auto")}, false)
	field["required"] = []string{"path", "value"}
	return obj(statusKeys, map[string]any{"fields": arr(field), "include": str()}, false)
}

func conversionSchema() map[string]any {
	mayFail := desc("Why this path may fail on objects its source schema accepts: check --strict then lists its findings as acknowledged, and conformance leaves the objects it rejects out of its round trips.",
		map[string]any{"type": "string", "pattern": `\S`})
	path := obj(conversionPathKeys, map[string]any{"from": str(), "to": str(), "metadata": obj(pathMetadataKeys, nil, false), "mayFail": mayFail}, false)
	path["required"] = []string{"from", "to"}
	return obj(conversionKeys, map[string]any{"storageVersion": str(), "paths": arr(path)}, false)
}

func conditionSchema() map[string]any {
	keys := []string{"field", "operator", "value", "negate", "time", "dayOfWeek", "cron", "duration"}
	keys = append(keys, operatorNames()...)
	var ops []string
	for op := range ConditionOperators {
		ops = append(ops, op)
	}
	for op := range TypeOperators {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	return obj(keys, map[string]any{
		"field":     str(),
		"operator":  enum(toAny(ops)...),
		"negate":    boolean(),
		"time":      obj(timeKeys, nil, false),
		"dayOfWeek": obj(dayOfWeekKeys, map[string]any{"weekday": boolean(), "weekend": boolean(), "in": arr(str()), "notIn": arr(str())}, false),
		"cron":      str(),
		"duration":  str(),
	}, false)
}

func validationSchema() map[string]any {
	rule := obj(append(append([]string{}, validationKeys...), []string{"field", "operator", "value", "negate"}...), map[string]any{
		"action": enum("deny", "warn"), "rule": desc("A CEL boolean over self (and oldSelf, request) that must hold.", str()), "message": str(),
	}, true)
	return obj(validationBlockKeys, map[string]any{"rules": arr(rule)}, false)
}

func mutationSchema() map[string]any {
	rule := obj(mutationRuleKeys, map[string]any{"field": str(), "valueType": enum("string", "int", "integer", "float", "bool", "boolean")}, false)
	rule["required"] = []string{"field"}
	return obj(mutationBlockKeys, map[string]any{"rules": arr(rule), "mutateFirst": boolean()}, false)
}

// obj is an object schema with exactly keys (unless open), typed by props
// where given (any value otherwise).
func obj(keys []string, props map[string]any, open bool) map[string]any {
	p := map[string]any{}
	for _, k := range keys {
		if v, ok := props[k]; ok {
			p[k] = v
		} else {
			p[k] = map[string]any{}
		}
	}
	s := map[string]any{"type": "object", "properties": p}
	if !open {
		s["additionalProperties"] = false
	}
	return s
}

func ref(def string) map[string]any { return map[string]any{"$ref": "#/$defs/" + def} }
func str() map[string]any           { return map[string]any{"type": "string"} }
func boolean() map[string]any       { return map[string]any{"type": "boolean"} }
func integer() map[string]any       { return map[string]any{"type": "integer"} }
func arr(items any) map[string]any {
	return map[string]any{"type": []string{"array", "null"}, "items": items}
}
func oneOf(alts ...any) map[string]any { return map[string]any{"anyOf": alts} }
func enum(vals ...any) map[string]any  { return map[string]any{"enum": vals} }

func enumOf(vals []string) map[string]any {
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = v
	}
	return enum(out...)
}

func desc(d string, s map[string]any) map[string]any {
	s["description"] = d
	return s
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// profilesSchema is a top-level profiles: block: per class, a list of named
// presets with the class's fields.
func profilesSchema() map[string]any {
	var keys []string
	props := map[string]any{}
	for _, c := range profileClasses {
		keys = append(keys, c.Key)
		props[c.Key] = desc(c.What+"s of this katalog; they override a built-in of the same name.",
			arr(obj(append([]string{"name", "description"}, c.Fields...), map[string]any{"name": str(), "description": str()}, false)))
	}
	return desc("Named presets (profiles) a profile: key may name, by class.", obj(keys, props, false))
}

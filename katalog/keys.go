package katalog

// The keys each map of a katalog accepts, by map. The decoder checks every
// map against its table (and reports the original format's keys it does not
// implement), and the JSON Schema of `orkestra schema` is generated from the
// same tables (jsonschema.go), so the two cannot drift. Tables next to their
// decoders: topKeys, unimplementedTop (load.go), entryKeys (entry.go),
// boxKeys, reconcilerKeys (box.go), validationKeys (admission.go),
// customMetadataKeys (custom.go).
var (
	admissionKeys           = movedInto("admission")
	validationBlockKeys     = []string{"rules", "include"}
	mutationBlockKeys       = []string{"rules", "mutateFirst", "include"}
	mutationRuleKeys        = []string{"field", "default", "override", "valueType"}
	securityKeys            = []string{"deletionProtection", "namespaceProtection", "webhooks", "conversion", "rbac"}
	protectionKeys          = []string{"enabled", "cleanupOnShutdown", "failurePolicy"}
	timeKeys                = []string{"after", "before"}
	dayOfWeekKeys           = []string{"weekday", "weekend", "in", "notIn"}
	motifImportKeys         = []string{"motif", "with"}
	apiTypesKeys            = []string{"group", "version", "kind", "plural", "singular", "shortNames", "listKind", "scope", "namespaced", "categories"}
	queueKeys               = []string{"maxDepth", "maxQueueDepth", "failureThreshold", "default", "behaviour"}
	emitKeys                = append(movedInto("operatorBox.emit"), "events")
	statusKeys              = []string{"fields", "include", "conditions"}
	unimplementedStatus     = []string{"children"}
	statusFieldKeys         = []string{"path", "value", "type", "when", "clearOnFalse"}
	conversionKeys          = []string{"storageVersion", "paths"}
	unimplementedConversion = []string{"updateCRD", "participant", "enabled"}
	conversionPathKeys      = []string{"from", "to", "spec", "status", "metadata", "mayFail"}
	pathMetadataKeys        = []string{"labels", "annotations"}
	forEachKeys             = []string{"field", "as"}
	preReconcileKeys        = []string{"when", "or", "anyOf", "reconcileGate", "enqueueGate", "sentinels"}
	metadataKeys            = []string{"name", "namespace", "description", "version", "author", "tags", "labels", "annotations", "maintainers", "homepage"}
	specKeys                = []string{"crds", "finalizers", "imports", "allowedHosts"}
	gatewayKeys             = []string{"endpoint", "enabled", "standalone", "api", "webhooks", "clusters"}
	noteKeys                = []string{"name", "description", "expression", "shadow"}
)

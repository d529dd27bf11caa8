package katalog

import (
	"sort"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// KindSpec describes one resource kind a hook block may declare, with the
// simplified fields of the original katalogs and the type each one must have
// once evaluated. The engine checks expression outputs against Fields; the
// operator's builders turn the evaluated fields into the real object.
type KindSpec struct {
	// Key is the katalog key: deployments, services, …
	Key string
	// APIVersion and Kind of the object built (empty for custom: it says its own).
	APIVersion string
	Kind       string
	// NameSuffix builds the default name `<cr>-<suffix>` when name is omitted.
	NameSuffix string
	// Fields are the allowed fields and their types.
	Fields map[string]*structuralschema.Structural
	// Required fields.
	Required []string
	// Open kinds (custom) accept any further top-level field, typed as anything.
	Open bool
	// CreateOnly kinds (Jobs) are created once and never compared or
	// updated, and are left in place when their condition stops holding
	// unless prune: true says otherwise (upstream's pkg/runners/jobs.go).
	CreateOnly bool
	// ClusterScoped kinds live in no namespace: they take no namespace:
	// and get no owner reference.
	ClusterScoped bool
	// CopyKey is the field that copies an existing object of the kind
	// (fromSecret, …); "" when the kind cannot copy.
	CopyKey string
	// Children are the kind's keys under `.children`.
	Children ChildKeys
}

// ChildKeys name one child kind in `.children` as the original engine did
// (upstream pkg/children): Plural maps child name → object, Singular holds
// one object. The lower-case kind and its plural; the
// PersistentVolumeClaim's singular is "pvc", the PersistentVolume's "pv",
// the HorizontalPodAutoscaler's "hpas"/"hpa", custom resources are
// "customs"/"custom". Kinds upstream does not read back use the lower-case
// kind and its plural.
type ChildKeys struct{ Plural, Singular string }

// FieldNames returns the allowed field names, sorted (for did-you-mean).
func (k *KindSpec) FieldNames() []string {
	names := make([]string, 0, len(k.Fields))
	for n := range k.Fields {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Control keys of a resource declaration: they steer the reconciler and are
// not fields of the object.
var ControlKeys = []string{"when", "or", "anyOf", "reconcile", "prune", "once", "rotateAfter", "forEach", "forceConflict", "id", "readyWhen", "dependsOn"}

// Keys the original resource declarations define that this runtime does not
// implement (upstream.go says how each is reported).
var unimplementedResourceKeys = []string{"waitFor", "sleep"}

// resourceKeyErrors are unimplemented resource keys whose upstream meaning
// differs from a key of the same name elsewhere: the error says what they do
// on a resource and what to write instead.
var resourceKeyErrors = map[string]string{
	"sleep": "sleep delays a resource's reconcile for chaos testing, which this runtime does not do; remove it",
}

// Schema constructors for the catalog.
func sString() *structuralschema.Structural {
	return &structuralschema.Structural{Generic: structuralschema.Generic{Type: "string"}}
}

func sInt() *structuralschema.Structural {
	return &structuralschema.Structural{Generic: structuralschema.Generic{Type: "integer"}}
}

func sBool() *structuralschema.Structural {
	return &structuralschema.Structural{Generic: structuralschema.Generic{Type: "boolean"}}
}

func sStringMap() *structuralschema.Structural {
	return &structuralschema.Structural{
		Generic:              structuralschema.Generic{Type: "object"},
		AdditionalProperties: &structuralschema.StructuralOrBool{Bool: true, Structural: sString()},
	}
}

func sList(items *structuralschema.Structural) *structuralschema.Structural {
	return &structuralschema.Structural{Generic: structuralschema.Generic{Type: "array"}, Items: items}
}

// sAny is a value of any shape (a Kubernetes sub-object the katalog writes in
// full, such as a probe or a volume).
func sAny() *structuralschema.Structural {
	return &structuralschema.Structural{Extensions: structuralschema.Extensions{XPreserveUnknownFields: true}}
}

func sObject() *structuralschema.Structural {
	return &structuralschema.Structural{
		Generic:    structuralschema.Generic{Type: "object"},
		Extensions: structuralschema.Extensions{XPreserveUnknownFields: true},
	}
}

func sIntOrString() *structuralschema.Structural {
	return &structuralschema.Structural{Extensions: structuralschema.Extensions{XIntOrString: true}}
}

func fields(groups ...map[string]*structuralschema.Structural) map[string]*structuralschema.Structural {
	out := map[string]*structuralschema.Structural{}
	for _, g := range groups {
		for k, v := range g {
			out[k] = v
		}
	}
	return out
}

// clusterFields are the identity fields of a cluster-scoped kind.
func clusterFields() map[string]*structuralschema.Structural {
	return map[string]*structuralschema.Structural{
		"name":        sString(),
		"labels":      sStringMap(),
		"annotations": sStringMap(),
	}
}

func commonFields() map[string]*structuralschema.Structural {
	return map[string]*structuralschema.Structural{
		"name":        sString(),
		"namespace":   sString(),
		"labels":      sStringMap(),
		"annotations": sStringMap(),
	}
}

// copyFields copy an existing object (from, in fromNamespace) and write the
// copy to several namespaces at once (toNamespaces: namespaces, or lists of
// them).
func copyFields(from string) map[string]*structuralschema.Structural {
	return map[string]*structuralschema.Structural{
		from:            sString(),
		"fromNamespace": sString(),
		"toNamespaces":  sList(sAny()),
	}
}

// podFields are the simplified pod template fields shared by every workload.
func podFields() map[string]*structuralschema.Structural {
	return map[string]*structuralschema.Structural{
		"image":              sString(),
		"imagePullPolicy":    sString(),
		"imagePullSecrets":   sList(sString()),
		"containerName":      sString(),
		"command":            sList(sString()),
		"args":               sList(sString()),
		"port":               sInt(),
		"protocol":           sString(),
		"env":                sAny(), // a list of {name, value|valueFrom}, or a map keyed by name
		"workingDirectory":   sString(),
		"envFrom":            sList(sObject()),
		"resources":          sObject(),
		"livenessProbe":      sObject(),
		"readinessProbe":     sObject(),
		"startupProbe":       sObject(),
		"securityContext":    sObject(),
		"podSecurityContext": sObject(),
		"volumes":            sList(sObject()),
		"volumeMounts":       sList(sObject()),
		"serviceAccountName": sString(),
		"nodeSelector":       sStringMap(),
		"tolerations":        sList(sObject()),
		"podLabels":          sStringMap(),
		"podAnnotations":     sStringMap(),
		// Upstream's shorthands, expanded at load (profiles.go): probes
		// {liveness, readiness, startup} into the three probes, podSecurity
		// into podSecurityContext.
		"probes":      sObject(),
		"podSecurity": sObject(),
	}
}

// ApplyOrder is the order kinds are applied in within one hook: namespaces
// before what goes into them, quotas and limit ranges before the pods they
// constrain, what a workload mounts or runs as before it, RBAC roles before
// their bindings, and what refers to a workload (a Service, an autoscaler,
// a disruption budget) after it (upstream: pkg/runtime/runners order).
var ApplyOrder = []string{
	"namespaces", "resourceQuotas", "limitRanges", "networkPolicies",
	"secrets", "configMaps", "serviceAccounts", "clusterRoles", "roles", "clusterRoleBindings", "roleBindings",
	"persistentVolumes", "persistentVolumeClaims", "custom",
	"deployments", "replicaSets", "statefulSets", "services", "jobs", "cronJobs", "ingresses",
	"hpa", "pdb", "pods",
}

// Kinds of upstream's hook blocks that it declares but never builds
// (placeholders in its HookTemplates): an error naming custom:.
var unimplementedKinds = []string{
	"daemonSets", "serviceMonitors", "podSecurityPolicies", "priorityClasses", "runtimeClasses",
	"priorityLevelConfigurations", "podTemplates", "storageClasses", "storageLocations", "storagePools",
	"storageBackups", "storageSnapshots", "storageVolumes", "volumes", "volumeMounts",
}

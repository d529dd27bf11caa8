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
}

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
var ControlKeys = []string{"when", "or", "anyOf", "reconcile", "prune", "once", "rotateAfter", "forEach"}

// Keys the original resource declarations define that this runtime does not
// implement (upstream.go says how each is reported).
var unimplementedResourceKeys = []string{"dependsOn", "waitFor", "readyWhen", "autoscale", "sleep"}

// resourceKeyErrors are unimplemented resource keys whose upstream meaning
// differs from a key of the same name elsewhere: the error says what they do
// on a resource and what to write instead.
var resourceKeyErrors = map[string]string{
	"autoscale": "workload autoscaling (replicas patched from when: conditions on every reconcile) is not supported by this runtime; declare a HorizontalPodAutoscaler for the workload under custom: (apiVersion autoscaling/v2, kind HorizontalPodAutoscaler)",
	"sleep":     "sleep delays a resource's reconcile for chaos testing, which this runtime does not do; remove it",
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
	}
}

// ResourceKinds is the catalog of kinds a hook block may declare, by key.
var ResourceKinds = buildKinds()

func buildKinds() map[string]*KindSpec {
	ks := []*KindSpec{
		{Key: "deployments", APIVersion: "apps/v1", Kind: "Deployment", NameSuffix: "deployment",
			Fields: fields(commonFields(), podFields(), map[string]*structuralschema.Structural{
				"replicas": sInt(),
			}), Required: []string{"image"}},
		{Key: "statefulSets", APIVersion: "apps/v1", Kind: "StatefulSet", NameSuffix: "statefulset",
			Fields: fields(commonFields(), podFields(), map[string]*structuralschema.Structural{
				"replicas":             sInt(),
				"serviceName":          sString(),
				"volumeClaimTemplates": sList(sObject()),
			}), Required: []string{"image"}},
		{Key: "jobs", APIVersion: "batch/v1", Kind: "Job", NameSuffix: "job",
			Fields: fields(commonFields(), podFields(), map[string]*structuralschema.Structural{
				"backoffLimit":            sInt(),
				"restartPolicy":           sString(),
				"ttlSecondsAfterFinished": sInt(),
			}), Required: []string{"image"}, CreateOnly: true},
		{Key: "cronJobs", APIVersion: "batch/v1", Kind: "CronJob", NameSuffix: "cronjob",
			Fields: fields(commonFields(), podFields(), map[string]*structuralschema.Structural{
				"schedule":                   sString(),
				"suspend":                    sBool(),
				"concurrencyPolicy":          sString(),
				"startingDeadlineSeconds":    sInt(),
				"successfulJobsHistoryLimit": sInt(),
				"failedJobsHistoryLimit":     sInt(),
				"backoffLimit":               sInt(),
				"restartPolicy":              sString(),
			}), Required: []string{"image", "schedule"}},
		{Key: "pods", APIVersion: "v1", Kind: "Pod", NameSuffix: "pod",
			Fields: fields(commonFields(), podFields(), map[string]*structuralschema.Structural{
				"restartPolicy": sString(),
			}), Required: []string{"image"}},
		{Key: "services", APIVersion: "v1", Kind: "Service", NameSuffix: "svc",
			Fields: fields(commonFields(), map[string]*structuralschema.Structural{
				"type":       sString(),
				"port":       sInt(),
				"targetPort": sInt(),
				"nodePort":   sInt(),
				"protocol":   sString(),
				"headless":   sBool(),
				"selector":   sStringMap(),
				"portName":   sString(),
			})},
		{Key: "configMaps", APIVersion: "v1", Kind: "ConfigMap", NameSuffix: "config",
			Fields: fields(commonFields(), copyFields("fromConfigMap"), map[string]*structuralschema.Structural{
				"data": sStringMap(),
			})},
		{Key: "secrets", APIVersion: "v1", Kind: "Secret", NameSuffix: "secret",
			Fields: fields(commonFields(), copyFields("fromSecret"), map[string]*structuralschema.Structural{
				"type": sString(),
				"data": sStringMap(),
			})},
		{Key: "serviceAccounts", APIVersion: "v1", Kind: "ServiceAccount", NameSuffix: "sa",
			Fields: fields(commonFields(), map[string]*structuralschema.Structural{
				"automountServiceAccountToken": sBool(),
				"imagePullSecrets":             sList(sString()),
			})},
		{Key: "ingresses", APIVersion: "networking.k8s.io/v1", Kind: "Ingress", NameSuffix: "ingress",
			Fields: fields(commonFields(), map[string]*structuralschema.Structural{
				"host":             sString(),
				"path":             sString(),
				"pathType":         sString(),
				"serviceName":      sString(),
				"servicePort":      sInt(),
				"ingressClassName": sString(),
				"tlsSecretName":    sString(),
			}), Required: []string{"serviceName"}},
		{Key: "persistentVolumeClaims", APIVersion: "v1", Kind: "PersistentVolumeClaim", NameSuffix: "pvc",
			Fields: fields(commonFields(), map[string]*structuralschema.Structural{
				"storage":          sIntOrString(),
				"accessModes":      sList(sString()),
				"storageClassName": sString(),
				"volumeMode":       sString(),
			}), Required: []string{"storage"}},
		{Key: "custom", NameSuffix: "custom", Open: true,
			Fields: fields(commonFields(), map[string]*structuralschema.Structural{
				"apiVersion": sString(),
				"kind":       sString(),
				"spec":       sAny(),
			}), Required: []string{"apiVersion", "kind"}},
	}
	out := map[string]*KindSpec{}
	for _, k := range ks {
		out[k.Key] = k
	}
	return out
}

// ApplyOrder is the order kinds are applied in within one hook, so that what
// a workload mounts exists before it.
var ApplyOrder = []string{
	"secrets", "configMaps", "serviceAccounts", "persistentVolumeClaims", "custom",
	"deployments", "statefulSets", "services", "jobs", "cronJobs", "ingresses", "pods",
}

// Kinds the original format defines that this runtime does not build: they
// load with a warning.
var unimplementedKinds = []string{
	"replicaSets", "networkPolicies", "namespaces", "persistentVolumes", "roles", "roleBindings",
	"clusterRoles", "clusterRoleBindings", "hpa", "pdb", "resourceQuotas", "limitRanges",
}

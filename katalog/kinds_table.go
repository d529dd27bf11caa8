package katalog

import (
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// ResourceKinds is the catalog of kinds a hook block may declare, by key:
// every kind of upstream's hook blocks (pkg/types/types_hook_templates.go).
// Each row is the katalog side of a kind; operator/render's Kinds holds its
// builder and drift rules.
var ResourceKinds = buildKinds()

type fieldSet = map[string]*structuralschema.Structural

func buildKinds() map[string]*KindSpec {
	ks := []*KindSpec{
		{Key: "deployments", APIVersion: "apps/v1", Kind: "Deployment", NameSuffix: "deployment", Children: ChildKeys{"deployments", "deployment"},
			Fields: fields(commonFields(), podFields(), fieldSet{
				"replicas": sInt(),
				// rollingUpdate: {maxSurge, maxUnavailable} or {profile}.
				"rollingUpdate": sObject(),
			}), Required: []string{"image"}},
		{Key: "replicaSets", APIVersion: "apps/v1", Kind: "ReplicaSet", NameSuffix: "replicaset", Children: ChildKeys{"replicasets", "replicaset"},
			Fields: fields(commonFields(), podFields(), fieldSet{
				"replicas": sInt(),
			}), Required: []string{"image"}},
		{Key: "statefulSets", APIVersion: "apps/v1", Kind: "StatefulSet", NameSuffix: "statefulset", Children: ChildKeys{"statefulsets", "statefulset"},
			Fields: fields(commonFields(), podFields(), fieldSet{
				"replicas":             sInt(),
				"serviceName":          sString(),
				"volumeClaimTemplates": sList(sObject()),
			}), Required: []string{"image"}},
		{Key: "jobs", APIVersion: "batch/v1", Kind: "Job", NameSuffix: "job", Children: ChildKeys{"jobs", "job"},
			Fields: fields(commonFields(), podFields(), fieldSet{
				"backoffLimit":            sInt(),
				"restartPolicy":           sString(),
				"ttlSecondsAfterFinished": sInt(),
			}), Required: []string{"image"}, CreateOnly: true},
		{Key: "cronJobs", APIVersion: "batch/v1", Kind: "CronJob", NameSuffix: "cronjob", Children: ChildKeys{"cronjobs", "cronjob"},
			Fields: fields(commonFields(), podFields(), fieldSet{
				"schedule":                   sString(),
				"suspend":                    sBool(),
				"concurrencyPolicy":          sString(),
				"startingDeadlineSeconds":    sInt(),
				"successfulJobsHistoryLimit": sInt(),
				"failedJobsHistoryLimit":     sInt(),
				"backoffLimit":               sInt(),
				"restartPolicy":              sString(),
			}), Required: []string{"image", "schedule"}},
		{Key: "pods", APIVersion: "v1", Kind: "Pod", NameSuffix: "pod", Children: ChildKeys{"pods", "pod"},
			Fields: fields(commonFields(), podFields(), fieldSet{
				"restartPolicy": sString(),
			}), Required: []string{"image"}},
		{Key: "services", APIVersion: "v1", Kind: "Service", NameSuffix: "svc", Children: ChildKeys{"services", "service"},
			Fields: fields(commonFields(), fieldSet{
				"type":       sString(),
				"port":       sInt(),
				"targetPort": sInt(),
				"nodePort":   sInt(),
				"protocol":   sString(),
				"headless":   sBool(),
				"selector":   sStringMap(),
				"portName":   sString(),
			})},
		{Key: "configMaps", APIVersion: "v1", Kind: "ConfigMap", NameSuffix: "config", Children: ChildKeys{"configmaps", "configmap"}, CopyKey: "fromConfigMap",
			Fields: fields(commonFields(), copyFields("fromConfigMap"), fieldSet{
				"data": sStringMap(),
			})},
		{Key: "secrets", APIVersion: "v1", Kind: "Secret", NameSuffix: "secret", Children: ChildKeys{"secrets", "secret"}, CopyKey: "fromSecret",
			Fields: fields(commonFields(), copyFields("fromSecret"), fieldSet{
				"type": sString(),
				"data": sStringMap(),
			})},
		{Key: "serviceAccounts", APIVersion: "v1", Kind: "ServiceAccount", NameSuffix: "sa", Children: ChildKeys{"serviceaccounts", "serviceaccount"},
			Fields: fields(commonFields(), fieldSet{
				"automountServiceAccountToken": sBool(),
				"imagePullSecrets":             sList(sString()),
			})},
		{Key: "ingresses", APIVersion: "networking.k8s.io/v1", Kind: "Ingress", NameSuffix: "ingress", Children: ChildKeys{"ingresses", "ingress"},
			Fields: fields(commonFields(), fieldSet{
				"host":             sString(),
				"path":             sString(),
				"pathType":         sString(),
				"serviceName":      sString(),
				"servicePort":      sInt(),
				"ingressClassName": sString(),
				"tlsSecretName":    sString(),
			}), Required: []string{"serviceName"}},
		{Key: "persistentVolumeClaims", APIVersion: "v1", Kind: "PersistentVolumeClaim", NameSuffix: "pvc", Children: ChildKeys{"persistentvolumeclaims", "pvc"},
			Fields: fields(commonFields(), fieldSet{
				"storage":          sIntOrString(),
				"accessModes":      sList(sString()),
				"storageClassName": sString(),
				"volumeMode":       sString(),
				"volumeName":       sString(),
			}), Required: []string{"storage"}},
		{Key: "persistentVolumes", APIVersion: "v1", Kind: "PersistentVolume", NameSuffix: "pv", Children: ChildKeys{"persistentvolumes", "pv"}, ClusterScoped: true,
			Fields: fields(clusterFields(), fieldSet{
				"capacity":         sIntOrString(),
				"accessModes":      sList(sString()),
				"reclaimPolicy":    sString(),
				"storageClassName": sString(),
				"volumeMode":       sString(),
				"hostPath":         sString(),
				"csiDriver":        sString(),
				"csiVolumeHandle":  sString(),
			}), Required: []string{"capacity"}},
		{Key: "namespaces", APIVersion: "v1", Kind: "Namespace", NameSuffix: "ns", Children: ChildKeys{"namespaces", "namespace"}, ClusterScoped: true,
			Fields: clusterFields()},
		{Key: "roles", APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role", NameSuffix: "role", Children: ChildKeys{"roles", "role"},
			Fields: fields(commonFields(), fieldSet{
				"rules": sList(sObject()),
			})},
		{Key: "roleBindings", APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding", NameSuffix: "rolebinding", Children: ChildKeys{"rolebindings", "rolebinding"},
			Fields: fields(commonFields(), fieldSet{
				"roleRef":  sObject(),
				"subjects": sList(sObject()),
			}), Required: []string{"roleRef"}},
		{Key: "clusterRoles", APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", NameSuffix: "cluster-role", Children: ChildKeys{"clusterroles", "clusterrole"}, ClusterScoped: true,
			Fields: fields(clusterFields(), fieldSet{
				"rules":           sList(sObject()),
				"aggregationRule": sObject(),
			})},
		{Key: "clusterRoleBindings", APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding", NameSuffix: "crb", Children: ChildKeys{"clusterrolebindings", "clusterrolebinding"}, ClusterScoped: true,
			Fields: fields(clusterFields(), fieldSet{
				"roleRef":  sObject(),
				"subjects": sList(sObject()),
			}), Required: []string{"roleRef"}},
		{Key: "hpa", APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", NameSuffix: "hpa", Children: ChildKeys{"hpas", "hpa"},
			Fields: fields(commonFields(), fieldSet{
				"scaleTargetRef":                 sObject(),
				"minReplicas":                    sInt(),
				"maxReplicas":                    sInt(),
				"targetCPUUtilizationPercentage": sInt(),
				// behavior: {scaleUp, scaleDown} as Kubernetes writes them, or {profile}.
				"behavior": sObject(),
			}), Required: []string{"scaleTargetRef", "maxReplicas"}},
		{Key: "pdb", APIVersion: "policy/v1", Kind: "PodDisruptionBudget", NameSuffix: "pdb", Children: ChildKeys{"poddisruptionbudgets", "poddisruptionbudget"},
			Fields: fields(commonFields(), fieldSet{
				"selector":       sObject(),
				"minAvailable":   sIntOrString(),
				"maxUnavailable": sIntOrString(),
				// behavior: {profile} or {minAvailable | maxUnavailable}.
				"behavior": sObject(),
			})},
		{Key: "networkPolicies", APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy", NameSuffix: "netpol", Children: ChildKeys{"networkpolicies", "networkpolicy"}, CopyKey: "fromNetworkPolicy",
			Fields: fields(commonFields(), copyFields("fromNetworkPolicy"), fieldSet{
				"podSelector": sObject(),
				"ingress":     sList(sObject()),
				"egress":      sList(sObject()),
				"policyTypes": sList(sString()),
				"profile":     sString(),
			})},
		{Key: "resourceQuotas", APIVersion: "v1", Kind: "ResourceQuota", NameSuffix: "quota", Children: ChildKeys{"resourcequotas", "resourcequota"}, CopyKey: "fromResourceQuota",
			Fields: fields(commonFields(), copyFields("fromResourceQuota"), fieldSet{
				"hard":    sStringMap(),
				"scopes":  sList(sString()),
				"profile": sString(),
			})},
		{Key: "limitRanges", APIVersion: "v1", Kind: "LimitRange", NameSuffix: "limits", Children: ChildKeys{"limitranges", "limitrange"}, CopyKey: "fromLimitRange",
			Fields: fields(commonFields(), copyFields("fromLimitRange"), fieldSet{
				"limits":  sList(sObject()),
				"profile": sString(),
			})},
		{Key: "custom", NameSuffix: "custom", Children: ChildKeys{"customs", "custom"}, Open: true,
			Fields: fields(commonFields(), fieldSet{
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

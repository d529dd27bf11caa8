package gotmpl

import (
	"sort"
	"strings"
	"testing"
)

// upstreamCatalog is upstream's function library as its generated catalog
// lists it (orkspace/orkestra pkg/note/catalog_generated.go): 277 names by
// domain. Every one is implemented here, in the legacy engine and with a
// CEL counterpart (a declared function or an exact translation), or
// refused at load with the reason.
var upstreamCatalog = map[string]string{
	"collections":    "asList asMap asString listGet listHas listLen mapGet mapKeys mapValues",
	"conditional":    "boolDefault boolTernary coalesce default empty eqTernary notEmpty ternary",
	"container":      "containerEnv containerImage containerPort",
	"cron":           "cronDescribe cronDom cronDow cronExpr cronField cronFromAny cronFromMap cronHour cronMinute cronMonth cronNormalize cronToMap cronValid",
	"data":           "fromBase64 lookup repoSlug sha256sum slugify toBase64 toJSON truncateName",
	"domain":         "domainBare domainHost",
	"fields":         "creationTimestamp resourceName resourceNamespace resourceUID resourceVersion",
	"hpa":            "hpaAbleToScale hpaAtMax hpaCurrentReplicas hpaDesiredReplicas hpaMaxReplicas hpaMetricTypes hpaMinReplicas hpaScaleTargetKind hpaScaleTargetName hpaScaling hpaScalingActive hpaScalingLimited",
	"ingress":        "ingressClassName ingressHost ingressIP ingressLoadBalancerIPs ingressReady ingressRules ingressTLSHosts ingressTLSSecretCount",
	"job":            "cronJobActiveCount cronJobLastJobName cronJobLastJobSucceeded cronJobLastScheduleTime cronJobLastSuccessTime cronJobLastSuccessfulJobName cronJobNextScheduleTime jobActive jobActivePodNames jobFailed jobFailedPodNames jobFirstExitCode jobSucceeded jobSucceededPodNames",
	"kubernetes":     "annotations conditionMessage conditionReason generation get getAnnotation getAnnotationInt getLabel getLabelInt getStatus hasAnnotation hasCondition hasLabel hasStatus isSynced isTerminating labelMatches labels meta observedGeneration ownerKind ownerName phase resourceCPU resourceExists resourceMemory spec status",
	"kubevalidation": "isDNS1123Subdomain isValidAnnotationKey isValidLabelKey isValidLabelValue",
	"math":           "abs add clamp div max min mod mul sub",
	"net":            "cidrContains ipIsPrivate ipValid",
	"node":           "nodeAllocatableCPU nodeAllocatableMemory nodeCondition nodeReady nodeTaints podNodeInstanceType podNodeName podNodeRegion podNodeZone",
	"pods":           "hasCrashingPod podByOrdinal podContainerReasons podContainerState podCount podCrashLoopDetected podCreateContainerErrorDetected podErrImagePullDetected podErrorDetected podIPs podImagePullBackOffDetected podInvalidImageNameDetected podMaxRestarts podNames podNodes podOOMKilledDetected podPhases podPostStartHookErrorDetected podPreStartHookErrorDetected podRunContainerErrorDetected readyPodCount",
	"prometheus":     "promAboveThreshold promBelowThreshold promLabelValues promMax promSeriesCount promSum promValue",
	"pvc":            "pvcAccessModes pvcBound pvcCapacity pvcPhase pvcProvisioner pvcStorageClass pvcStorageClassProvisioner pvcStorageClassReclaimPolicy pvcVolumeMode",
	"quantity":       "formatQuantity parseQuantity subtractQuantity sumQuantity",
	"random":         "randomAlphanumeric randomBase64 randomHex uuidv4",
	"replica":        "allReplicasReady availableReplicas desiredReplicas readyReplicas rolloutComplete updatedReplicas",
	"replicaset":     "deploymentReplicaSetCount deploymentReplicaSets oldDeploymentReplicaSets replicaSetOwnerKind replicaSetOwnerName",
	"safeaccess":     "getBoolOr getIntOr getOr getStringOr",
	"semver":         "semverBump semverCompare semverConstraint semverMajor semverMinor semverPatch semverValid",
	"serve":          "getServeAlias getServeSource getServeTarget hasServeAlias hasServeSource hasServeTarget isDirectApply",
	"service":        "backingPodCount backingPodNames endpointsReady hasEndpoints serviceClusterIP serviceEndpointCount serviceEndpoints serviceFirstEndpoint serviceLoadBalancerHost serviceLoadBalancerIP serviceNodePort",
	"statefulset":    "statefulSetCurrentRevision statefulSetPVCCount statefulSetUpdateRevision",
	"strings":        "camelToKebab concat contains hasPrefix hasSuffix join repeat replace split toLower toUpper trim trimPrefix trimSpace trimSuffix truncate",
	"time":           "durationAdd durationSeconds durationValid isExpired nextCron timeAgo timeFormat timeInWindow timeNotInWindow timeSince timeUntil weekday weekend",
	"types":          "len toBool toFloat toInt toJson toList toString typeBool typeList typeMap typeNull typeNumber typeOf typeString",
	"validation":     "isValidEmail isValidGitRepository isValidImageRef isValidJSON isValidPort isValidURL",
	"warnings":       "firstWarning hasWarnings warningCount warningMessages warningReasons",
}

// upstreamStatus is what this runtime does with one of upstream's functions;
// inCEL are the CEL backend's functions beyond Kubernetes' (the orkestra
// library declares some counterparts, e.g. cronToMap, with differences the
// README states).
func upstreamStatus(name string, inCEL map[string]bool) string {
	if f := refusedFuncs[name]; f != nil {
		return "refused"
	}
	f := funcs[name]
	switch {
	case f == nil:
		return "missing"
	case len(f.celDecl) > 0 || f.translate != nil || f.cel != "" || inCEL[name]:
		return "implemented"
	}
	return "legacy only"
}

// Every function of upstream's catalog has a row: implemented with a CEL
// counterpart, or refused with a reason (the reason's load error is
// TestRefusedFunctions'). go test -run TestUpstreamCatalog -v prints the
// counts.
func TestUpstreamCatalog(t *testing.T) {
	trSetup(t)
	inCEL := map[string]bool{}
	for _, fn := range trCEL.ExtraFunctions() {
		inCEL[fn] = true
	}
	counts := map[string]int{}
	seen := map[string]bool{}
	var domains []string
	for d := range upstreamCatalog {
		domains = append(domains, d)
	}
	sort.Strings(domains)
	for _, d := range domains {
		for _, name := range strings.Fields(upstreamCatalog[d]) {
			if seen[name] {
				t.Errorf("%s is listed twice", name)
			}
			seen[name] = true
			st := upstreamStatus(name, inCEL)
			counts[st]++
			switch st {
			case "missing":
				t.Errorf("%s (%s): upstream's function has neither a row nor a reason to refuse it", name, d)
			case "legacy only":
				t.Errorf("%s (%s): implemented in the legacy engine without a CEL counterpart (%s)", name, d, funcs[name].noCEL)
			case "refused":
				if !strings.Contains(refusedFuncs[name].refused, ";") {
					t.Errorf("%s: its reason %q does not name the alternative (after a ;)", name, refusedFuncs[name].refused)
				}
			}
		}
	}
	if len(seen) != 277 {
		t.Errorf("the catalog lists %d functions, upstream's 277", len(seen))
	}
	t.Logf("upstream's %d functions: %d implemented with a CEL counterpart, %d refused with a reason", len(seen), counts["implemented"], counts["refused"])
}

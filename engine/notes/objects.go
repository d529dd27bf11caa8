package notes

import (
	"fmt"
	"strconv"
	"strings"
)

// The readers of a Kubernetes object (upstream pkg/note kubernetes.go,
// kube_fields.go, kube_replica.go, kube_hpa.go, kube_ingress.go,
// kube_job.go, kube_pvc.go, kube_service.go, kube_statefulset.go,
// kube_container.go, gateway_serve.go): each reads the object's fields as
// the API server gives them, and a missing object or field gives the zero
// value, never an error.

// str is obj's string at a path of map keys, "" when absent.
func str(obj any, path ...string) string {
	s, _ := at(obj, path...).(string)
	return s
}

// at is obj's value at a path of map keys, nil when absent.
func at(obj any, path ...string) any {
	cur := obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

func list(obj any, path ...string) []any {
	l, _ := at(obj, path...).([]any)
	return l
}

// ── metadata ────────────────────────────────────────────────────────────────

func ResourceName(obj any) string              { return str(obj, "metadata", "name") }
func ResourceNamespace(obj any) string         { return str(obj, "metadata", "namespace") }
func ResourceUID(obj any) string               { return str(obj, "metadata", "uid") }
func ResourceVersion(obj any) string           { return str(obj, "metadata", "resourceVersion") }
func CreationTimestamp(obj any) string         { return str(obj, "metadata", "creationTimestamp") }
func Generation(obj any) int64                 { return toInt64(at(obj, "metadata", "generation")) }
func ObservedGeneration(obj any) int64         { return toInt64(at(obj, "status", "observedGeneration")) }
func IsSynced(obj any) bool                    { return Generation(obj) == ObservedGeneration(obj) }
func IsTerminating(obj any) bool               { return at(obj, "metadata", "deletionTimestamp") != nil }
func OwnerKind(obj any) string                 { return firstOwner(obj, "kind") }
func OwnerName(obj any) string                 { return firstOwner(obj, "name") }
func GetLabel(obj any, key string) string      { return str(obj, "metadata", "labels", key) }
func GetAnnotation(obj any, key string) string { return str(obj, "metadata", "annotations", key) }
func HasLabel(obj any, key string) bool        { return GetLabel(obj, key) != "" }
func HasAnnotation(obj any, key string) bool   { return GetAnnotation(obj, key) != "" }

// GetLabelInt and GetAnnotationInt parse the value as a decimal integer, 0
// when absent or not one.
func GetLabelInt(obj any, key string) int64      { return parseInt(GetLabel(obj, key)) }
func GetAnnotationInt(obj any, key string) int64 { return parseInt(GetAnnotation(obj, key)) }

func parseInt(s string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

func firstOwner(obj any, key string) string {
	refs := list(obj, "metadata", "ownerReferences")
	if len(refs) == 0 {
		return ""
	}
	return str(refs[0], key)
}

// LabelMatches: the object's labels hold every key/value pair given (a
// trailing unpaired key is ignored).
func LabelMatches(obj any, pairs ...string) bool {
	for i := 0; i+1 < len(pairs); i += 2 {
		if v, ok := at(obj, "metadata", "labels", pairs[i]).(string); !ok || v != pairs[i+1] {
			return false
		}
	}
	return true
}

// ── status and conditions ───────────────────────────────────────────────────

// condition is the status.conditions entry of that type, nil when none.
func condition(obj any, typ string) any {
	for _, c := range list(obj, "status", "conditions") {
		if str(c, "type") == typ {
			return c
		}
	}
	return nil
}

// HasCondition: a condition of that type with status "True".
func HasCondition(obj any, typ string) bool       { return str(condition(obj, typ), "status") == "True" }
func ConditionReason(obj any, typ string) string  { return str(condition(obj, typ), "reason") }
func ConditionMessage(obj any, typ string) string { return str(condition(obj, typ), "message") }

// GetStatus is a scalar status field as a string (numbers and booleans
// printed), "" when absent, null or a map or list.
func GetStatus(obj any, key string) string {
	switch v := at(obj, "status", key).(type) {
	case string:
		return v
	case bool, int64, int, float64:
		return fmt.Sprint(v)
	}
	return ""
}

// HasStatus: the status field is present and not empty ("", 0, false, an
// empty map or list).
func HasStatus(obj any, key string) bool {
	switch v := at(obj, "status", key).(type) {
	case nil:
		return false
	case string:
		return v != ""
	case bool:
		return v
	case int64:
		return v != 0
	case int:
		return v != 0
	case float64:
		return v != 0
	case map[string]any:
		return len(v) > 0
	case []any:
		return len(v) > 0
	}
	return true
}

// ── workloads ───────────────────────────────────────────────────────────────

func AvailableReplicas(obj any) int64 { return toInt64(at(obj, "status", "availableReplicas")) }
func UpdatedReplicas(obj any) int64   { return toInt64(at(obj, "status", "updatedReplicas")) }

// DesiredReplicas is spec.replicas, 1 when absent (the Kubernetes default).
func DesiredReplicas(obj any) int64 { return int64(desiredReplicas(obj)) }

// RolloutComplete: every desired pod runs the current template
// (status.updatedReplicas equals spec.replicas); they may not be ready.
func RolloutComplete(obj any) bool { return UpdatedReplicas(obj) == DesiredReplicas(obj) }

func StatefulSetCurrentRevision(obj any) string { return str(obj, "status", "currentRevision") }
func StatefulSetUpdateRevision(obj any) string  { return str(obj, "status", "updateRevision") }

// container is spec.template.spec.containers[i] of a workload, nil when
// there is none.
func container(obj any, i int) any {
	cs := list(obj, "spec", "template", "spec", "containers")
	if i < 0 || i >= len(cs) {
		return nil
	}
	return cs[i]
}

// ContainerImage is the image of the workload's container i.
func ContainerImage(obj any, i int) string { return str(container(obj, i), "image") }

// ContainerEnv is the literal value of the variable name in container i
// ("" when absent or set from a reference).
func ContainerEnv(obj any, i int, name string) string {
	for _, e := range list(container(obj, i), "env") {
		if str(e, "name") == name {
			return str(e, "value")
		}
	}
	return ""
}

// ContainerPort: container i declares containerPort port.
func ContainerPort(obj any, i, port int) bool {
	for _, p := range list(container(obj, i), "ports") {
		if toInt64(at(p, "containerPort")) == int64(port) {
			return true
		}
	}
	return false
}

// ── jobs ────────────────────────────────────────────────────────────────────

func CronJobActiveCount(obj any) int64      { return int64(len(list(obj, "status", "active"))) }
func CronJobLastSuccessTime(obj any) string { return str(obj, "status", "lastSuccessfulTime") }
func JobActive(obj any) bool                { return toInt64(at(obj, "status", "active")) > 0 }
func JobFailed(obj any) bool                { return toInt64(at(obj, "status", "failed")) > 0 }
func JobSucceeded(obj any) bool             { return toInt64(at(obj, "status", "succeeded")) > 0 }

// ── HorizontalPodAutoscalers ────────────────────────────────────────────────

func HPACurrentReplicas(obj any) int64 { return toInt64(at(obj, "status", "currentReplicas")) }
func HPADesiredReplicas(obj any) int64 { return toInt64(at(obj, "status", "desiredReplicas")) }
func HPAMaxReplicas(obj any) int64     { return toInt64(at(obj, "spec", "maxReplicas")) }

// HPAMinReplicas is spec.minReplicas, 1 when absent (the Kubernetes
// default).
func HPAMinReplicas(obj any) int64 {
	if v := at(obj, "spec", "minReplicas"); v != nil {
		return toInt64(v)
	}
	return 1
}

func HPAAtMax(obj any) bool          { return HPACurrentReplicas(obj) >= HPAMaxReplicas(obj) }
func HPAAbleToScale(obj any) bool    { return HasCondition(obj, "AbleToScale") }
func HPAScalingActive(obj any) bool  { return HasCondition(obj, "ScalingActive") }
func HPAScalingLimited(obj any) bool { return HasCondition(obj, "ScalingLimited") }

// HPAScaling: the HPA reads its metric (ScalingActive) and current and
// desired replicas differ — a scale in progress.
func HPAScaling(obj any) bool {
	return HPAScalingActive(obj) && HPACurrentReplicas(obj) != HPADesiredReplicas(obj)
}

// ── Services, Ingresses, PVCs ───────────────────────────────────────────────

// lbEntry is field of status.loadBalancer.ingress[0], "" when none.
func lbEntry(obj any, field string) string {
	l := list(obj, "status", "loadBalancer", "ingress")
	if len(l) == 0 {
		return ""
	}
	return str(l[0], field)
}

func ServiceClusterIP(obj any) string        { return str(obj, "spec", "clusterIP") }
func ServiceLoadBalancerIP(obj any) string   { return lbEntry(obj, "ip") }
func ServiceLoadBalancerHost(obj any) string { return lbEntry(obj, "hostname") }

// ServiceNodePort is the nodePort of the first port, 0 before it is
// assigned.
func ServiceNodePort(obj any) int64 {
	ps := list(obj, "spec", "ports")
	if len(ps) == 0 {
		return 0
	}
	return toInt64(at(ps[0], "nodePort"))
}

func IngressClassName(obj any) string { return str(obj, "spec", "ingressClassName") }
func IngressIP(obj any) string        { return lbEntry(obj, "ip") }
func IngressHost(obj any) string      { return lbEntry(obj, "hostname") }

// IngressReady: a load-balancer entry has an IP or a hostname.
func IngressReady(obj any) bool {
	for _, e := range list(obj, "status", "loadBalancer", "ingress") {
		if str(e, "ip") != "" || str(e, "hostname") != "" {
			return true
		}
	}
	return false
}

// IngressRules are the hosts of spec.rules joined with ", " (a rule without
// a host, the catch-all, left out).
func IngressRules(obj any) string {
	var hosts []string
	for _, r := range list(obj, "spec", "rules") {
		if h := str(r, "host"); h != "" {
			hosts = append(hosts, h)
		}
	}
	return strings.Join(hosts, ", ")
}

// IngressTLSHosts are the hosts of every spec.tls entry joined with ", ".
func IngressTLSHosts(obj any) string {
	var hosts []string
	for _, t := range list(obj, "spec", "tls") {
		for _, h := range list(t, "hosts") {
			if s, ok := h.(string); ok {
				hosts = append(hosts, s)
			}
		}
	}
	return strings.Join(hosts, ", ")
}

func PVCPhase(obj any) string        { return str(obj, "status", "phase") }
func PVCBound(obj any) bool          { return PVCPhase(obj) == "Bound" }
func PVCStorageClass(obj any) string { return str(obj, "spec", "storageClassName") }
func PVCCapacity(obj any) string     { return str(obj, "spec", "resources", "requests", "storage") }

// PVCAccessModes are spec.accessModes joined with ", ".
func PVCAccessModes(obj any) string {
	var modes []string
	for _, m := range list(obj, "spec", "accessModes") {
		if s, ok := m.(string); ok {
			modes = append(modes, s)
		}
	}
	return strings.Join(modes, ", ")
}

// ── provenance annotations of upstream's serve gateway ──────────────────────

const (
	serveTarget = "orkestra.orkspace.io/serve-target"
	serveAlias  = "orkestra.orkspace.io/serve-alias"
	serveSource = "orkestra.orkspace.io/serve-source"
)

func GetServeTarget(obj any) string { return GetAnnotation(obj, serveTarget) }
func GetServeAlias(obj any) string  { return GetAnnotation(obj, serveAlias) }
func GetServeSource(obj any) string { return GetAnnotation(obj, serveSource) }
func HasServeTarget(obj any) bool   { return HasAnnotation(obj, serveTarget) }
func HasServeAlias(obj any) bool    { return HasAnnotation(obj, serveAlias) }
func HasServeSource(obj any) bool   { return HasAnnotation(obj, serveSource) }

// IsDirectApply: none of the three provenance annotations is set.
func IsDirectApply(obj any) bool {
	return !HasServeTarget(obj) && !HasServeAlias(obj) && !HasServeSource(obj)
}

// ── parts of an object ──────────────────────────────────────────────────────

// mapAt is obj's map at a path, an empty map when absent (never nil).
func mapAt(obj any, path ...string) map[string]any {
	if m, ok := at(obj, path...).(map[string]any); ok {
		return m
	}
	return map[string]any{}
}

func Meta(obj any) map[string]any        { return mapAt(obj, "metadata") }
func Labels(obj any) map[string]any      { return mapAt(obj, "metadata", "labels") }
func Annotations(obj any) map[string]any { return mapAt(obj, "metadata", "annotations") }
func Spec(obj any) map[string]any        { return mapAt(obj, "spec") }
func Status(obj any) map[string]any      { return mapAt(obj, "status") }

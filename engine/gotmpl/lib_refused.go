package gotmpl

// The original's functions over data this runtime does not collect: the
// summaries its entry-level enrich: adds to a child by extra API reads
// (events, owners, ReplicaSets, nodes), Node objects, and the
// results of external: Prometheus calls. Each is a load error naming the
// reason and the alternative.

var (
	noWarnings     = "it reads the child's Warning events (_warnings), which the original's enrich: adds to a child by extra API reads; this runtime does not collect events (enrich: [events] is refused at load; it collects pods only); read the child's status conditions instead (hasCondition, conditionReason, conditionMessage)"
	noReplicaSets  = needsEnrich("the Deployment's ReplicaSets (_replicaSets)", "replicasets")
	noNodes        = "it reads a Node object, which is never a child of a custom resource here and which this runtime does not read (the original's enrich: [node] fetched it); a pod child's spec.nodeName names its node"
	noPodNode      = needsEnrich("the pod's node (_node)", "node")
	noPrometheus   = "it reads the result of an external: Prometheus query, and this runtime makes no external: calls (refused at load); expose the metric on a custom resource field instead"
	noClockSeconds = "its value changes every second without any change to the object, so a field holding it would be rewritten on every reconcile; compare instants with isExpired TIMESTAMP DURATION (it changes once) or keep the timestamp itself"
)

var enrichFamily = family{name: "refused: data this runtime does not collect", functions: []*function{
	{name: "cronJobLastJobName", refused: needsEnrich("the CronJob's last Job (_lastJob)", "cronjob")},
	{name: "cronJobLastJobSucceeded", refused: needsEnrich("the CronJob's last Job (_lastJob)", "cronjob")},
	{name: "cronJobLastSuccessfulJobName", refused: needsEnrich("the CronJob's last successful Job (_lastSuccessfulJob)", "cronjob")},
	{name: "statefulSetPVCCount", refused: needsEnrich("the StatefulSet's claims (_pvcs)", "pvcs")},
	{name: "deploymentReplicaSetCount", refused: noReplicaSets},
	{name: "deploymentReplicaSets", refused: noReplicaSets},
	{name: "oldDeploymentReplicaSets", refused: noReplicaSets},
	{name: "replicaSetOwnerKind", refused: needsEnrich("the owner object (_owner)", "owner") + "; ownerKind reads the first owner reference"},
	{name: "replicaSetOwnerName", refused: needsEnrich("the owner object (_owner)", "owner") + "; ownerName reads the first owner reference"},
	{name: "firstWarning", refused: noWarnings},
	{name: "hasWarnings", refused: noWarnings},
	{name: "warningCount", refused: noWarnings},
	{name: "warningMessages", refused: noWarnings},
	{name: "warningReasons", refused: noWarnings},
	{name: "nodeAllocatableCPU", refused: noNodes},
	{name: "nodeAllocatableMemory", refused: noNodes},
	{name: "nodeCondition", refused: noNodes},
	{name: "nodeReady", refused: noNodes},
	{name: "nodeTaints", refused: noNodes},
	{name: "podNodeInstanceType", refused: noPodNode},
	{name: "podNodeName", refused: noPodNode},
	{name: "podNodeRegion", refused: noPodNode},
	{name: "podNodeZone", refused: noPodNode},
	{name: "promAboveThreshold", refused: noPrometheus},
	{name: "promBelowThreshold", refused: noPrometheus},
	{name: "promLabelValues", refused: noPrometheus},
	{name: "promMax", refused: noPrometheus},
	{name: "promSeriesCount", refused: noPrometheus},
	{name: "promSum", refused: noPrometheus},
	{name: "promValue", refused: noPrometheus},
	{name: "timeSince", refused: noClockSeconds},
	{name: "timeAgo", refused: noClockSeconds},
	{name: "timeUntil", refused: noClockSeconds},
}}

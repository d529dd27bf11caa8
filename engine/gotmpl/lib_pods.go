package gotmpl

// The pod functions of the original engine (upstream pkg/note/kube_pods.go,
// kube_job.go): they read the pod summaries (_pods) that the original's
// enrich: [pods] attached to a workload child by listing its pods. This
// runtime does not list a child's pods (enrich is refused at load), so each
// is refused: it would read nothing and report no pods.

var noPodSummaries = needsEnrich("the pod summaries (_pods)", "pods") + "; a Deployment's or StatefulSet's status gives its replica counts (readyReplicas, availableReplicas, allReplicasReady)"

var podsFamily = family{name: "pods", functions: []*function{
	{name: "podCount", refused: noPodSummaries},
	{name: "readyPodCount", refused: noPodSummaries},
	{name: "podNames", refused: noPodSummaries},
	{name: "podMaxRestarts", refused: noPodSummaries},
	{name: "hasCrashingPod", refused: noPodSummaries},
	{name: "podContainerReasons", refused: noPodSummaries},
	{name: "podByOrdinal", refused: noPodSummaries},
	{name: "podContainerState", refused: noPodSummaries},
	{name: "podCrashLoopDetected", refused: noPodSummaries},
	{name: "podCreateContainerErrorDetected", refused: noPodSummaries},
	{name: "podErrImagePullDetected", refused: noPodSummaries},
	{name: "podErrorDetected", refused: noPodSummaries},
	{name: "podIPs", refused: noPodSummaries},
	{name: "podImagePullBackOffDetected", refused: noPodSummaries},
	{name: "podInvalidImageNameDetected", refused: noPodSummaries},
	{name: "podNodes", refused: noPodSummaries},
	{name: "podOOMKilledDetected", refused: noPodSummaries},
	{name: "podPhases", refused: noPodSummaries},
	{name: "podPostStartHookErrorDetected", refused: noPodSummaries},
	{name: "podPreStartHookErrorDetected", refused: noPodSummaries},
	{name: "podRunContainerErrorDetected", refused: noPodSummaries},
	{name: "jobActivePodNames", refused: noPodSummaries},
	{name: "jobFailedPodNames", refused: noPodSummaries},
	{name: "jobSucceededPodNames", refused: noPodSummaries},
	{name: "jobFirstExitCode", refused: noPodSummaries},
}}

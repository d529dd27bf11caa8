package gotmpl

import "github.com/orkspace/orkestra-cel/engine/notes"

// The pod functions of the original engine (upstream pkg/note/kube_pods.go):
// they read a workload child's pod summaries (_pods), which the operator
// adds when the entry declares enrich: [pods] (engine.PodSummaries). Without
// enrich a child has no pods and they give "", 0 and false, as upstream's.

var podsFamily = family{name: "pods (enrich: [pods])", functions: []*function{
	objectFunction("podCount", notes.PodCount, "`podCount` (the pods the child runs)"),
	objectFunction("readyPodCount", notes.ReadyPodCount, "`readyPodCount` (pods whose Ready condition is True)"),
	objectFunction("podNames", notes.PodNames, "`podNames` (comma-separated, by name)"),
	objectFunction("podIPs", notes.PodIPs, "`podIPs` (those assigned)"),
	objectFunction("podPhases", notes.PodPhases, "`podPhases`"),
	objectFunction("podNodes", notes.PodNodes, "`podNodes` (those scheduled)"),
	objectFunction("podMaxRestarts", notes.PodMaxRestarts, "`podMaxRestarts` (the highest restart count of a pod, all its containers)"),
	objectFunction("hasCrashingPod", notes.HasCrashingPod, "`hasCrashingPod` (a container waiting or terminated with a failure reason, or a pod restarted more than twice)"),
	objectFunction("podContainerReasons", notes.PodContainerReasons, "`podContainerReasons` (distinct waiting/terminated reasons, in order)"),
	valueFirst(noteFunction("podContainerState", notes.PodContainerState, []vkind{vMap, vInt, vString}, 0, "`podContainerState OBJ ORDINAL NAME` (Running, Waiting, Terminated; \"\" when absent)")),
	objectFunction("podCrashLoopDetected", notes.ContainerReasonDetected("CrashLoopBackOff"), "`podCrashLoopDetected` (a container with reason CrashLoopBackOff)"),
	objectFunction("podImagePullBackOffDetected", notes.ContainerReasonDetected("ImagePullBackOff"), "`podImagePullBackOffDetected`"),
	objectFunction("podErrImagePullDetected", notes.ContainerReasonDetected("ErrImagePull"), "`podErrImagePullDetected`"),
	objectFunction("podErrorDetected", notes.ContainerReasonDetected("Error"), "`podErrorDetected`"),
	objectFunction("podOOMKilledDetected", notes.ContainerReasonDetected("OOMKilled"), "`podOOMKilledDetected`"),
	objectFunction("podRunContainerErrorDetected", notes.ContainerReasonDetected("RunContainerError"), "`podRunContainerErrorDetected`"),
	objectFunction("podCreateContainerErrorDetected", notes.ContainerReasonDetected("CreateContainerError"), "`podCreateContainerErrorDetected`"),
	objectFunction("podInvalidImageNameDetected", notes.ContainerReasonDetected("InvalidImageName"), "`podInvalidImageNameDetected`"),
	objectFunction("podPreStartHookErrorDetected", notes.ContainerReasonDetected("PreStartHookError"), "`podPreStartHookErrorDetected`"),
	objectFunction("podPostStartHookErrorDetected", notes.ContainerReasonDetected("PostStartHookError"), "`podPostStartHookErrorDetected`"),
	{name: "podByOrdinal", refused: "it returns a pod summary as an object, which this runtime's function library does not return (its functions give strings, numbers and booleans); read one field of the pod with podContainerState OBJ ORDINAL NAME, or list them with podNames, podPhases and podNodes"},
	objectFunction("jobActivePodNames", notes.JobActivePodNames, "`jobActivePodNames` (a Job's pods neither Succeeded nor Failed)"),
	objectFunction("jobSucceededPodNames", notes.JobSucceededPodNames, "`jobSucceededPodNames`"),
	objectFunction("jobFailedPodNames", notes.JobFailedPodNames, "`jobFailedPodNames`"),
	objectFunction("jobFirstExitCode", notes.JobFirstExitCode, "`jobFirstExitCode` (of the first pod with a terminated container; -1 before)"),
}}

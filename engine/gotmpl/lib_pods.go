package gotmpl

import "github.com/orkspace/orkestra-cel/engine/notes"

// The pod functions, over the pod summaries a workload child carries
// (upstream pkg/note/kube_pods.go).

var podsFamily = family{name: "pods (the pod summaries a workload child carries)", functions: []*function{
	objectFunction("podCount", notes.PodCount, "`podCount`"),
	objectFunction("readyPodCount", notes.ReadyPodCount, "`readyPodCount`"),
	objectFunction("podNames", notes.PodNames, "`podNames` (joined with `, `)"),
	objectFunction("podMaxRestarts", notes.PodMaxRestarts, "`podMaxRestarts`"),
	objectFunction("hasCrashingPod", notes.HasCrashingPod, "`hasCrashingPod`"),
	objectFunction("podContainerReasons", notes.PodContainerReasons, "`podContainerReasons`"),
}}

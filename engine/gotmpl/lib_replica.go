package gotmpl

import "github.com/orkspace/orkestra-cel/engine/notes"

// The replica functions of a workload child (upstream
// pkg/note/kube_replica.go, docs/12-replica.md).

var replicaFamily = family{name: "replica (a workload child)", functions: []*function{
	objectFunction("allReplicasReady", notes.AllReplicasReady, "`allReplicasReady` (status.readyReplicas equals spec.replicas, 1 when absent; a kind declared without a child yet is not ready)"),
	objectFunction("readyReplicas", notes.ReadyReplicas, "`readyReplicas`"),
}}

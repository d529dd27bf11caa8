package gotmpl

import "github.com/orkspace/orkestra-cel/engine/notes"

// The replica functions of a workload child (upstream
// pkg/note/kube_replica.go, docs/12-replica.md).

var replicaFamily = family{name: "replica (a workload child)", functions: []*function{
	objectFunction("allReplicasReady", notes.AllReplicasReady, "`allReplicasReady` (status.readyReplicas equals spec.replicas, 1 when absent; a kind declared without a child yet is not ready)"),
	objectFunction("readyReplicas", notes.ReadyReplicas, "`readyReplicas`"),
	objectFunction("availableReplicas", notes.AvailableReplicas, "`availableReplicas`"),
	objectFunction("updatedReplicas", notes.UpdatedReplicas, "`updatedReplicas`"),
	objectFunction("desiredReplicas", notes.DesiredReplicas, "`desiredReplicas` (spec.replicas, 1 when absent)"),
	objectFunction("rolloutComplete", notes.RolloutComplete, "`rolloutComplete` (status.updatedReplicas equals the desired replicas)"),
	objectFunction("statefulSetCurrentRevision", notes.StatefulSetCurrentRevision, "`statefulSetCurrentRevision`"),
	objectFunction("statefulSetUpdateRevision", notes.StatefulSetUpdateRevision, "`statefulSetUpdateRevision`"),
	valueFirst(noteFunction("containerImage", notes.ContainerImage, []vkind{vMap, vInt}, 0, "`containerImage OBJ I`")),
	valueFirst(noteFunction("containerEnv", notes.ContainerEnv, []vkind{vMap, vInt, vString}, 0, "`containerEnv OBJ I NAME` (a literal `value`; `\"\"` when absent)")),
	valueFirst(noteFunction("containerPort", notes.ContainerPort, []vkind{vMap, vInt, vInt}, 0, "`containerPort OBJ I PORT` (container I of the pod template declares that port)")),
}}

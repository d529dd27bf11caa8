package katalog

import (
	"fmt"
	"sort"
)

// enrich: (upstream's entry-level enrich, pkg/reconciler/children.go
// enrichGroupWithPods): data read beside the children and embedded into
// them before expressions read them. This runtime collects pods: each
// workload child (Deployment, StatefulSet, ReplicaSet, DaemonSet, Job) is
// read with the summaries of the pods it runs, under _pods, from the
// operator's cache of Pods. Upstream's other kinds of data are errors
// naming what reads the same information.

// notEnriched says, per kind of data upstream embeds, why it is not
// collected here and what to read instead.
var notEnriched = map[string]string{
	"events":       "a child's Warning events (_warnings) are not collected; read the child's status conditions instead (hasCondition, conditionReason, conditionMessage)",
	"endpoints":    "a Service's endpoints (_endpoints) are not collected; gate on the workload behind the Service instead (allReplicasReady, readyReplicas)",
	"replicasets":  "a Deployment's ReplicaSets (_replicaSets) are not collected; its status gives the rollout (rolloutComplete, updatedReplicas)",
	"node":         "a pod's Node (_node) is not collected; enrich: [pods] gives each pod's node name (podNodes)",
	"hpa":          "an autoscaler's metric summary and scale target are not collected; read the HorizontalPodAutoscaler child's status",
	"ingress":      "an Ingress's addresses and TLS Secrets are not collected; read the Ingress child's status.loadBalancer",
	"pvc":          "a claim's PersistentVolume is not collected; read the PersistentVolumeClaim child's status",
	"pvcs":         "a StatefulSet's claims (_pvcs) are not collected; declare the claims as children to read them",
	"cronjob":      "a CronJob's Jobs (_lastJob) are not collected; read the CronJob child's status.lastSuccessfulTime",
	"storageclass": "a claim's StorageClass is not collected; read the PersistentVolumeClaim child's spec.storageClassName",
	"owner":        "owner objects (_owner) are not collected; ownerKind and ownerName read the first owner reference",
}

// enrich decodes an entry's enrich: list.
func (d *decoder) enrich(e *CRDEntry, f field) {
	for i, kind := range d.strList(f.value, "enrich") {
		at, path := Resolve(f.value).Content[i], fmt.Sprintf("enrich[%d]", i)
		switch why, known := notEnriched[kind]; {
		case kind == "pods":
			e.EnrichPods = true
		case known:
			d.errorf(at, path, "enrich: %s is not supported by this runtime: %s; it collects pods only (enrich: [pods])", kind, why)
		default:
			d.errorf(at, path, "enrich: %q is not a kind of data upstream collects; this runtime collects pods (enrich: [pods])%s", kind, DidYouMean(kind, append(mapKeys(notEnriched), "pods")))
		}
	}
}

func mapKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

package gotmpl

import "github.com/orkspace/orkestra-cel/engine/notes"

// The Service, Ingress and PersistentVolumeClaim functions (upstream
// pkg/note/kube_service.go, kube_ingress.go, kube_pvc.go), over a child as
// the API server gives it. Those that read what the original's enrich:
// adds (endpoints, bound volumes, storage classes) are refused.

const noEndpoints = "it reads the Service's endpoints (_endpoints), which the original's enrich: adds to a child by extra API reads; this runtime does not collect Endpoints (enrich: [endpoints] is refused at load; it collects pods only); gate on the workload behind the Service instead (allReplicasReady, readyReplicas)"

var serviceFamily = family{name: "service, ingress, pvc (a child of that kind)", functions: []*function{
	objectFunction("serviceClusterIP", notes.ServiceClusterIP, "`serviceClusterIP`"),
	objectFunction("serviceLoadBalancerIP", notes.ServiceLoadBalancerIP, "`serviceLoadBalancerIP`"),
	objectFunction("serviceLoadBalancerHost", notes.ServiceLoadBalancerHost, "`serviceLoadBalancerHost` (of the first load-balancer entry)"),
	objectFunction("serviceNodePort", notes.ServiceNodePort, "`serviceNodePort` (of the first port)"),
	objectFunction("ingressClassName", notes.IngressClassName, "`ingressClassName`"),
	objectFunction("ingressIP", notes.IngressIP, "`ingressIP`"),
	objectFunction("ingressHost", notes.IngressHost, "`ingressHost`"),
	objectFunction("ingressReady", notes.IngressReady, "`ingressReady` (a load-balancer entry has an IP or a hostname)"),
	objectFunction("ingressRules", notes.IngressRules, "`ingressRules`"),
	objectFunction("ingressTLSHosts", notes.IngressTLSHosts, "`ingressTLSHosts` (hosts joined with `, `)"),
	objectFunction("pvcPhase", notes.PVCPhase, "`pvcPhase`"),
	objectFunction("pvcBound", notes.PVCBound, "`pvcBound`"),
	objectFunction("pvcStorageClass", notes.PVCStorageClass, "`pvcStorageClass`"),
	objectFunction("pvcCapacity", notes.PVCCapacity, "`pvcCapacity` (spec.resources.requests.storage)"),
	objectFunction("pvcAccessModes", notes.PVCAccessModes, "`pvcAccessModes` (joined with `, `)"),
	{name: "backingPodCount", refused: noEndpoints},
	{name: "backingPodNames", refused: noEndpoints},
	{name: "endpointsReady", refused: noEndpoints},
	{name: "hasEndpoints", refused: noEndpoints},
	{name: "serviceEndpointCount", refused: noEndpoints},
	{name: "serviceEndpoints", refused: noEndpoints},
	{name: "serviceFirstEndpoint", refused: noEndpoints},
	{name: "ingressLoadBalancerIPs", refused: needsEnrich("the address summary (_loadBalancerIPs)", "ingress")},
	{name: "ingressTLSSecretCount", refused: needsEnrich("the TLS Secrets (_tlsSecrets)", "ingress")},
	{name: "pvcProvisioner", refused: needsEnrich("the bound PersistentVolume", "pvc")},
	{name: "pvcVolumeMode", refused: needsEnrich("the bound PersistentVolume", "pvc")},
	{name: "pvcStorageClassProvisioner", refused: needsEnrich("the StorageClass (_storageClass)", "storageclass")},
	{name: "pvcStorageClassReclaimPolicy", refused: needsEnrich("the StorageClass (_storageClass)", "storageclass")},
}}

package manifests

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// networkPolicy admits traffic to the operator's pods on the webhook and
// metrics ports only, from anywhere: the API server calls the webhook from
// addresses a policy cannot name (host network, a managed control plane).
// Egress is left open: the operator talks to the API server (and makes the
// katalog's external calls, which egressAnnotations documents).
func (in *Install) networkPolicy(selector map[string]string) *networkingv1.NetworkPolicy {
	tcp := corev1.ProtocolTCP
	return &networkingv1.NetworkPolicy{
		TypeMeta:   typeMeta("networking.k8s.io/v1", "NetworkPolicy"),
		ObjectMeta: metav1.ObjectMeta{Name: in.Options.Name, Namespace: in.Options.Namespace, Labels: in.labels("")},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: selector},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				Ports: []networkingv1.NetworkPolicyPort{
					{Protocol: &tcp, Port: ptr.To(intstr.FromString("webhook"))},
					{Protocol: &tcp, Port: ptr.To(intstr.FromString("http"))},
				},
			}},
		},
	}
}

package manifests

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// networkPolicy admits traffic to the operator's pods on the webhook and
// metrics ports only, from anywhere: the API server calls the webhook from
// addresses a policy cannot name (host network, a managed control plane).
// Egress is left open: the operator talks to the API server.
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

func (in *Install) clientCAName() string { return in.Options.Name + "-webhook-client-ca" }

// checkCABundle requires at least one PEM certificate and nothing else.
func checkCABundle(data []byte) error {
	n := 0
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			if len(bytes.TrimSpace(rest)) > 0 {
				return errors.New("--webhook-client-ca: the file holds something other than PEM certificates")
			}
			break
		}
		if b.Type != "CERTIFICATE" {
			return fmt.Errorf("--webhook-client-ca: a PEM block of type %s; give CA certificates only", b.Type)
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return fmt.Errorf("--webhook-client-ca: certificate %d: %w", n+1, err)
		}
		n++
	}
	if n == 0 {
		return errors.New("--webhook-client-ca: no PEM certificate in the file")
	}
	return nil
}

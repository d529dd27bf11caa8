package render

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Network: services and ingresses.

// Defaults of the network fields.
const (
	// DefaultServicePort is a service's port when neither port, targetPort
	// nor the selected workload's port say otherwise.
	DefaultServicePort = 80
	// DefaultIngressPath and DefaultIngressPathType complete an ingress rule.
	DefaultIngressPath     = "/"
	DefaultIngressPathType = networkingv1.PathTypePrefix
)

func init() {
	// clusterIP is immutable: a Service switching headless is recreated.
	register("services", &Kind{Build: buildService, Drift: driftService, Recreates: []string{"headless"}})
	register("ingresses", &Kind{Build: buildIngress, Drift: driftIngress})
}

// selectedWorkload picks the Deployment or StatefulSet of the same custom
// resource a service without selector: fronts. In order: a StatefulSet whose
// serviceName is the service's name; a workload of the same name; the
// workload whose name is the longest prefix of the service's name followed by
// "-" (shop-svc → shop); the only workload. nil when none or ambiguous.
func (b *builder) selectedWorkload() *Child {
	name := b.c.Name
	for _, w := range b.workloads {
		if w.Kind == "statefulSets" && w.Namespace == b.c.Namespace && w.Fields["serviceName"] == name {
			return w
		}
	}
	var best *Child
	for _, w := range b.workloads {
		if w.Namespace != b.c.Namespace {
			continue
		}
		if w.Name == name {
			return w
		}
		if strings.HasPrefix(name, w.Name+"-") && (best == nil || len(w.Name) > len(best.Name)) {
			best = w
		}
	}
	if best != nil {
		return best
	}
	var only *Child
	for _, w := range b.workloads {
		if w.Namespace != b.c.Namespace {
			continue
		}
		if only != nil && only.Name != w.Name {
			return nil
		}
		only = w
	}
	return only
}

func buildService(b *builder) (client.Object, error) {
	f := &b.f
	meta := b.meta()
	svc := &corev1.Service{
		TypeMeta:   typeMeta("v1", "Service"),
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceType(f.str("type")),
		},
	}
	if svc.Spec.Type == "" {
		svc.Spec.Type = corev1.ServiceTypeClusterIP
	}
	w := b.selectedWorkload()
	switch {
	case f.has("selector"):
		svc.Spec.Selector = f.strMap("selector")
	case w != nil:
		svc.Spec.Selector = map[string]string{
			LabelOwner: LabelValue(b.r.cr.GetName()),
			LabelChild: LabelValue(w.Name),
		}
	default:
		svc.Spec.Selector = map[string]string{LabelOwner: LabelValue(b.r.cr.GetName())}
	}
	if h := f.bool("headless"); h != nil && *h {
		svc.Spec.ClusterIP = corev1.ClusterIPNone
	}
	var workloadPort *int32
	if w != nil {
		wf := fieldReader{fields: w.Fields, base: w.Resource.Fields.Field}
		workloadPort = wf.int32("port", 1, 65535)
	}
	port := f.int32("port", 1, 65535)
	target := f.int32("targetPort", 1, 65535)
	switch {
	case port != nil:
	case target != nil:
		port = target
	case workloadPort != nil:
		port = workloadPort
	default:
		v := int32(DefaultServicePort)
		port = &v
	}
	if target == nil {
		target = port
		if workloadPort != nil {
			target = workloadPort
		}
	}
	sp := corev1.ServicePort{
		Name:       f.str("portName"),
		Port:       *port,
		TargetPort: intstr.FromInt32(*target),
		Protocol:   b.protocol(),
	}
	if np := f.int32("nodePort", 1, 65535); np != nil {
		sp.NodePort = *np
	}
	svc.Spec.Ports = []corev1.ServicePort{sp}
	return svc, nil
}

func buildIngress(b *builder) (client.Object, error) {
	f := &b.f
	path := f.str("path")
	if path == "" {
		path = DefaultIngressPath
	}
	pathType := networkingv1.PathType(f.str("pathType"))
	if pathType == "" {
		pathType = DefaultIngressPathType
	}
	port := f.int32("servicePort", 1, 65535)
	if port == nil {
		v := int32(DefaultServicePort)
		port = &v
	}
	host := f.str("host")
	ing := &networkingv1.Ingress{
		TypeMeta:   typeMeta("networking.k8s.io/v1", "Ingress"),
		ObjectMeta: b.meta(),
		Spec: networkingv1.IngressSpec{
			Rules: []networkingv1.IngressRule{{
				Host: host,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{
						Path:     path,
						PathType: &pathType,
						Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
							Name: f.str("serviceName"),
							Port: networkingv1.ServiceBackendPort{Number: *port},
						}},
					}},
				}},
			}},
		},
	}
	if cls := f.str("ingressClassName"); cls != "" {
		ing.Spec.IngressClassName = &cls
	}
	if secret := f.str("tlsSecretName"); secret != "" {
		tls := networkingv1.IngressTLS{SecretName: secret}
		if host != "" {
			tls.Hosts = []string{host}
		}
		ing.Spec.TLS = []networkingv1.IngressTLS{tls}
	}
	return ing, nil
}

// ---- drift ----

func driftService(d *Drift, m Managed, want, live client.Object) {
	w, g := want.(*corev1.Service), live.(*corev1.Service)
	if m.has("headless") && (w.Spec.ClusterIP == corev1.ClusterIPNone) != (g.Spec.ClusterIP == corev1.ClusterIPNone) {
		d.add("headless")
		d.Recreate = true
		return
	}
	if m.has("type") && w.Spec.Type != g.Spec.Type {
		g.Spec.Type = w.Spec.Type
		d.add("type")
	}
	if !eqStringMap(w.Spec.Selector, g.Spec.Selector) {
		g.Spec.Selector = w.Spec.Selector
		d.add("selector")
	}
	if !subset(w.Spec.Ports, g.Spec.Ports) {
		ports := make([]corev1.ServicePort, len(w.Spec.Ports))
		copy(ports, w.Spec.Ports)
		needsNodePort := g.Spec.Type == corev1.ServiceTypeNodePort || g.Spec.Type == corev1.ServiceTypeLoadBalancer
		for i := range ports {
			if ports[i].NodePort == 0 && needsNodePort && i < len(g.Spec.Ports) {
				ports[i].NodePort = g.Spec.Ports[i].NodePort
			}
		}
		g.Spec.Ports = ports
		d.add("port")
	} else if g.Spec.Type != corev1.ServiceTypeNodePort && g.Spec.Type != corev1.ServiceTypeLoadBalancer {
		// A type change away from NodePort must drop the allocated ports.
		for i := range g.Spec.Ports {
			if g.Spec.Ports[i].NodePort != 0 && (i >= len(w.Spec.Ports) || w.Spec.Ports[i].NodePort == 0) {
				g.Spec.Ports[i].NodePort = 0
				d.add("port")
			}
		}
	}
}

func driftIngress(d *Drift, _ Managed, want, live client.Object) {
	w, g := want.(*networkingv1.Ingress), live.(*networkingv1.Ingress)
	if !subset(w.Spec, g.Spec) {
		g.Spec = w.Spec
		d.add("spec")
	}
}

package render

import (
	"fmt"
	"sort"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Policies around workloads: pdb (PodDisruptionBudget), hpa
// (HorizontalPodAutoscaler), networkPolicies, resourceQuotas, limitRanges.
// Their profiles are expanded at load (katalog/profiles.go); the builders
// see explicit fields only. Upstream's shapes: pkg/types/types_pdb.go,
// types_hpa.go, types_networkpolicy.go, types_resourcequota.go,
// types_limitrange.go.

func init() {
	register("pdb", &Kind{Build: buildPDB, Drift: driftSpec("spec")})
	register("hpa", &Kind{Build: buildHPA, Drift: driftSpec("spec")})
	register("networkPolicies", &Kind{Build: buildNetworkPolicy, Drift: driftNetworkPolicy})
	register("resourceQuotas", &Kind{Build: buildResourceQuota, Drift: driftResourceQuota})
	register("limitRanges", &Kind{Build: buildLimitRange, Drift: driftSpec("limits")})
}

// labelSelector reads a selector written as upstream writes it, a map of
// labels (`app: web`; `{}` selects everything), or as Kubernetes writes it
// (matchLabels, matchExpressions).
func (f *fieldReader) labelSelector(key string) *metav1.LabelSelector {
	v, ok := f.fields[key]
	if !ok || v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		f.fail(key, "expects a map of labels, got %s", describe(v))
		return nil
	}
	_, ml := m["matchLabels"].(map[string]any)
	_, me := m["matchExpressions"].([]any)
	if ml || me {
		var sel metav1.LabelSelector
		f.into(key, &sel)
		return &sel
	}
	return &metav1.LabelSelector{MatchLabels: f.strMap(key)}
}

func buildPDB(b *builder) (client.Object, error) {
	f := &b.f
	p := &policyv1.PodDisruptionBudget{
		TypeMeta:   typeMeta("policy/v1", "PodDisruptionBudget"),
		ObjectMeta: b.meta(),
		Spec: policyv1.PodDisruptionBudgetSpec{
			Selector:       f.labelSelector("selector"),
			MinAvailable:   f.intOrString("minAvailable"),
			MaxUnavailable: f.intOrString("maxUnavailable"),
		},
	}
	if p.Spec.Selector == nil {
		// Every pod of the custom resource, as a Service without selector.
		p.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{LabelOwner: LabelValue(b.r.cr.GetName())}}
	}
	if p.Spec.MinAvailable != nil && p.Spec.MaxUnavailable != nil {
		f.fail("maxUnavailable", "a PodDisruptionBudget takes minAvailable or maxUnavailable, not both")
	}
	return p, nil
}

func buildHPA(b *builder) (client.Object, error) {
	f := &b.f
	h := &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   typeMeta("autoscaling/v2", "HorizontalPodAutoscaler"),
		ObjectMeta: b.meta(),
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			MinReplicas: f.int32("minReplicas", 1, 1<<31-1),
		},
	}
	if max := f.int32("maxReplicas", 1, 1<<31-1); max != nil {
		h.Spec.MaxReplicas = *max
	}
	// scaleTargetRef: the workload scaled; a Deployment of apps/v1 unless
	// it says otherwise.
	ref := autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment"}
	f.into("scaleTargetRef", &ref)
	if ref.Name == "" {
		f.fail("scaleTargetRef.name", "names the workload the autoscaler scales; it is required")
	}
	h.Spec.ScaleTargetRef = ref
	if cpu := f.int32("targetCPUUtilizationPercentage", 1, 1<<31-1); cpu != nil {
		h.Spec.Metrics = []autoscalingv2.MetricSpec{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{
				Name:   corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: cpu},
			},
		}}
	}
	f.into("behavior", &h.Spec.Behavior)
	return h, nil
}

// networkRules converts upstream's ingress or egress rules into
// Kubernetes': a peer's podSelector and namespaceSelector may be maps of
// labels, a port a number, a number as a string or a port name, with TCP
// the default protocol.
func (f *fieldReader) networkRules(key, peers string) []map[string]any {
	v, ok := f.fields[key]
	if !ok || v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		f.fail(key, "expects a list of rules, got %s", describe(v))
		return nil
	}
	out := make([]map[string]any, 0, len(list))
	for i, item := range list {
		rule, ok := item.(map[string]any)
		if !ok {
			f.fail(fmt.Sprintf("%s[%d]", key, i), "expects a rule ({%s: […], ports: […]}), got %s", peers, describe(item))
			return nil
		}
		conv := make(map[string]any, len(rule))
		for k, x := range rule {
			conv[k] = x
		}
		if ps, ok := rule[peers].([]any); ok {
			conv[peers] = f.networkPeers(fmt.Sprintf("%s[%d].%s", key, i, peers), ps)
		}
		if ports, ok := rule["ports"].([]any); ok {
			conv["ports"] = networkPorts(ports)
		}
		out = append(out, conv)
	}
	return out
}

func (f *fieldReader) networkPeers(path string, peers []any) []any {
	out := make([]any, 0, len(peers))
	for i, p := range peers {
		m, ok := p.(map[string]any)
		if !ok {
			f.fail(fmt.Sprintf("%s[%d]", path, i), "expects a peer (podSelector, namespaceSelector or ipBlock), got %s", describe(p))
			return nil
		}
		conv := make(map[string]any, len(m))
		for k, x := range m {
			conv[k] = x
			if k != "podSelector" && k != "namespaceSelector" {
				continue
			}
			sub := fieldReader{fields: map[string]any{k: x}, base: fmt.Sprintf("%s[%d]", path, i)}
			conv[k] = sub.labelSelector(k)
			if sub.err != nil && f.err == nil {
				f.err = sub.err
			}
		}
		out = append(out, conv)
	}
	return out
}

func networkPorts(ports []any) []any {
	out := make([]any, 0, len(ports))
	for _, p := range ports {
		m, ok := p.(map[string]any)
		if !ok {
			out = append(out, p)
			continue
		}
		conv := make(map[string]any, len(m)+1)
		for k, x := range m {
			conv[k] = x
		}
		if s, ok := m["port"].(string); ok {
			conv["port"] = intstr.Parse(s)
		}
		if _, ok := m["protocol"]; !ok {
			conv["protocol"] = string(corev1.ProtocolTCP)
		}
		out = append(out, conv)
	}
	return out
}

func buildNetworkPolicy(b *builder) (client.Object, error) {
	f := &b.f
	np := &networkingv1.NetworkPolicy{
		TypeMeta:   typeMeta("networking.k8s.io/v1", "NetworkPolicy"),
		ObjectMeta: b.meta(),
	}
	if src, err := b.source(); err != nil {
		return nil, err
	} else if src != nil {
		from, ok := src.(*networkingv1.NetworkPolicy)
		if !ok {
			return nil, fmt.Errorf("the source of a NetworkPolicy copy is a %T", src)
		}
		np.Spec = *from.Spec.DeepCopy()
	}
	if sel := f.labelSelector("podSelector"); sel != nil {
		np.Spec.PodSelector = *sel
	}
	sub := fieldReader{fields: map[string]any{}, base: f.base}
	if _, ok := f.fields["ingress"]; ok {
		sub.fields["ingress"] = f.networkRules("ingress", "from")
		sub.into("ingress", &np.Spec.Ingress)
	}
	if _, ok := f.fields["egress"]; ok {
		sub.fields["egress"] = f.networkRules("egress", "to")
		sub.into("egress", &np.Spec.Egress)
	}
	if sub.err != nil && f.err == nil {
		f.err = sub.err
	}
	// Upstream derives the policy types from the rules declared: an empty
	// ingress: [] denies all ingress.
	if types := f.strList("policyTypes"); types != nil {
		np.Spec.PolicyTypes = nil
		for _, t := range types {
			np.Spec.PolicyTypes = append(np.Spec.PolicyTypes, networkingv1.PolicyType(t))
		}
	} else if f.has("ingress") || f.has("egress") {
		np.Spec.PolicyTypes = nil
		if f.has("ingress") {
			np.Spec.PolicyTypes = append(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress)
		}
		if f.has("egress") {
			np.Spec.PolicyTypes = append(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		}
	}
	return np, nil
}

func buildResourceQuota(b *builder) (client.Object, error) {
	rq := &corev1.ResourceQuota{
		TypeMeta:   typeMeta("v1", "ResourceQuota"),
		ObjectMeta: b.meta(),
	}
	if src, err := b.source(); err != nil {
		return nil, err
	} else if src != nil {
		from, ok := src.(*corev1.ResourceQuota)
		if !ok {
			return nil, fmt.Errorf("the source of a ResourceQuota copy is a %T", src)
		}
		rq.Spec = *from.Spec.DeepCopy()
	}
	hard := b.quantities("hard")
	if len(hard) > 0 && rq.Spec.Hard == nil {
		rq.Spec.Hard = corev1.ResourceList{}
	}
	for k, q := range hard {
		rq.Spec.Hard[k] = q
	}
	for _, s := range b.f.strList("scopes") {
		rq.Spec.Scopes = append(rq.Spec.Scopes, corev1.ResourceQuotaScope(s))
	}
	return rq, nil
}

// quantities reads a map of resource quantities (hard: {cpu: "4", pods: 10}).
func (b *builder) quantities(key string) corev1.ResourceList {
	m := b.f.strMap(key)
	if m == nil {
		return nil
	}
	out := make(corev1.ResourceList, len(m))
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		q, err := resource.ParseQuantity(m[k])
		if err != nil {
			b.f.fail(key+"."+k, "%q is not a quantity such as 4, 500m or 8Gi: %v", m[k], err)
			return nil
		}
		out[corev1.ResourceName(k)] = q
	}
	return out
}

func buildLimitRange(b *builder) (client.Object, error) {
	lr := &corev1.LimitRange{
		TypeMeta:   typeMeta("v1", "LimitRange"),
		ObjectMeta: b.meta(),
	}
	if src, err := b.source(); err != nil {
		return nil, err
	} else if src != nil {
		from, ok := src.(*corev1.LimitRange)
		if !ok {
			return nil, fmt.Errorf("the source of a LimitRange copy is a %T", src)
		}
		lr.Spec = *from.Spec.DeepCopy()
	}
	if b.f.has("limits") {
		lr.Spec.Limits = nil
		b.f.into("limits", &lr.Spec.Limits)
	}
	return lr, nil
}

// ---- drift ----

// driftSpec compares an object's spec as a subset (what the API server
// defaults is not drift) and replaces it when it differs; field names the
// drift.
func driftSpec(field string) func(d *Drift, m Managed, want, live client.Object) {
	return func(d *Drift, _ Managed, want, live client.Object) {
		w, g := specOf(want), specOf(live)
		if !subset(w.Interface(), g.Interface()) {
			g.Set(w)
			d.add(field)
		}
	}
}

// driftNetworkPolicy: rules are compared exactly, so that a rule added
// behind Orkestra's back to a deny-all policy (no rules) is drift.
func driftNetworkPolicy(d *Drift, _ Managed, want, live client.Object) {
	w, g := want.(*networkingv1.NetworkPolicy), live.(*networkingv1.NetworkPolicy)
	same := subset(w.Spec.PodSelector, g.Spec.PodSelector) &&
		eqPlain(w.Spec.PolicyTypes, g.Spec.PolicyTypes) &&
		len(w.Spec.Ingress) == len(g.Spec.Ingress) && subset(w.Spec.Ingress, g.Spec.Ingress) &&
		len(w.Spec.Egress) == len(g.Spec.Egress) && subset(w.Spec.Egress, g.Spec.Egress)
	if !same {
		g.Spec = w.Spec
		d.add("spec")
	}
}

func driftResourceQuota(d *Drift, m Managed, want, live client.Object) {
	w, g := want.(*corev1.ResourceQuota), live.(*corev1.ResourceQuota)
	same := len(w.Spec.Hard) == len(g.Spec.Hard)
	for k, q := range w.Spec.Hard {
		gq, ok := g.Spec.Hard[k]
		same = same && ok && q.Cmp(gq) == 0
	}
	if !same {
		g.Spec.Hard = w.Spec.Hard
		d.add("hard")
	}
	if m.has("scopes") && !eqPlain(w.Spec.Scopes, g.Spec.Scopes) {
		g.Spec.Scopes = w.Spec.Scopes
		d.add("scopes")
	}
}

package operator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kindsBox declares one child of every kind added with upstream's kind
// table (issue 25); cluster-scoped children carry the test's namespace in
// their names, as they are shared by every test of the API server.
const kindsBox = `
onReconcile:
  namespaces:
    - name: "${self.metadata.namespace}-tenant"
      labels: {team: a}
  replicaSets:
    - name: app-rs
      image: "${self.spec.image}"
      replicas: 2
  persistentVolumes:
    - name: "${self.metadata.namespace}-pv"
      capacity: 1Gi
      hostPath: /tmp/orkestra
  roles:
    - name: app-role
      rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
  roleBindings:
    - name: app-rb
      roleRef: {name: app-role}
      subjects: [{kind: ServiceAccount, name: default}]
  clusterRoles:
    - name: "${self.metadata.namespace}-reader"
      rules: [{apiGroups: [""], resources: [pods], verbs: [list]}]
  clusterRoleBindings:
    - name: "${self.metadata.namespace}-reader"
      roleRef: {name: "${self.metadata.namespace}-reader"}
      subjects: [{kind: ServiceAccount, name: default}]
  hpa:
    - name: app-hpa
      scaleTargetRef: {name: app}
      maxReplicas: 5
      targetCPUUtilizationPercentage: 70
  pdb:
    - name: app-pdb
      minAvailable: "1"
  networkPolicies:
    - name: app-np
      podSelector: {}
      ingress: []
  resourceQuotas:
    - name: app-quota
      hard: {pods: 10}
  limitRanges:
    - name: app-limits
      limits: [{type: Container, default: {cpu: 500m}}]
`

// kindCase changes a managed field of one child behind Orkestra's back and
// says whether it is back as declared.
type kindCase struct {
	name      string
	clustered bool
	obj       func() client.Object
	edit      func(client.Object)
	check     func(client.Object) error
}

var kindCases = []kindCase{
	{"%s-tenant", true, func() client.Object { return &corev1.Namespace{} },
		func(o client.Object) { l := o.GetLabels(); l["team"] = "b"; o.SetLabels(l) },
		func(o client.Object) error { return want(o.GetLabels()["team"] == "a", "labels %v", o.GetLabels()) }},
	{"app-rs", false, func() client.Object { return &appsv1.ReplicaSet{} },
		func(o client.Object) { o.(*appsv1.ReplicaSet).Spec.Replicas = ptr.To[int32](7) },
		func(o client.Object) error {
			rs := o.(*appsv1.ReplicaSet)
			return want(*rs.Spec.Replicas == 2 && rs.Spec.Template.Spec.Containers[0].Image == "nginx:1", "replicas %d", *rs.Spec.Replicas)
		}},
	{"%s-pv", true, func() client.Object { return &corev1.PersistentVolume{} },
		func(o client.Object) {
			o.(*corev1.PersistentVolume).Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
		},
		func(o client.Object) error {
			pv := o.(*corev1.PersistentVolume)
			return want(pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRetain && pv.Spec.Capacity.Storage().String() == "1Gi", "reclaim %s capacity %v", pv.Spec.PersistentVolumeReclaimPolicy, pv.Spec.Capacity)
		}},
	{"app-role", false, func() client.Object { return &rbacv1.Role{} },
		func(o client.Object) { o.(*rbacv1.Role).Rules[0].Verbs = []string{"get", "delete"} },
		func(o client.Object) error {
			return want(fmt.Sprint(o.(*rbacv1.Role).Rules[0].Verbs) == "[get]", "rules %v", o.(*rbacv1.Role).Rules)
		}},
	{"app-rb", false, func() client.Object { return &rbacv1.RoleBinding{} },
		func(o client.Object) { o.(*rbacv1.RoleBinding).Subjects[0].Name = "intruder" },
		func(o client.Object) error {
			s := o.(*rbacv1.RoleBinding).Subjects
			return want(len(s) == 1 && s[0].Name == "default" && s[0].Namespace != "", "subjects %v", s)
		}},
	{"%s-reader", true, func() client.Object { return &rbacv1.ClusterRole{} },
		func(o client.Object) { o.(*rbacv1.ClusterRole).Rules[0].Resources = []string{"secrets"} },
		func(o client.Object) error {
			return want(fmt.Sprint(o.(*rbacv1.ClusterRole).Rules[0].Resources) == "[pods]", "rules %v", o.(*rbacv1.ClusterRole).Rules)
		}},
	{"%s-reader", true, func() client.Object { return &rbacv1.ClusterRoleBinding{} },
		func(o client.Object) {
			b := o.(*rbacv1.ClusterRoleBinding)
			b.Subjects = append(b.Subjects, rbacv1.Subject{Kind: "User", Name: "mallory", APIGroup: rbacv1.GroupName})
		},
		func(o client.Object) error {
			return want(len(o.(*rbacv1.ClusterRoleBinding).Subjects) == 1, "subjects %v", o.(*rbacv1.ClusterRoleBinding).Subjects)
		}},
	{"app-hpa", false, func() client.Object { return &autoscalingv2.HorizontalPodAutoscaler{} },
		func(o client.Object) { o.(*autoscalingv2.HorizontalPodAutoscaler).Spec.MaxReplicas = 50 },
		func(o client.Object) error {
			h := o.(*autoscalingv2.HorizontalPodAutoscaler)
			return want(h.Spec.MaxReplicas == 5 && *h.Spec.Metrics[0].Resource.Target.AverageUtilization == 70, "spec %+v", h.Spec)
		}},
	{"app-pdb", false, func() client.Object { return &policyv1.PodDisruptionBudget{} },
		func(o client.Object) {
			o.(*policyv1.PodDisruptionBudget).Spec.MinAvailable = ptr.To(intstr.FromString("50%"))
		},
		func(o client.Object) error {
			p := o.(*policyv1.PodDisruptionBudget)
			return want(p.Spec.MinAvailable.String() == "1" && p.Spec.Selector.MatchLabels["orkestra-owner"] == "app", "spec %+v", p.Spec)
		}},
	{"app-np", false, func() client.Object { return &networkingv1.NetworkPolicy{} },
		func(o client.Object) {
			np := o.(*networkingv1.NetworkPolicy)
			np.Spec.Ingress = []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}}}
		},
		func(o client.Object) error {
			np := o.(*networkingv1.NetworkPolicy)
			return want(len(np.Spec.Ingress) == 0 && fmt.Sprint(np.Spec.PolicyTypes) == "[Ingress]", "spec %+v", np.Spec)
		}},
	{"app-quota", false, func() client.Object { return &corev1.ResourceQuota{} },
		func(o client.Object) {
			o.(*corev1.ResourceQuota).Spec.Hard[corev1.ResourcePods] = resource.MustParse("99")
		},
		func(o client.Object) error {
			q := o.(*corev1.ResourceQuota).Spec.Hard[corev1.ResourcePods]
			return want(q.String() == "10", "pods %s", q.String())
		}},
	{"app-limits", false, func() client.Object { return &corev1.LimitRange{} },
		func(o client.Object) {
			o.(*corev1.LimitRange).Spec.Limits[0].Default[corev1.ResourceCPU] = resource.MustParse("4")
		},
		func(o client.Object) error {
			l := o.(*corev1.LimitRange).Spec.Limits[0].Default[corev1.ResourceCPU]
			return want(l.String() == "500m", "default cpu %s", l.String())
		}},
}

func want(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf(format, args...)
}

// TestEveryNewKindIsAppliedAndDriftCorrected: every kind of upstream's
// table reaches the API server as rendered (cluster-scoped ones without
// namespace or owner reference), and a managed field changed behind
// Orkestra's back is put back on the next reconcile.
func TestEveryNewKindIsAppliedAndDriftCorrected(t *testing.T) {
	h := startOperator(t, widgetPlan(t, kindsBox))
	create(t, widget(h.ns, "app", map[string]any{"image": "nginx:1"}))
	converged(t, h.ns, "app")
	for _, c := range kindCases {
		name, ns := c.name, h.ns
		if c.clustered {
			name, ns = fmt.Sprintf(c.name, h.ns), ""
		}
		obj := c.obj()
		mustGet(t, ns, name, obj)
		if err := c.check(obj); err != nil {
			t.Fatalf("%T %s as applied: %v", obj, name, err)
		}
		if c.clustered && len(obj.GetOwnerReferences()) > 0 {
			t.Errorf("%T %s: a cluster-scoped child has owner references %v", obj, name, obj.GetOwnerReferences())
		}
		if !c.clustered && len(obj.GetOwnerReferences()) != 1 {
			t.Errorf("%T %s: owner references %v", obj, name, obj.GetOwnerReferences())
		}
		eventually(t, fmt.Sprintf("editing %T %s", obj, name), func() error {
			o := c.obj()
			if err := get(ns, name, o); err != nil {
				return err
			}
			c.edit(o)
			return k8s.Update(context.Background(), o)
		})
		// Reconciled until the edit reached the operator's cache.
		eventually(t, fmt.Sprintf("the drift of %T %s to be corrected", obj, name), func() error {
			h.reconcileNow("widget", "app")
			got := c.obj()
			if err := get(ns, name, got); err != nil {
				return err
			}
			return c.check(got)
		})
	}
}

// NetworkPolicies, ResourceQuotas and LimitRanges copy an existing object
// as Secrets do (upstream: pkg/types/types_networkpolicy.go,
// types_resourcequota.go, types_limitrange.go: fromNetworkPolicy,
// fromResourceQuota, fromLimitRange with fromNamespace and toNamespaces):
// the source's spec, with the declared fields over it.
func TestPolicyCopies(t *testing.T) {
	platform, a := newNamespace(t), newNamespace(t)
	port := intstr.FromInt32(443)
	create(t, &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: platform, Name: "baseline"},
		Spec: networkingv1.NetworkPolicySpec{
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
			Egress:      []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: &port}}}},
		}})
	create(t, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: platform, Name: "org"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("20"), corev1.ResourceCPU: resource.MustParse("4")}}})
	create(t, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Namespace: platform, Name: "org"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}}}})
	h := startOperator(t, widgetPlan(t, fmt.Sprintf(`
onReconcile:
  networkPolicies:
    - name: baseline
      fromNetworkPolicy: baseline
      fromNamespace: %[1]s
      toNamespaces: ["{{ .metadata.namespace }}", "{{ .spec.targets }}"]
      podSelector: {app: web}
  resourceQuotas:
    - name: quota
      fromResourceQuota: org
      fromNamespace: %[1]s
      hard: {pods: 5}
  limitRanges:
    - name: limits
      fromLimitRange: org
      fromNamespace: %[1]s
`, platform)), func(o *harnessOptions) { o.clusterWide = true })
	// The extra namespace comes from the custom resource: the manager
	// watches every namespace, so other tests' widgets are reconciled too.
	create(t, widget(h.ns, "shop", map[string]any{"image": "nginx:1", "targets": []any{a}}))
	converged(t, h.ns, "shop")
	for _, ns := range []string{h.ns, a} {
		var np networkingv1.NetworkPolicy
		mustGet(t, ns, "baseline", &np)
		if len(np.Spec.Egress) != 1 || np.Spec.Egress[0].Ports[0].Port.IntValue() != 443 || np.Spec.PodSelector.MatchLabels["app"] != "web" {
			t.Errorf("network policy copy in %s: %+v", ns, np.Spec)
		}
	}
	var q corev1.ResourceQuota
	mustGet(t, h.ns, "quota", &q)
	if pods, cpu := q.Spec.Hard[corev1.ResourcePods], q.Spec.Hard[corev1.ResourceCPU]; pods.String() != "5" || cpu.String() != "4" {
		t.Errorf("quota copy: %v", q.Spec.Hard)
	}
	var lr corev1.LimitRange
	mustGet(t, h.ns, "limits", &lr)
	if len(lr.Spec.Limits) != 1 || lr.Spec.Limits[0].Max.Memory().String() != "1Gi" {
		t.Errorf("limit range copy: %+v", lr.Spec)
	}
}

// Profiles reach the API server expanded: the objects carry the values the
// profiles stand for (upstream's built-ins and one the katalog defines),
// and a profile named by an expression follows the custom resource.
func TestProfilesReachTheAPIServer(t *testing.T) {
	plan := widgetPlanWith(t, "", `
reconciler: {profile: conservative}
onReconcile:
  deployments:
    - name: web
      image: "${self.spec.image}"
      port: 8080
      resources: {profile: "${self.spec.channel}"}
      securityContext: {profile: restricted}
      podSecurity: {profile: hardened}
      rollingUpdate: {profile: safe}
      probes:
        readiness: {type: http, path: /ready, profile: fast}
  pdb:
    - name: web-pdb
      behavior: {profile: rolling}
  hpa:
    - name: web-hpa
      scaleTargetRef: {name: web}
      maxReplicas: 4
      behavior: {profile: web}
  networkPolicies:
    - name: deny
      profile: deny-all
  resourceQuotas:
    - name: quota
      profile: small
`)
	if e := plan.Entries[0]; e.Workers != 2 || e.Resync.String() != "1m0s" {
		t.Errorf("reconciler profile conservative: workers %d, resync %s", e.Workers, e.Resync)
	}
	h := startOperator(t, plan)
	create(t, widget(h.ns, "app", map[string]any{"image": "nginx:1", "channel": "small"}))
	converged(t, h.ns, "app")
	var d appsv1.Deployment
	mustGet(t, h.ns, "web", &d)
	c := d.Spec.Template.Spec.Containers[0]
	checks := []error{
		want(c.Resources.Requests.Cpu().String() == "100m" && c.Resources.Limits.Memory().String() == "512Mi", "resources %v", c.Resources),
		want(*c.SecurityContext.RunAsNonRoot && !*c.SecurityContext.AllowPrivilegeEscalation && fmt.Sprint(c.SecurityContext.Capabilities.Drop) == "[ALL]", "securityContext %+v", c.SecurityContext),
		want(*d.Spec.Template.Spec.SecurityContext.FSGroup == 65534, "podSecurityContext %+v", d.Spec.Template.Spec.SecurityContext),
		want(d.Spec.Strategy.RollingUpdate.MaxSurge.String() == "1" && d.Spec.Strategy.RollingUpdate.MaxUnavailable.String() == "0", "strategy %+v", d.Spec.Strategy),
		want(c.ReadinessProbe.PeriodSeconds == 10 && c.ReadinessProbe.HTTPGet.Port.IntValue() == 8080, "readiness %+v", c.ReadinessProbe),
	}
	var pdb policyv1.PodDisruptionBudget
	mustGet(t, h.ns, "web-pdb", &pdb)
	checks = append(checks, want(pdb.Spec.MaxUnavailable.String() == "1", "pdb %+v", pdb.Spec))
	var hpa autoscalingv2.HorizontalPodAutoscaler
	mustGet(t, h.ns, "web-hpa", &hpa)
	checks = append(checks, want(*hpa.Spec.Behavior.ScaleDown.StabilizationWindowSeconds == 300 && *hpa.Spec.Metrics[0].Resource.Target.AverageUtilization == 70, "hpa %+v", hpa.Spec))
	var np networkingv1.NetworkPolicy
	mustGet(t, h.ns, "deny", &np)
	checks = append(checks, want(fmt.Sprint(np.Spec.PolicyTypes) == "[Ingress Egress]" && len(np.Spec.Ingress)+len(np.Spec.Egress) == 0, "network policy %+v", np.Spec))
	var q corev1.ResourceQuota
	mustGet(t, h.ns, "quota", &q)
	checks = append(checks, want(q.Spec.Hard.Pods().String() == "10", "quota %v", q.Spec.Hard))
	for _, err := range checks {
		if err != nil {
			t.Error(err)
		}
	}

	// The channel names another resource profile: the Deployment follows.
	updateWidget(t, h.ns, "app", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "large", "spec", "channel")
	})
	eventually(t, "the large profile's resources", func() error {
		var d appsv1.Deployment
		if err := get(h.ns, "web", &d); err != nil {
			return err
		}
		r := d.Spec.Template.Spec.Containers[0].Resources
		return want(r.Requests.Cpu().String() == "500m" && r.Limits.Memory().String() == "2Gi", "resources %v", r)
	})
}

// A motif's declarations read the inputs its import binds: values taken
// from the custom resource follow it, literals and defaults are typed, and
// readyWhen, over the child, reads them as well.
func TestMotifInputsReachTheAPIServer(t *testing.T) {
	dir := t.TempDir()
	motif := `apiVersion: orkestra.orkspace.io/v1
kind: Motif
metadata: {name: web}
inputs:
  - {name: image, required: true}
  - {name: replicas, type: integer, default: 1}
  - {name: tier, default: small}
resources:
  deployments:
    - name: "${self.metadata.name}-web"
      image: '{{ index .inputs "image" }}'
      replicas: "${inputs.replicas}"
      resources: {profile: "{{ .inputs.tier }}"}
      readyWhen: "self.status.?readyReplicas.orValue(0) >= inputs.replicas"
status:
  fields:
    - {path: phase, value: "{{ .inputs.image }}"}
`
	if err := os.WriteFile(filepath.Join(dir, "motif.yaml"), []byte(motif), 0o644); err != nil {
		t.Fatal(err)
	}
	// The test's temporary directories are one repository: the katalog
	// (in a sibling directory) may import the motif.
	if err := os.Mkdir(filepath.Join(filepath.Dir(dir), ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	plan := widgetPlanWith(t, "      imports:\n        - motif: "+filepath.Join(dir, "motif.yaml")+"\n          with: {image: \"${self.spec.image}\", replicas: 2, tier: \"{{ .spec.channel }}\"}\n", `
onReconcile: {}
`)
	h := startOperator(t, plan)
	create(t, widget(h.ns, "app", map[string]any{"image": "nginx:1", "channel": "tiny"}))
	// readyWhen reads the inputs too: ready at the replicas the import binds.
	readyAs(t, h.ns, "app", "False", ReasonNotReady, "Deployment "+h.ns+"/app-web: readyWhen")
	setDeploymentStatus(t, h.ns, "app-web", 1)
	readyAs(t, h.ns, "app", "False", ReasonNotReady, "Deployment "+h.ns+"/app-web: readyWhen")
	setDeploymentStatus(t, h.ns, "app-web", 2)
	converged(t, h.ns, "app")
	var d appsv1.Deployment
	mustGet(t, h.ns, "app-web", &d)
	c := d.Spec.Template.Spec.Containers[0]
	if c.Image != "nginx:1" || *d.Spec.Replicas != 2 || c.Resources.Requests.Cpu().String() != "25m" {
		t.Errorf("image %s, replicas %d, resources %v", c.Image, *d.Spec.Replicas, c.Resources)
	}
	if phase, _, _ := unstructured.NestedString(getWidget(t, h.ns, "app").Object, "status", "phase"); phase != "nginx:1" {
		t.Errorf("status.phase %q", phase)
	}
	updateWidget(t, h.ns, "app", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "nginx:2", "spec", "image")
		_ = unstructured.SetNestedField(u.Object, "medium", "spec", "channel")
	})
	eventually(t, "the deployment to follow the inputs", func() error {
		var d appsv1.Deployment
		if err := get(h.ns, "app-web", &d); err != nil {
			return err
		}
		c := d.Spec.Template.Spec.Containers[0]
		return want(c.Image == "nginx:2" && c.Resources.Requests.Cpu().String() == "250m", "image %s resources %v", c.Image, c.Resources)
	})
}

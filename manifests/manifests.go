//go:generate go test -run ^TestDeployUpToDate$ -update .

// Package manifests generates the in-cluster install of a katalog: the
// Namespace, ServiceAccount, least-privilege RBAC derived from the katalog,
// the katalog's files in a ConfigMap, the Deployment running `orkestra run`,
// the webhook Service, a PodDisruptionBudget and the CRDs converting through
// that Service — with certificates from cert-manager or from Orkestra's
// built-in mode (webhook/certs).
//
// Objects are built as typed API structs and printed with sigs.k8s.io/yaml,
// in a fixed order, so the output is deterministic.
package manifests

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/admission"
	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/lifecycle/crdspec"
	"github.com/orkspace/orkestra-cel/webhook"
	"github.com/orkspace/orkestra-cel/webhook/certs"
)

// Defaults.
const (
	DefaultNamespace = "orkestra-system"
	DefaultName      = "orkestra"
	DefaultImage     = "ghcr.io/orkspace/orkestra-cel:latest"
	DefaultReplicas  = 2
)

// Paths and ports inside the pod.
const (
	KatalogMountPath = "/etc/orkestra/katalog"
	TLSMountPath     = "/etc/orkestra/tls"
	TmpMountPath     = "/tmp"
	// CertDir is where the built-in mode writes the serving certificate
	// (on the /tmp emptyDir: the root filesystem is read-only).
	CertDir     = "/tmp/orkestra-certs"
	WebhookPort = 8443
	HTTPPort    = 8080
	// ServicePort is the webhook Service's HTTPS port (the API server
	// calls it).
	ServicePort = 443
	// UID and GID the container runs as (distroless nonroot).
	NonRootID = 65532
)

// Labels every object carries.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelComponent = "app.kubernetes.io/component"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelKatalog   = admission.LabelKatalog
	// AnnotationKatalogChecksum on the pod template changes with the
	// katalog's files, so that a new katalog rolls the pods.
	AnnotationKatalogChecksum = "orkestra.orkspace.io/katalog-checksum"
	// AnnotationInjectCA asks cert-manager's cainjector to fill the CRDs'
	// caBundle from a Certificate.
	AnnotationInjectCA = "cert-manager.io/inject-ca-from"
)

// Options of Generate.
type Options struct {
	// Namespace the operator runs in (default orkestra-system).
	Namespace string
	// Name of the namespaced objects (default orkestra); the cluster-scoped
	// ones are named <namespace>:<name>.
	Name string
	// Image of the container (default DefaultImage).
	Image string
	// Replicas of the Deployment (default 2).
	Replicas int32
	// CertManager: the serving certificate comes from cert-manager (an
	// Issuer, a Certificate, the CA injection annotation on the CRDs).
	// Otherwise the built-in mode: Orkestra creates and rotates it in a
	// Secret and writes the CA bundle into the CRDs itself.
	CertManager bool
	// Monitoring adds a ServiceMonitor, a PrometheusRule and a Grafana
	// dashboard (prometheus-operator and the Grafana sidecar must be
	// installed to use them).
	Monitoring bool
	// KatalogPaths are the -f arguments as given (files or directories);
	// empty means the katalog's files.
	KatalogPaths []string
	// WatchNamespace, when set, makes a namespace-scoped install: the
	// operator watches and caches that namespace only (`orkestra run
	// --namespace`), and the access to custom resources, children and events
	// is a Role there instead of a ClusterRole.
	WatchNamespace string
}

func (o *Options) complete() {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.Image == "" {
		o.Image = DefaultImage
	}
	if o.Replicas <= 0 {
		o.Replicas = DefaultReplicas
	}
}

// Object is one generated object and the file of the kustomize layout it
// belongs in.
type Object struct {
	File   string
	Object client.Object
}

// Install is a generated install.
type Install struct {
	Options Options
	Objects []Object
	// Children is the access granted per child resource (for the report).
	Children []ChildAccess
	// Warnings are what could not be derived (printed by the command).
	Warnings []string
	// Notes say what the install decided for the user (printed by the
	// command): CRDs installed without the webhook.
	Notes []string
	// Names of what the install refers to.
	ServiceAccount, ServiceName, SecretName, LeaseName, ConfigMapName string
	CRDNames                                                          []string
}

// Files of the kustomize layout, in kustomization order.
const (
	FileNamespace     = "namespace.yaml"
	FileCRDs          = "crds.yaml"
	FileAdmission     = "admission.yaml"
	FileRBAC          = "rbac.yaml"
	FileConfigMap     = "configmap.yaml"
	FileService       = "service.yaml"
	FileCertificate   = "certificate.yaml"
	FileDeployment    = "deployment.yaml"
	FilePDB           = "pdb.yaml"
	FileNetworkPolicy = "networkpolicy.yaml"
)

// LeaseName is the leader election Lease of a katalog: orkestra-<name>
// (what `orkestra run` defaults to).
func LeaseName(plan *engine.Plan) string {
	if name := plan.DNSName(63 - len("orkestra-")); name != "" {
		return "orkestra-" + name
	}
	return "orkestra"
}

// Generate builds the install of plan.
func Generate(plan *engine.Plan, opts Options) (*Install, error) {
	opts.complete()
	in := &Install{
		Options:        opts,
		ServiceAccount: opts.Name,
		ServiceName:    opts.Name,
		SecretName:     opts.Name + "-webhook-tls",
		LeaseName:      LeaseName(plan),
		ConfigMapName:  opts.Name + "-katalog",
	}
	files, fArgs, outside, err := katalogFiles(plan.Katalog, opts.KatalogPaths, KatalogMountPath)
	if err != nil {
		return nil, err
	}
	labels := in.labels("")
	ns := opts.Namespace

	// Namespace: the pods meet the restricted Pod Security Standard.
	namespace := &corev1.Namespace{
		TypeMeta: typeMeta("v1", "Namespace"),
		ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: merge(labels, map[string]string{
			"pod-security.kubernetes.io/enforce": "restricted",
		})},
	}
	in.add(FileNamespace, namespace)

	// CRDs.
	crds := in.crds(plan)
	for _, c := range crds {
		in.CRDNames = append(in.CRDNames, c.Name)
		in.add(FileCRDs, c)
	}
	// The katalog's admission policies (orkestra run applies the same).
	policies := admission.Policies(plan)
	for _, o := range policies {
		in.add(FileAdmission, o)
	}

	if err := in.rbac(plan, labels, len(policies) > 0); err != nil {
		return nil, err
	}

	// The katalog's files.
	data := map[string]string{}
	sum := sha256.New()
	for _, f := range files {
		data[f.key] = f.data
		fmt.Fprintf(sum, "%s\x00%d\x00%s", f.key, len(f.data), f.data)
	}
	in.add(FileConfigMap, &corev1.ConfigMap{
		TypeMeta:   typeMeta("v1", "ConfigMap"),
		ObjectMeta: metav1.ObjectMeta{Name: in.ConfigMapName, Namespace: ns, Labels: labels},
		Data:       data,
	})

	// The webhook Service (the API server calls it on 443) and metrics.
	selector := map[string]string{LabelName: "orkestra", LabelInstance: opts.Name}
	in.add(FileService, &corev1.Service{
		TypeMeta:   typeMeta("v1", "Service"),
		ObjectMeta: metav1.ObjectMeta{Name: in.ServiceName, Namespace: ns, Labels: labels},
		Spec: corev1.ServiceSpec{
			Selector: selector,
			Ports: []corev1.ServicePort{
				{Name: "webhook", Port: ServicePort, TargetPort: intstr.FromString("webhook"), Protocol: corev1.ProtocolTCP},
				{Name: "http", Port: HTTPPort, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP},
			},
		},
	})

	if opts.Monitoring {
		for _, o := range in.monitoringObjects(labels, in.LeaseName) {
			in.add(FileMonitoring, o)
		}
	}

	if opts.CertManager {
		for _, o := range in.certManagerObjects() {
			in.add(FileCertificate, o)
		}
	}

	in.add(FileDeployment, in.deployment(plan, files, fArgs, outside, hex.EncodeToString(sum.Sum(nil)), selector))
	np := in.networkPolicy(selector)
	np.Annotations = egressAnnotations(plan)
	in.add(FileNetworkPolicy, np)
	if note := egressNote(plan); note != "" {
		in.Notes = append(in.Notes, note)
	}

	in.add(FilePDB, &policyv1.PodDisruptionBudget{
		TypeMeta:   typeMeta("policy/v1", "PodDisruptionBudget"),
		ObjectMeta: metav1.ObjectMeta{Name: opts.Name, Namespace: ns, Labels: labels},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			Selector:       &metav1.LabelSelector{MatchLabels: selector},
		},
	})
	return in, nil
}

func (in *Install) add(file string, o client.Object) {
	in.Objects = append(in.Objects, Object{File: file, Object: o})
}

func (in *Install) labels(component string) map[string]string {
	l := map[string]string{
		LabelName:      "orkestra",
		LabelInstance:  in.Options.Name,
		LabelManagedBy: "orkestra-manifests",
	}
	if component != "" {
		l[LabelComponent] = component
	}
	return l
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// crds returns the katalog's CRDs, sorted by name, each converting through
// the webhook Service when the katalog declares its conversion.
func (in *Install) crds(plan *engine.Plan) []*apiextensionsv1.CustomResourceDefinition {
	var out []*apiextensionsv1.CustomResourceDefinition
	seen := map[string]bool{}
	for _, e := range plan.Entries {
		if e.Source == nil || e.Source.CRD == nil || seen[e.Source.CRD.Object.Name] {
			continue
		}
		if crd := e.Source.CRD; !crd.Installable() {
			seen[crd.Object.Name] = true
			if crd.Origin == katalog.Untyped {
				in.Warnings = append(in.Warnings, fmt.Sprintf("entry %s: the katalog does not define the CRD %s (no crdFile), so the install does not include it; apply it yourself — add crdFile to have it installed with its conversion webhook", e.Name, crd.Object.Name))
			}
			continue // a CRD the katalog does not define is the cluster's to keep
		}
		src := e.Source.CRD.Object
		seen[src.Name] = true
		c := &apiextensionsv1.CustomResourceDefinition{
			TypeMeta: typeMeta("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
			ObjectMeta: metav1.ObjectMeta{
				Name:        src.Name,
				Labels:      merge(src.Labels, map[string]string{LabelKatalog: plan.Katalog.Name}),
				Annotations: crdspec.Annotations(plan, e.Source.CRD),
			},
		}
		cc := apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{
			Namespace: in.Options.Namespace,
			Name:      in.ServiceName,
			Path:      ptr.To(webhook.ConvertPath),
			Port:      ptr.To(int32(ServicePort)),
		}}
		spec, strategy := crdspec.Spec(plan, e.Source.CRD, cc)
		c.Spec = spec
		switch strategy {
		case crdspec.Webhook:
			if in.Options.CertManager {
				c.Annotations = merge(c.Annotations, map[string]string{
					AnnotationInjectCA: in.Options.Namespace + "/" + in.certificateName(),
				})
			}
		case crdspec.Identity:
			in.Notes = append(in.Notes, crdspec.IdentityNote(c.Name))
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (in *Install) issuerName() string      { return in.Options.Name + "-selfsigned" }
func (in *Install) certificateName() string { return in.Options.Name + "-webhook" }

// certManagerObjects: a self-signed Issuer and the webhook's Certificate
// (cert-manager's types are not a dependency: unstructured objects).
func (in *Install) certManagerObjects() []client.Object {
	ns := in.Options.Namespace
	labels := map[string]any{}
	for k, v := range in.labels("") {
		labels[k] = v
	}
	dns := make([]any, 0, 4)
	for _, n := range certs.ServiceDNSNames(in.ServiceName, ns) {
		dns = append(dns, n)
	}
	issuer := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cert-manager.io/v1",
		"kind":       "Issuer",
		"metadata":   map[string]any{"name": in.issuerName(), "namespace": ns, "labels": labels},
		"spec":       map[string]any{"selfSigned": map[string]any{}},
	}}
	cert := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cert-manager.io/v1",
		"kind":       "Certificate",
		"metadata":   map[string]any{"name": in.certificateName(), "namespace": ns, "labels": labels},
		"spec": map[string]any{
			"secretName":  in.SecretName,
			"dnsNames":    dns,
			"issuerRef":   map[string]any{"kind": "Issuer", "name": in.issuerName()},
			"privateKey":  map[string]any{"algorithm": "ECDSA", "size": int64(256), "rotationPolicy": "Always"},
			"duration":    "8760h",
			"renewBefore": "2920h",
		},
	}}
	return []client.Object{issuer, cert}
}

func (in *Install) deployment(plan *engine.Plan, files []katalogFile, fArgs []string, outside bool, checksum string, selector map[string]string) *appsv1.Deployment {
	o := in.Options
	args := []string{"run"}
	for _, f := range fArgs {
		args = append(args, "--katalog="+f)
	}
	if outside {
		// The mount holds only the files confined() let in; it has no
		// .git to widen the boundary to the repository they came from.
		args = append(args, "--allow-outside-paths")
	}
	args = append(args,
		"--leader-elect=true",
		"--leader-election-id="+in.LeaseName,
		fmt.Sprintf("--webhook-addr=:%d", WebhookPort),
		fmt.Sprintf("--http-addr=:%d", HTTPPort),
	)
	if o.WatchNamespace != "" {
		args = append(args, "--namespace="+o.WatchNamespace)
	}
	volumes := []corev1.Volume{
		{Name: "katalog", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: in.ConfigMapName},
			Items:                volumeItems(files),
		}}},
		{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("16Mi"))}}},
	}
	mounts := []corev1.VolumeMount{
		{Name: "katalog", MountPath: KatalogMountPath, ReadOnly: true},
		{Name: "tmp", MountPath: TmpMountPath},
	}
	if o.CertManager {
		args = append(args, "--tls-cert="+TLSMountPath+"/tls.crt", "--tls-key="+TLSMountPath+"/tls.key")
		// First: a strategic-merge patch (deploy/overlays/cert-manager)
		// adds list items in front.
		volumes = append([]corev1.Volume{{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: in.SecretName}}}}, volumes...)
		mounts = append([]corev1.VolumeMount{{Name: "tls", MountPath: TLSMountPath, ReadOnly: true}}, mounts...)
	} else {
		args = append(args,
			"--cert-secret="+in.SecretName,
			"--webhook-service="+in.ServiceName,
			"--cert-dir="+CertDir,
		)
	}
	podLabels := merge(selector, map[string]string{LabelKatalog: plan.Katalog.Name})
	return &appsv1.Deployment{
		TypeMeta:   typeMeta("apps/v1", "Deployment"),
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Labels: in.labels("")},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(o.Replicas),
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Strategy: appsv1.DeploymentStrategy{
				Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{
					MaxUnavailable: ptr.To(intstr.FromInt32(0)),
					MaxSurge:       ptr.To(intstr.FromInt32(1)),
				},
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      podLabels,
					Annotations: map[string]string{AnnotationKatalogChecksum: checksum},
				},
				Spec: corev1.PodSpec{
					ServiceAccountName:            in.ServiceAccount,
					TerminationGracePeriodSeconds: ptr.To(int64(40)),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						RunAsUser:      ptr.To(int64(NonRootID)),
						RunAsGroup:     ptr.To(int64(NonRootID)),
						FSGroup:        ptr.To(int64(NonRootID)),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
							Weight: 100,
							PodAffinityTerm: corev1.PodAffinityTerm{
								LabelSelector: &metav1.LabelSelector{MatchLabels: selector},
								TopologyKey:   corev1.LabelHostname,
							},
						}},
					}},
					Containers: []corev1.Container{{
						Name:            "orkestra",
						Image:           o.Image,
						ImagePullPolicy: corev1.PullIfNotPresent,
						Args:            args,
						Env: []corev1.EnvVar{
							{Name: certs.EnvPodNamespace, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}},
							{Name: "GOMEMLIMIT", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1")}}},
						},
						Ports: []corev1.ContainerPort{
							{Name: "webhook", ContainerPort: WebhookPort, Protocol: corev1.ProtocolTCP},
							{Name: "http", ContainerPort: HTTPPort, Protocol: corev1.ProtocolTCP},
						},
						LivenessProbe: &corev1.Probe{
							ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
							PeriodSeconds:    10,
							TimeoutSeconds:   2,
							FailureThreshold: 3,
						},
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("http")}},
							PeriodSeconds:    5,
							TimeoutSeconds:   2,
							FailureThreshold: 2,
						},
						StartupProbe: &corev1.Probe{
							ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
							PeriodSeconds:    2,
							FailureThreshold: 30,
						},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{
								corev1.ResourceCPU:    resource.MustParse("100m"),
								corev1.ResourceMemory: resource.MustParse("128Mi"),
							},
							Limits: corev1.ResourceList{
								// The /convert budget is sized for this limit (webhook.DefaultMaxInflightBytes).
								corev1.ResourceMemory: *resource.NewQuantity(webhook.InstallMemoryLimit, resource.BinarySI),
							},
						},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							ReadOnlyRootFilesystem:   ptr.To(true),
							RunAsNonRoot:             ptr.To(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
							SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
						},
						VolumeMounts:             mounts,
						TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
					}},
					Volumes: volumes,
				},
			},
		},
	}
}

// Unstructured returns the objects as clean JSON-shaped maps: no
// creationTimestamp, no empty status.
func (in *Install) Unstructured() ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, 0, len(in.Objects))
	for _, o := range in.Objects {
		u, err := toUnstructured(o.Object)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

func toUnstructured(o client.Object) (*unstructured.Unstructured, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	clean(m)
	return &unstructured.Unstructured{Object: m}, nil
}

// clean drops what typed structs print but an install must not hold.
func clean(m map[string]any) {
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	delete(m, "status")
	if spec, ok := m["spec"].(map[string]any); ok && len(spec) == 0 {
		delete(m, "spec")
	}
	if spec, ok := m["spec"].(map[string]any); ok {
		if tmpl, ok := spec["template"].(map[string]any); ok {
			if md, ok := tmpl["metadata"].(map[string]any); ok {
				delete(md, "creationTimestamp")
			}
		}
	}
}

// rbac adds the install's ServiceAccount, ClusterRole, Roles and bindings:
// least privilege derived from the plan (Rules), the storage migration's,
// the policy management of orkestra run when the katalog has admission
// rules, and the leader election Lease and certificate Secret by name.
func (in *Install) rbac(plan *engine.Plan, labels map[string]string, managesPolicies bool) error {
	opts, ns := in.Options, in.Options.Namespace
	var err error
	access := Rules(plan)
	rules := access.Cluster
	in.Children, in.Warnings = access.Children, access.Warnings
	var watched []rbacv1.PolicyRule
	if opts.WatchNamespace != "" {
		// What reconciling needs goes to a Role in the watched namespace;
		// the storage migration and the admission policies below stay
		// cluster-wide (stored objects anywhere must move).
		if rules, watched, err = namespaceScoped(plan, rules); err != nil {
			return err
		}
	}
	// orkestra run reads every katalog CRD at start and patches the
	// katalog's validation rules into it; the storage migration (on by
	// default) reads and patches it too (progress annotation), writes its status
	// (storedVersions, condition) and rewrites its objects; the built-in
	// certificate mode patches the CA bundle into the CRDs converting
	// through the webhook, a subset of those. list and watch name the CRDs
	// with a field selector.
	rules = mergeRules(append(rules, StorageMigrationRules(plan)...))
	if managesPolicies {
		// orkestra run applies the policies at start and removes those the
		// katalog no longer declares.
		rules = mergeRules(append(rules, rbacv1.PolicyRule{
			APIGroups: []string{"admissionregistration.k8s.io"},
			Resources: []string{"validatingadmissionpolicies", "validatingadmissionpolicybindings", "mutatingadmissionpolicies", "mutatingadmissionpolicybindings"},
			Verbs:     []string{"get", "list", "create", "patch", "delete"},
		}))
	}
	clusterName := ns + ":" + opts.Name
	in.add(FileRBAC, &corev1.ServiceAccount{
		TypeMeta:   typeMeta("v1", "ServiceAccount"),
		ObjectMeta: metav1.ObjectMeta{Name: in.ServiceAccount, Namespace: ns, Labels: labels},
	})
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: in.ServiceAccount, Namespace: ns}}
	if opts.WatchNamespace != "" {
		in.addRole(opts.WatchNamespace, in.watchRoleName(), labels, watched, subjects)
	}
	if len(rules) > 0 {
		in.add(FileRBAC, &rbacv1.ClusterRole{
			TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "ClusterRole"),
			ObjectMeta: metav1.ObjectMeta{Name: clusterName, Labels: labels},
			Rules:      rules,
		})
		in.add(FileRBAC, &rbacv1.ClusterRoleBinding{
			TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
			ObjectMeta: metav1.ObjectMeta{Name: clusterName, Labels: labels},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterName},
			Subjects:   subjects,
		})
	}
	// In its own namespace: the leader election Lease and the built-in
	// certificate Secret, by name. create cannot be restricted to a name.
	roleRules := []rbacv1.PolicyRule{
		{APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"}, Verbs: []string{"create"}},
		{APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"}, ResourceNames: []string{in.LeaseName}, Verbs: []string{"get", "update"}},
	}
	if !opts.CertManager {
		roleRules = append(roleRules,
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create"}},
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{in.SecretName}, Verbs: []string{"get", "list", "watch", "update"}},
		)
	}
	// The katalog's namespaced grants (entries limited to namespaces, copy
	// sources): a Role and RoleBinding in each namespace, the operator's own
	// namespace included.
	access.Namespaced[ns] = append(roleRules, access.Namespaced[ns]...)
	for _, rns := range sortedKeys(access.Namespaced) {
		in.add(FileRBAC, &rbacv1.Role{
			TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "Role"),
			ObjectMeta: metav1.ObjectMeta{Name: opts.Name, Namespace: rns, Labels: labels},
			Rules:      access.Namespaced[rns],
		})
		in.add(FileRBAC, &rbacv1.RoleBinding{
			TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "RoleBinding"),
			ObjectMeta: metav1.ObjectMeta{Name: opts.Name, Namespace: rns, Labels: labels},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: opts.Name},
			Subjects:   subjects,
		})
	}

	return nil
}

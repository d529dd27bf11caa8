package render

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Defaults of the simplified fields.
const (
	// DefaultContainerName is the container's name when containerName is
	// not set and the child's name is not a valid container name.
	DefaultContainerName = "main"
	// DefaultServicePort is a service's port when neither port, targetPort
	// nor the selected workload's port say otherwise.
	DefaultServicePort = 80
	// DefaultJobBackoffLimit is the original katalogs' Job backoffLimit.
	DefaultJobBackoffLimit = 3
	// DefaultIngressPath and DefaultIngressPathType complete an ingress rule.
	DefaultIngressPath     = "/"
	DefaultIngressPathType = networkingv1.PathTypePrefix
)

type builder struct {
	r         *renderer
	c         *Child
	f         fieldReader
	workloads []*Child
}

func (b *builder) build() (runtime.Object, error) {
	switch b.c.Kind {
	case "deployments":
		return b.deployment(), nil
	case "statefulSets":
		return b.statefulSet(), nil
	case "jobs":
		return b.job(), nil
	case "cronJobs":
		return b.cronJob(), nil
	case "pods":
		return b.pod(), nil
	case "services":
		return b.service(), nil
	case "configMaps":
		return b.configMap(), nil
	case "secrets":
		return b.secret(), nil
	case "serviceAccounts":
		return b.serviceAccount(), nil
	case "ingresses":
		return b.ingress(), nil
	case "persistentVolumeClaims":
		return b.pvc(), nil
	case "custom":
		return b.custom()
	}
	return nil, fmt.Errorf("no builder for resource kind %q", b.c.Kind)
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

// selectorLabels select exactly this child's pods.
func (b *builder) selectorLabels() map[string]string {
	return map[string]string{
		LabelOwner: LabelValue(b.r.cr.GetName()),
		LabelChild: LabelValue(b.c.Name),
	}
}

// podTemplate carries the object's labels (without the managed label: pods
// of a workload are not Orkestra's children), podLabels and the selector
// labels; podAnnotations.
func (b *builder) podTemplate(meta metav1.ObjectMeta, selector map[string]string, restartPolicy corev1.RestartPolicy) corev1.PodTemplateSpec {
	labels := map[string]string{}
	for k, v := range meta.Labels {
		if k != LabelManaged {
			labels[k] = v
		}
	}
	for k, v := range b.f.strMap("podLabels") {
		labels[k] = v
	}
	for k, v := range selector {
		labels[k] = v
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: b.f.strMap("podAnnotations")},
		Spec:       b.podSpec(restartPolicy),
	}
}

func (b *builder) podSpec(restartPolicy corev1.RestartPolicy) corev1.PodSpec {
	f := &b.f
	ps := corev1.PodSpec{
		Containers:         []corev1.Container{b.container()},
		ServiceAccountName: f.str("serviceAccountName"),
		NodeSelector:       f.strMap("nodeSelector"),
		ImagePullSecrets:   localRefs(f.strList("imagePullSecrets")),
		RestartPolicy:      restartPolicy,
	}
	if f.has("restartPolicy") {
		ps.RestartPolicy = corev1.RestartPolicy(f.str("restartPolicy"))
	}
	f.into("tolerations", &ps.Tolerations)
	f.into("volumes", &ps.Volumes)
	f.into("podSecurityContext", &ps.SecurityContext)
	return ps
}

func localRefs(names []string) []corev1.LocalObjectReference {
	if names == nil {
		return nil
	}
	out := make([]corev1.LocalObjectReference, len(names))
	for i, n := range names {
		out[i] = corev1.LocalObjectReference{Name: n}
	}
	return out
}

// ContainerName is the name of a child's container: containerName, else the
// child's name when it is a valid container name, else DefaultContainerName.
func ContainerName(containerName, childName string) string {
	if containerName != "" {
		return containerName
	}
	if len(validation.IsDNS1123Label(childName)) == 0 {
		return childName
	}
	return DefaultContainerName
}

func (b *builder) container() corev1.Container {
	f := &b.f
	c := corev1.Container{
		Name:            ContainerName(f.str("containerName"), b.c.Name),
		Image:           f.str("image"),
		ImagePullPolicy: corev1.PullPolicy(f.str("imagePullPolicy")),
		Command:         f.strList("command"),
		Args:            f.strList("args"),
	}
	if port := f.int32("port", 1, 65535); port != nil {
		c.Ports = []corev1.ContainerPort{{ContainerPort: *port, Protocol: b.protocol()}}
	}
	f.into("env", &c.Env)
	f.into("envFrom", &c.EnvFrom)
	f.into("resources", &c.Resources)
	f.into("livenessProbe", &c.LivenessProbe)
	f.into("readinessProbe", &c.ReadinessProbe)
	f.into("startupProbe", &c.StartupProbe)
	f.into("securityContext", &c.SecurityContext)
	f.into("volumeMounts", &c.VolumeMounts)
	return c
}

func (b *builder) protocol() corev1.Protocol {
	p := b.f.str("protocol")
	if p == "" {
		return corev1.ProtocolTCP
	}
	return corev1.Protocol(strings.ToUpper(p))
}

func (b *builder) deployment() *appsv1.Deployment {
	meta := b.meta()
	sel := b.selectorLabels()
	return &appsv1.Deployment{
		TypeMeta:   typeMeta("apps/v1", "Deployment"),
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas: b.f.int32("replicas", 0, 1<<31-1),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: b.podTemplate(meta, sel, ""),
		},
	}
}

func (b *builder) statefulSet() *appsv1.StatefulSet {
	meta := b.meta()
	sel := b.selectorLabels()
	s := &appsv1.StatefulSet{
		TypeMeta:   typeMeta("apps/v1", "StatefulSet"),
		ObjectMeta: meta,
		Spec: appsv1.StatefulSetSpec{
			Replicas:    b.f.int32("replicas", 0, 1<<31-1),
			Selector:    &metav1.LabelSelector{MatchLabels: sel},
			ServiceName: b.f.str("serviceName"),
			Template:    b.podTemplate(meta, sel, ""),
		},
	}
	b.f.into("volumeClaimTemplates", &s.Spec.VolumeClaimTemplates)
	return s
}

func (b *builder) job() *batchv1.Job {
	meta := b.meta()
	backoff := b.f.int32("backoffLimit", 0, 1<<31-1)
	if backoff == nil {
		v := int32(DefaultJobBackoffLimit)
		backoff = &v
	}
	return &batchv1.Job{
		TypeMeta:   typeMeta("batch/v1", "Job"),
		ObjectMeta: meta,
		Spec: batchv1.JobSpec{
			BackoffLimit:            backoff,
			TTLSecondsAfterFinished: b.f.int32("ttlSecondsAfterFinished", 0, 1<<31-1),
			Template:                b.podTemplate(meta, b.selectorLabels(), corev1.RestartPolicyNever),
		},
	}
}

func (b *builder) cronJob() *batchv1.CronJob {
	meta := b.meta()
	backoff := b.f.int32("backoffLimit", 0, 1<<31-1)
	if backoff == nil {
		v := int32(DefaultJobBackoffLimit)
		backoff = &v
	}
	sel := b.selectorLabels()
	jobLabels := map[string]string{}
	for k, v := range meta.Labels {
		if k != LabelManaged {
			jobLabels[k] = v
		}
	}
	for k, v := range sel {
		jobLabels[k] = v
	}
	return &batchv1.CronJob{
		TypeMeta:   typeMeta("batch/v1", "CronJob"),
		ObjectMeta: meta,
		Spec: batchv1.CronJobSpec{
			Schedule:          b.f.str("schedule"),
			Suspend:           b.f.bool("suspend"),
			ConcurrencyPolicy: batchv1.ConcurrencyPolicy(b.f.str("concurrencyPolicy")),
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: jobLabels},
				Spec: batchv1.JobSpec{
					BackoffLimit: backoff,
					Template:     b.podTemplate(meta, sel, corev1.RestartPolicyNever),
				},
			},
		},
	}
}

func (b *builder) pod() *corev1.Pod {
	meta := b.meta()
	for k, v := range b.f.strMap("podLabels") {
		meta.Labels[k] = v
	}
	for k, v := range b.selectorLabels() {
		meta.Labels[k] = v
	}
	if ann := b.f.strMap("podAnnotations"); len(ann) > 0 {
		if meta.Annotations == nil {
			meta.Annotations = map[string]string{}
		}
		for k, v := range ann {
			meta.Annotations[k] = v
		}
	}
	return &corev1.Pod{
		TypeMeta:   typeMeta("v1", "Pod"),
		ObjectMeta: meta,
		Spec:       b.podSpec(""),
	}
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

func (b *builder) service() *corev1.Service {
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
	return svc
}

func (b *builder) configMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   typeMeta("v1", "ConfigMap"),
		ObjectMeta: b.meta(),
		Data:       b.f.strMap("data"),
	}
}

// secret writes data's plain strings as the secret's bytes (the API's
// base64 in data), like stringData.
func (b *builder) secret() *corev1.Secret {
	meta := b.meta()
	if ra := b.c.Resource.RotateAfter; ra > 0 {
		if meta.Annotations == nil {
			meta.Annotations = map[string]string{}
		}
		meta.Annotations[AnnotationRotateAfter] = ra.String()
	}
	s := &corev1.Secret{
		TypeMeta:   typeMeta("v1", "Secret"),
		ObjectMeta: meta,
		Type:       corev1.SecretType(b.f.str("type")),
	}
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}
	if data := b.f.strMap("data"); data != nil {
		s.Data = make(map[string][]byte, len(data))
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
	}
	return s
}

func (b *builder) serviceAccount() *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		TypeMeta:                     typeMeta("v1", "ServiceAccount"),
		ObjectMeta:                   b.meta(),
		AutomountServiceAccountToken: b.f.bool("automountServiceAccountToken"),
		ImagePullSecrets:             localRefs(b.f.strList("imagePullSecrets")),
	}
}

func (b *builder) ingress() *networkingv1.Ingress {
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
	return ing
}

func (b *builder) pvc() *corev1.PersistentVolumeClaim {
	f := &b.f
	modes := f.strList("accessModes")
	if len(modes) == 0 {
		modes = []string{string(corev1.ReadWriteOnce)}
	}
	pvc := &corev1.PersistentVolumeClaim{
		TypeMeta:   typeMeta("v1", "PersistentVolumeClaim"),
		ObjectMeta: b.meta(),
	}
	for _, m := range modes {
		pvc.Spec.AccessModes = append(pvc.Spec.AccessModes, corev1.PersistentVolumeAccessMode(m))
	}
	if q, ok := b.quantity("storage"); ok {
		pvc.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: q}
	}
	if cls := f.str("storageClassName"); f.has("storageClassName") {
		pvc.Spec.StorageClassName = &cls
	}
	if vm := f.str("volumeMode"); vm != "" {
		mode := corev1.PersistentVolumeMode(vm)
		pvc.Spec.VolumeMode = &mode
	}
	return pvc
}

// quantity reads a resource quantity: a string such as 10Gi, or an integer
// number of bytes.
func (b *builder) quantity(key string) (resource.Quantity, bool) {
	v, ok := b.f.fields[key]
	if !ok || v == nil {
		return resource.Quantity{}, false
	}
	if s, ok := v.(string); ok {
		q, err := resource.ParseQuantity(s)
		if err != nil {
			b.f.fail(key, "%q is not a quantity such as 10Gi or 500Mi: %v", s, err)
			return resource.Quantity{}, false
		}
		return q, true
	}
	i, ok := b.f.int(key)
	if !ok {
		return resource.Quantity{}, false
	}
	return *resource.NewQuantity(i, resource.BinarySI), true
}

// custom builds a whole manifest: apiVersion, kind, the declared metadata
// and every other top-level field as evaluated.
func (b *builder) custom() (*unstructured.Unstructured, error) {
	obj := map[string]any{}
	for k, v := range b.c.Fields {
		switch k {
		case "name", "namespace", "labels", "annotations", "metadata":
			continue
		}
		n, err := jsonValue(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.f.path(k), err)
		}
		obj[k] = n
	}
	u := &unstructured.Unstructured{Object: obj}
	if md, ok := b.c.Fields["metadata"]; ok && md != nil {
		m, ok := md.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: expects an object, got %s", b.f.path("metadata"), describe(md))
		}
		n, err := jsonValue(m)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.f.path("metadata"), err)
		}
		obj["metadata"] = n
	}
	meta := b.meta()
	// metadata.labels and metadata.annotations written inside metadata:
	// merge under the top-level ones.
	labels := mergeStrings(u.GetLabels(), meta.Labels)
	annotations := mergeStrings(u.GetAnnotations(), meta.Annotations)
	u.SetName(meta.Name)
	u.SetNamespace(meta.Namespace)
	u.SetLabels(labels)
	if len(annotations) > 0 {
		u.SetAnnotations(annotations)
	}
	if len(meta.OwnerReferences) > 0 {
		u.SetOwnerReferences(meta.OwnerReferences)
	}
	u.SetAPIVersion(b.c.GVK.GroupVersion().String())
	u.SetKind(b.c.GVK.Kind)
	return u, nil
}

func mergeStrings(base, over map[string]string) map[string]string {
	if len(base) == 0 && len(over) == 0 {
		return nil
	}
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

package render

import (
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Workloads: deployments, statefulSets, jobs, cronJobs, pods. They share the
// simplified pod fields (image, port, env, probes, …), built into one
// container, and select their pods by owner and child name.

// Defaults of the workload fields.
const (
	// DefaultContainerName is the container's name when containerName is
	// not set and the child's name is not a valid container name.
	DefaultContainerName = "main"
	// DefaultJobBackoffLimit is the original katalogs' Job backoffLimit.
	DefaultJobBackoffLimit = 3
)

func init() {
	register("deployments", &Kind{Build: buildDeployment, Drift: driftDeployment})
	register("statefulSets", &Kind{Build: buildStatefulSet, Drift: driftStatefulSet})
	register("jobs", &Kind{Build: buildJob})
	register("cronJobs", &Kind{Build: buildCronJob, Drift: driftCronJob})
	register("pods", &Kind{Build: buildPod, Drift: driftPod, Lifecycle: Recreate})
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
		WorkingDir:      f.str("workingDirectory"),
	}
	if port := f.int32("port", 1, 65535); port != nil {
		c.Ports = []corev1.ContainerPort{{ContainerPort: *port, Protocol: b.protocol()}}
	}
	c.Env = b.env()
	f.into("envFrom", &c.EnvFrom)
	f.into("resources", &c.Resources)
	f.into("livenessProbe", &c.LivenessProbe)
	f.into("readinessProbe", &c.ReadinessProbe)
	f.into("startupProbe", &c.StartupProbe)
	f.into("securityContext", &c.SecurityContext)
	f.into("volumeMounts", &c.VolumeMounts)
	return c
}

// envSources are the valueFrom sources an entry of the map form of env may
// give directly (`API_KEY: {secretKeyRef: …}`), as upstream katalogs write.
var envSources = []string{"secretKeyRef", "configMapKeyRef", "fieldRef", "resourceFieldRef"}

// env reads env as Kubernetes writes it (a list of {name, value|valueFrom})
// or as the map form of the original katalogs, keyed by name: a scalar is
// the value; a map holds value, valueFrom, or a valueFrom source directly.
// Map entries are sorted by name so the container does not drift.
func (b *builder) env() []corev1.EnvVar {
	f := &b.f
	m, ok := f.fields["env"].(map[string]any)
	if !ok {
		var out []corev1.EnvVar
		f.into("env", &out)
		return out
	}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]corev1.EnvVar, 0, len(m))
	for _, name := range names {
		v := m[name]
		if s, ok := scalarString(v); ok {
			out = append(out, corev1.EnvVar{Name: name, Value: s})
			continue
		}
		entry, ok := v.(map[string]any)
		if !ok {
			f.fail("env."+name, "expects a value or an object with value, valueFrom or one of %s, got %s", strings.Join(envSources, ", "), describe(v))
			return nil
		}
		spec := map[string]any{"name": name}
		from := map[string]any{}
		for k, x := range entry {
			if containsString(envSources, k) {
				from[k] = x
			} else {
				spec[k] = x
			}
		}
		if len(from) > 0 {
			if _, both := spec["valueFrom"]; both {
				f.fail("env."+name, "give either valueFrom or %s directly, not both", strings.Join(envSources, "/"))
				return nil
			}
			spec["valueFrom"] = from
		}
		var ev corev1.EnvVar
		sub := fieldReader{fields: map[string]any{name: spec}, base: f.path("env")}
		sub.into(name, &ev)
		if sub.err != nil {
			f.err = sub.err
			return nil
		}
		out = append(out, ev)
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (b *builder) protocol() corev1.Protocol {
	p := b.f.str("protocol")
	if p == "" {
		return corev1.ProtocolTCP
	}
	return corev1.Protocol(strings.ToUpper(p))
}

func buildDeployment(b *builder) (client.Object, error) {
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
	}, nil
}

func buildStatefulSet(b *builder) (client.Object, error) {
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
	return s, nil
}

func (b *builder) backoffLimit() *int32 {
	backoff := b.f.int32("backoffLimit", 0, 1<<31-1)
	if backoff == nil {
		v := int32(DefaultJobBackoffLimit)
		backoff = &v
	}
	return backoff
}

func buildJob(b *builder) (client.Object, error) {
	meta := b.meta()
	return &batchv1.Job{
		TypeMeta:   typeMeta("batch/v1", "Job"),
		ObjectMeta: meta,
		Spec: batchv1.JobSpec{
			BackoffLimit:            b.backoffLimit(),
			TTLSecondsAfterFinished: b.f.int32("ttlSecondsAfterFinished", 0, 1<<31-1),
			Template:                b.podTemplate(meta, b.selectorLabels(), corev1.RestartPolicyNever),
		},
	}, nil
}

// concurrencyPolicy accepts the API's values and the original katalogs'
// lower-case ones (allow, forbid, replace).
func (b *builder) concurrencyPolicy() batchv1.ConcurrencyPolicy {
	p := b.f.str("concurrencyPolicy")
	for _, v := range []batchv1.ConcurrencyPolicy{batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent} {
		if strings.EqualFold(p, string(v)) {
			return v
		}
	}
	return batchv1.ConcurrencyPolicy(p)
}

func buildCronJob(b *builder) (client.Object, error) {
	meta := b.meta()
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
			Schedule:                   b.f.str("schedule"),
			Suspend:                    b.f.bool("suspend"),
			ConcurrencyPolicy:          b.concurrencyPolicy(),
			StartingDeadlineSeconds:    b.f.int64("startingDeadlineSeconds"),
			SuccessfulJobsHistoryLimit: b.f.int32("successfulJobsHistoryLimit", 0, 1<<31-1),
			FailedJobsHistoryLimit:     b.f.int32("failedJobsHistoryLimit", 0, 1<<31-1),
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: jobLabels},
				Spec: batchv1.JobSpec{
					BackoffLimit: b.backoffLimit(),
					Template:     b.podTemplate(meta, sel, corev1.RestartPolicyNever),
				},
			},
		},
	}, nil
}

func buildPod(b *builder) (client.Object, error) {
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
	}, nil
}

// ---- drift ----

func driftDeployment(d *Drift, m Managed, want, live client.Object) {
	w, g := want.(*appsv1.Deployment), live.(*appsv1.Deployment)
	if m.has("replicas") && !eqInt32(w.Spec.Replicas, g.Spec.Replicas) {
		g.Spec.Replicas = w.Spec.Replicas
		d.add("replicas")
	}
	diffTemplate(d, m, &w.Spec.Template, &g.Spec.Template)
}

func driftStatefulSet(d *Drift, m Managed, want, live client.Object) {
	w, g := want.(*appsv1.StatefulSet), live.(*appsv1.StatefulSet)
	if m.has("replicas") && !eqInt32(w.Spec.Replicas, g.Spec.Replicas) {
		g.Spec.Replicas = w.Spec.Replicas
		d.add("replicas")
	}
	diffTemplate(d, m, &w.Spec.Template, &g.Spec.Template)
}

func driftCronJob(d *Drift, m Managed, want, live client.Object) {
	w, g := want.(*batchv1.CronJob), live.(*batchv1.CronJob)
	if m.has("schedule") && w.Spec.Schedule != g.Spec.Schedule {
		g.Spec.Schedule = w.Spec.Schedule
		d.add("schedule")
	}
	if m.has("suspend") && !eqBool(w.Spec.Suspend, g.Spec.Suspend) {
		g.Spec.Suspend = w.Spec.Suspend
		d.add("suspend")
	}
	if m.has("concurrencyPolicy") && w.Spec.ConcurrencyPolicy != g.Spec.ConcurrencyPolicy {
		g.Spec.ConcurrencyPolicy = w.Spec.ConcurrencyPolicy
		d.add("concurrencyPolicy")
	}
	if m.has("startingDeadlineSeconds") && !eqInt64(w.Spec.StartingDeadlineSeconds, g.Spec.StartingDeadlineSeconds) {
		g.Spec.StartingDeadlineSeconds = w.Spec.StartingDeadlineSeconds
		d.add("startingDeadlineSeconds")
	}
	if m.has("successfulJobsHistoryLimit") && !eqInt32(w.Spec.SuccessfulJobsHistoryLimit, g.Spec.SuccessfulJobsHistoryLimit) {
		g.Spec.SuccessfulJobsHistoryLimit = w.Spec.SuccessfulJobsHistoryLimit
		d.add("successfulJobsHistoryLimit")
	}
	if m.has("failedJobsHistoryLimit") && !eqInt32(w.Spec.FailedJobsHistoryLimit, g.Spec.FailedJobsHistoryLimit) {
		g.Spec.FailedJobsHistoryLimit = w.Spec.FailedJobsHistoryLimit
		d.add("failedJobsHistoryLimit")
	}
	if m.has("backoffLimit") && !eqInt32(w.Spec.JobTemplate.Spec.BackoffLimit, g.Spec.JobTemplate.Spec.BackoffLimit) {
		g.Spec.JobTemplate.Spec.BackoffLimit = w.Spec.JobTemplate.Spec.BackoffLimit
		d.add("backoffLimit")
	}
	if !subsetMap(w.Spec.JobTemplate.Labels, g.Spec.JobTemplate.Labels) {
		g.Spec.JobTemplate.Labels = mergeMap(g.Spec.JobTemplate.Labels, w.Spec.JobTemplate.Labels)
		d.add("labels")
	}
	diffTemplate(d, m, &w.Spec.JobTemplate.Spec.Template, &g.Spec.JobTemplate.Spec.Template)
}

// driftPod compares a Pod's spec by containment (admission adds volumes,
// mounts and tolerations to running pods); any difference recreates it.
func driftPod(d *Drift, m Managed, want, live client.Object) {
	w, g := want.(*corev1.Pod), live.(*corev1.Pod)
	diffPodSpec(d, m, &w.Spec, &g.Spec, true)
}

func diffTemplate(d *Drift, m Managed, w, g *corev1.PodTemplateSpec) {
	if !subsetMap(w.Labels, g.Labels) {
		g.Labels = mergeMap(g.Labels, w.Labels)
		d.add("podLabels")
	}
	if !subsetMap(w.Annotations, g.Annotations) {
		g.Annotations = mergeMap(g.Annotations, w.Annotations)
		d.add("podAnnotations")
	}
	diffPodSpec(d, m, &w.Spec, &g.Spec, false)
}

// diffPodSpec compares the pod-level and container-level simplified fields.
// For a live Pod (pod=true) lists are compared by containment: admission
// adds volumes, mounts and tolerations to running pods.
func diffPodSpec(d *Drift, m Managed, w, g *corev1.PodSpec, pod bool) {
	list := subset
	if pod {
		list = contains
	}
	if m.has("serviceAccountName") && w.ServiceAccountName != g.ServiceAccountName {
		g.ServiceAccountName = w.ServiceAccountName
		d.add("serviceAccountName")
	}
	if m.has("nodeSelector") && !eqStringMap(w.NodeSelector, g.NodeSelector) {
		g.NodeSelector = w.NodeSelector
		d.add("nodeSelector")
	}
	if m.has("imagePullSecrets") && !subset(w.ImagePullSecrets, g.ImagePullSecrets) {
		g.ImagePullSecrets = w.ImagePullSecrets
		d.add("imagePullSecrets")
	}
	if m.has("tolerations") && !list(w.Tolerations, g.Tolerations) {
		g.Tolerations = w.Tolerations
		d.add("tolerations")
	}
	if m.has("volumes") && !list(w.Volumes, g.Volumes) {
		g.Volumes = w.Volumes
		d.add("volumes")
	}
	if m.has("podSecurityContext") && !subset(w.SecurityContext, g.SecurityContext) {
		g.SecurityContext = w.SecurityContext
		d.add("podSecurityContext")
	}
	if m.has("restartPolicy") && w.RestartPolicy != g.RestartPolicy {
		g.RestartPolicy = w.RestartPolicy
		d.add("restartPolicy")
	}
	wc := &w.Containers[0]
	var gc *corev1.Container
	for i := range g.Containers {
		if g.Containers[i].Name == wc.Name {
			gc = &g.Containers[i]
		}
	}
	if gc == nil {
		// The container was renamed or removed: ours replaces them.
		g.Containers = []corev1.Container{*wc}
		d.add("containerName")
		return
	}
	diffContainer(d, m, wc, gc, list)
}

func diffContainer(d *Drift, m Managed, wc, gc *corev1.Container, list func(want, got any) bool) {
	if m.has("image") && wc.Image != gc.Image {
		gc.Image = wc.Image
		d.add("image")
	}
	if m.has("imagePullPolicy") && wc.ImagePullPolicy != gc.ImagePullPolicy {
		gc.ImagePullPolicy = wc.ImagePullPolicy
		d.add("imagePullPolicy")
	}
	if m.has("command") && !eqStrings(wc.Command, gc.Command) {
		gc.Command = wc.Command
		d.add("command")
	}
	if m.has("args") && !eqStrings(wc.Args, gc.Args) {
		gc.Args = wc.Args
		d.add("args")
	}
	if m.has("workingDirectory") && wc.WorkingDir != gc.WorkingDir {
		gc.WorkingDir = wc.WorkingDir
		d.add("workingDirectory")
	}
	if (m.has("port") || m.has("protocol")) && !subset(wc.Ports, gc.Ports) {
		gc.Ports = wc.Ports
		d.add("port")
	}
	if m.has("env") && !list(wc.Env, gc.Env) {
		gc.Env = wc.Env
		d.add("env")
	}
	if m.has("envFrom") && !list(wc.EnvFrom, gc.EnvFrom) {
		gc.EnvFrom = wc.EnvFrom
		d.add("envFrom")
	}
	if m.has("resources") && !subset(wc.Resources, gc.Resources) {
		gc.Resources = wc.Resources
		d.add("resources")
	}
	if m.has("livenessProbe") && !subset(wc.LivenessProbe, gc.LivenessProbe) {
		gc.LivenessProbe = wc.LivenessProbe
		d.add("livenessProbe")
	}
	if m.has("readinessProbe") && !subset(wc.ReadinessProbe, gc.ReadinessProbe) {
		gc.ReadinessProbe = wc.ReadinessProbe
		d.add("readinessProbe")
	}
	if m.has("startupProbe") && !subset(wc.StartupProbe, gc.StartupProbe) {
		gc.StartupProbe = wc.StartupProbe
		d.add("startupProbe")
	}
	if m.has("securityContext") && !subset(wc.SecurityContext, gc.SecurityContext) {
		gc.SecurityContext = wc.SecurityContext
		d.add("securityContext")
	}
	if m.has("volumeMounts") && !list(wc.VolumeMounts, gc.VolumeMounts) {
		gc.VolumeMounts = wc.VolumeMounts
		d.add("volumeMounts")
	}
}

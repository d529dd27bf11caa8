package render

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Workloads: deployments, replicaSets, statefulSets, jobs, cronJobs, pods. They share the
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
	register("replicaSets", &Kind{Build: buildReplicaSet, Drift: driftReplicaSet})
	register("statefulSets", &Kind{Build: buildStatefulSet, Drift: driftStatefulSet})
	register("jobs", &Kind{Build: buildJob})
	register("cronJobs", &Kind{Build: buildCronJob, Drift: driftCronJob})
	register("pods", &Kind{Build: buildPod, Drift: driftPod, Lifecycle: Recreate})
}

func buildDeployment(b *builder) (client.Object, error) {
	meta := b.meta()
	sel := b.selectorLabels()
	d := &appsv1.Deployment{
		TypeMeta:   typeMeta("apps/v1", "Deployment"),
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas: b.f.int32("replicas", 0, 1<<31-1),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: b.podTemplate(meta, sel, ""),
		},
	}
	if ru, ok := b.rollingUpdate(); ok {
		d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: ru}
	}
	return d, nil
}

// rollingUpdate reads rollingUpdate: {maxSurge, maxUnavailable} (a profile
// is expanded at load): each a number of pods or a percentage.
func (b *builder) rollingUpdate() (*appsv1.RollingUpdateDeployment, bool) {
	m, ok := b.f.fields["rollingUpdate"].(map[string]any)
	if !ok {
		return nil, false
	}
	sub := fieldReader{fields: m, base: b.f.path("rollingUpdate")}
	ru := &appsv1.RollingUpdateDeployment{MaxSurge: sub.intOrString("maxSurge"), MaxUnavailable: sub.intOrString("maxUnavailable")}
	for k := range m {
		if k != "maxSurge" && k != "maxUnavailable" {
			sub.fail(k, "unknown field of rollingUpdate; it takes maxSurge and maxUnavailable (or a profile)")
		}
	}
	if sub.err != nil {
		b.f.err = sub.err
	}
	return ru, true
}

func buildReplicaSet(b *builder) (client.Object, error) {
	meta := b.meta()
	sel := b.selectorLabels()
	return &appsv1.ReplicaSet{
		TypeMeta:   typeMeta("apps/v1", "ReplicaSet"),
		ObjectMeta: meta,
		Spec: appsv1.ReplicaSetSpec{
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
	b.volumeClaimTemplates(s)
	return s, nil
}

// volumeClaimTemplates reads the claims as Kubernetes writes them, or in
// upstream's short form (pkg/types/types_statefulset.go
// VolumeClaimTemplateSource): {name (data), storageClass, storageSize,
// mountPath (/data), accessModes ([ReadWriteOnce])}, each mounted into the
// container at mountPath.
func (b *builder) volumeClaimTemplates(s *appsv1.StatefulSet) {
	items, ok := b.f.fields["volumeClaimTemplates"].([]any)
	if !ok {
		b.f.into("volumeClaimTemplates", &s.Spec.VolumeClaimTemplates)
		return
	}
	short := func(m map[string]any) bool {
		for _, k := range []string{"storageClass", "storageSize", "mountPath"} {
			if _, ok := m[k]; ok {
				return true
			}
		}
		return false
	}
	c := &s.Spec.Template.Spec.Containers[0]
	for i, item := range items {
		m, ok := item.(map[string]any)
		if !ok || !short(m) {
			var pvc corev1.PersistentVolumeClaim
			sub := fieldReader{fields: map[string]any{"item": item}, base: fmt.Sprintf("%s[%d]", b.f.path("volumeClaimTemplates"), i)}
			sub.into("item", &pvc)
			if sub.err != nil && b.f.err == nil {
				b.f.err = sub.err
			}
			s.Spec.VolumeClaimTemplates = append(s.Spec.VolumeClaimTemplates, pvc)
			continue
		}
		f := fieldReader{fields: m, base: fmt.Sprintf("%s[%d]", b.f.path("volumeClaimTemplates"), i)}
		for k := range m {
			if !containsString([]string{"name", "storageClass", "storageSize", "mountPath", "accessModes"}, k) {
				f.fail(k, "unknown field of a volume claim template; write name, storageClass, storageSize, mountPath, accessModes (or the claim as Kubernetes writes it)")
			}
		}
		name, mount := f.str("name"), f.str("mountPath")
		if name == "" {
			name = "data"
		}
		if mount == "" {
			mount = "/data"
		}
		pvc := corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}}
		for _, am := range f.strList("accessModes") {
			pvc.Spec.AccessModes = append(pvc.Spec.AccessModes, corev1.PersistentVolumeAccessMode(am))
		}
		if len(pvc.Spec.AccessModes) == 0 {
			pvc.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
		}
		if sc := f.str("storageClass"); sc != "" {
			pvc.Spec.StorageClassName = &sc
		}
		if size := f.str("storageSize"); size != "" {
			q, err := resource.ParseQuantity(size)
			if err != nil {
				f.fail("storageSize", "%q is not a quantity such as 10Gi: %v", size, err)
			} else {
				pvc.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: q}
			}
		}
		if f.err != nil && b.f.err == nil {
			b.f.err = f.err
		}
		s.Spec.VolumeClaimTemplates = append(s.Spec.VolumeClaimTemplates, pvc)
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: mount})
	}
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
	if m.has("rollingUpdate") && !subset(w.Spec.Strategy, g.Spec.Strategy) {
		g.Spec.Strategy = w.Spec.Strategy
		d.add("rollingUpdate")
	}
	diffTemplate(d, m, &w.Spec.Template, &g.Spec.Template)
}

func driftReplicaSet(d *Drift, m Managed, want, live client.Object) {
	w, g := want.(*appsv1.ReplicaSet), live.(*appsv1.ReplicaSet)
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

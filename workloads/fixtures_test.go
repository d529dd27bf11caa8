package workloads

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Valid objects of every simulated kind, as a katalog's children would be.

func podTemplate(name string, command ...string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "main", Image: "busybox:1.36", Command: command}},
		},
	}
}

func selector(name string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
}

func newDeployment(ns, name string, n int32) *appsv1.Deployment {
	t := podTemplate(name)
	t.Spec.RestartPolicy = corev1.RestartPolicyAlways
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       appsv1.DeploymentSpec{Replicas: &n, Selector: selector(name), Template: t},
	}
}

func newStatefulSet(ns, name string, n int32) *appsv1.StatefulSet {
	t := podTemplate(name)
	t.Spec.RestartPolicy = corev1.RestartPolicyAlways
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       appsv1.StatefulSetSpec{Replicas: &n, Selector: selector(name), Template: t, ServiceName: name},
	}
}

func newReplicaSet(ns, name string, n int32) *appsv1.ReplicaSet {
	t := podTemplate(name)
	t.Spec.RestartPolicy = corev1.RestartPolicyAlways
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       appsv1.ReplicaSetSpec{Replicas: &n, Selector: selector(name), Template: t},
	}
}

func newDaemonSet(ns, name string) *appsv1.DaemonSet {
	t := podTemplate(name)
	t.Spec.RestartPolicy = corev1.RestartPolicyAlways
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       appsv1.DaemonSetSpec{Selector: selector(name), Template: t},
	}
}

func newJob(ns, name string, command ...string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       batchv1.JobSpec{Template: podTemplate(name, command...)},
	}
}

func newPod(ns, name string) *corev1.Pod {
	t := podTemplate(name)
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: t.Labels}, Spec: t.Spec}
}

func newClaim(ns, name, size string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		},
	}
}

func annotate(obj client.Object, k, v string) client.Object {
	obj.SetAnnotations(map[string]string{k: v})
	return obj
}

// everyKind is one object of each simulated kind, plus a Job marked to fail.
func everyKind(ns string) []client.Object {
	return []client.Object{
		newDeployment(ns, "web", 3),
		newStatefulSet(ns, "db", 2),
		newReplicaSet(ns, "rs", 2),
		newDaemonSet(ns, "agent"),
		newJob(ns, "build", "sh", "-c", "echo building"),
		annotate(newJob(ns, "broken"), AnnotationFail, "tests exited 2"),
		newPod(ns, "one"),
		newClaim(ns, "data", "5Gi"),
	}
}

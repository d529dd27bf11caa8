package workloads

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// checkSimulated reads the objects of everyKind(ns) back through c and
// asserts the status each must have after a step.
func checkSimulated(t *testing.T, c client.Client, ns string) {
	t.Helper()
	if err := simulated(c, ns); err != nil {
		t.Error(err)
	}
}

// simulated says how the objects of everyKind(ns) read through c differ
// from the status each must have after a step; nil when none does.
func simulated(c client.Client, ns string) error {
	ctx := context.Background()
	var problems []string
	errorf := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	var getErr error
	get := func(name string, obj client.Object) {
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, obj); err != nil && getErr == nil {
			getErr = fmt.Errorf("get %s: %w", name, err)
		}
	}

	var d appsv1.Deployment
	get("web", &d)
	if s := d.Status; s.Replicas != 3 || s.ReadyReplicas != 3 || s.AvailableReplicas != 3 || s.UpdatedReplicas != 3 || !deploymentCondition(&d, appsv1.DeploymentAvailable) {
		errorf("deployment status = %+v, want 3 replicas ready, available and updated, Available=True", s)
	}
	var st appsv1.StatefulSet
	get("db", &st)
	if s := st.Status; s.Replicas != 2 || s.ReadyReplicas != 2 || s.AvailableReplicas != 2 || s.CurrentReplicas != 2 {
		errorf("statefulset status = %+v, want 2 replicas ready, available, current", s)
	}
	var rs appsv1.ReplicaSet
	get("rs", &rs)
	if s := rs.Status; s.Replicas != 2 || s.ReadyReplicas != 2 || s.AvailableReplicas != 2 {
		errorf("replicaset status = %+v, want 2 replicas ready and available", s)
	}
	var ds appsv1.DaemonSet
	get("agent", &ds)
	if s := ds.Status; s.DesiredNumberScheduled != 1 || s.NumberReady != 1 || s.NumberAvailable != 1 {
		errorf("daemonset status = %+v, want one pod scheduled, ready, available", s)
	}
	var ok batchv1.Job
	get("build", &ok)
	if s := ok.Status; s.Succeeded != 1 || s.CompletionTime == nil || s.StartTime == nil || !hasJobCondition(&ok, batchv1.JobComplete) || hasJobCondition(&ok, batchv1.JobFailed) {
		errorf("job build status = %+v, want succeeded 1, completionTime, Complete=True", s)
	}
	var bad batchv1.Job
	get("broken", &bad)
	if s := bad.Status; s.Succeeded != 0 || s.Failed != 7 || s.CompletionTime != nil || !hasJobCondition(&bad, batchv1.JobFailed) || hasJobCondition(&bad, batchv1.JobComplete) {
		errorf("job broken status = %+v, want failed 7 (backoffLimit 6 + 1), Failed=True, no completion", s)
	}
	for _, c := range bad.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Message != "tests exited 2" {
			errorf("Failed condition message = %q, want the annotation's value", c.Message)
		}
	}
	var p corev1.Pod
	get("one", &p)
	if p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) != 1 || !p.Status.ContainerStatuses[0].Ready || !podReady(&p) {
		errorf("pod status = %+v, want Running, its container ready, Ready=True", p.Status)
	}
	var pvc corev1.PersistentVolumeClaim
	get("data", &pvc)
	if q := pvc.Status.Capacity[corev1.ResourceStorage]; pvc.Status.Phase != corev1.ClaimBound || q.String() != "5Gi" {
		errorf("pvc status = %+v, want Bound with capacity 5Gi", pvc.Status)
	}
	if getErr != nil {
		return getErr
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

func deploymentCondition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func hasJobCondition(j *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

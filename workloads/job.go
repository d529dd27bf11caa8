package workloads

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// job completes a Job — every completion succeeded, as the job controller
// reports it (SuccessCriteriaMet, then Complete, with completionTime) — or,
// marked to fail (see Fails), fails it as a Job whose pods exhausted its
// backoffLimit does (FailureTarget, then Failed). A suspended Job does not
// run; a finished Job is left alone.
func job(j *batchv1.Job, s simulation) bool {
	if (j.Spec.Suspend != nil && *j.Spec.Suspend) || finished(j) {
		return false
	}
	old := j.Status.DeepCopy()
	if j.Status.StartTime == nil {
		j.Status.StartTime = &s.now
	}
	zero := int32(0)
	j.Status.Active, j.Status.Ready, j.Status.Terminating = 0, &zero, &zero
	if failed, msg := Fails(j, &j.Spec.Template.Spec, &j.Spec.Template.ObjectMeta); failed {
		backoff := int32(6)
		if j.Spec.BackoffLimit != nil {
			backoff = *j.Spec.BackoffLimit
		}
		j.Status.Failed = backoff + 1
		if msg == "" {
			msg = "Job has reached the specified backoff limit"
		}
		j.Status.Conditions = append(j.Status.Conditions,
			jobCondition(batchv1.JobFailureTarget, batchv1.JobReasonBackoffLimitExceeded, msg, s),
			jobCondition(batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded, msg, s))
		return !equality.Semantic.DeepEqual(old, &j.Status)
	}
	n := int32(1)
	if j.Spec.Completions != nil {
		n = *j.Spec.Completions
	}
	j.Status.Succeeded = n
	if j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion && n > 0 {
		j.Status.CompletedIndexes = "0"
		if n > 1 {
			j.Status.CompletedIndexes = fmt.Sprintf("0-%d", n-1)
		}
	}
	j.Status.CompletionTime = &s.now
	j.Status.Conditions = append(j.Status.Conditions,
		jobCondition(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonCompletionsReached, "Reached expected number of succeeded pods", s),
		jobCondition(batchv1.JobComplete, batchv1.JobReasonCompletionsReached, "Reached expected number of succeeded pods", s))
	return !equality.Semantic.DeepEqual(old, &j.Status)
}

func jobCondition(t batchv1.JobConditionType, reason, msg string, s simulation) batchv1.JobCondition {
	return batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg, LastProbeTime: s.now, LastTransitionTime: s.now}
}

// finished reports a Job that completed or failed.
func finished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

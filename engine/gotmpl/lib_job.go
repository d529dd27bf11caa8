package gotmpl

import "github.com/orkspace/orkestra-cel/engine/notes"

// The job functions of a CronJob child (upstream pkg/note/kube_job.go,
// docs/13-job.md).

var jobFamily = family{name: "job (a CronJob or Job child)", functions: []*function{
	objectFunction("cronJobLastScheduleTime", notes.CronJobLastScheduleTime, "`cronJobLastScheduleTime`"),
	objectFunction("cronJobNextScheduleTime", notes.CronJobNextScheduleTime, "`cronJobNextScheduleTime`"),
	objectFunction("cronJobLastSuccessTime", notes.CronJobLastSuccessTime, "`cronJobLastSuccessTime`"),
	objectFunction("cronJobActiveCount", notes.CronJobActiveCount, "`cronJobActiveCount`"),
	objectFunction("jobActive", notes.JobActive, "`jobActive`"),
	objectFunction("jobSucceeded", notes.JobSucceeded, "`jobSucceeded`"),
	objectFunction("jobFailed", notes.JobFailed, "`jobFailed` (of a Job child: status.active, succeeded, failed above 0)"),
}}

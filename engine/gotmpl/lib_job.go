package gotmpl

import "github.com/orkspace/orkestra-cel/engine/notes"

// The job functions of a CronJob child (upstream pkg/note/kube_job.go,
// docs/13-job.md).

var jobFamily = family{name: "job (a CronJob child)", functions: []*function{
	objectFunction("cronJobLastScheduleTime", notes.CronJobLastScheduleTime, "`cronJobLastScheduleTime`"),
	objectFunction("cronJobNextScheduleTime", notes.CronJobNextScheduleTime, "`cronJobNextScheduleTime`"),
}}

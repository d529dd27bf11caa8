package gotmpl

import (
	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/notes"
)

// The original engine's functions over children, cron strings and the clock,
// registered with their original signatures (implemented in engine/notes,
// which the CEL library shares). The clock readers see engine.Now().
func init() {
	for name, f := range map[string]*funcInfo{
		"boolTernary":             {fn: notes.BoolTernary, pipeFirst: true},
		"typeMap":                 {fn: notes.TypeMap},
		"camelToKebab":            {fn: notes.CamelToKebab},
		"domainHost":              {fn: notes.DomainHost},
		"cronMinute":              {fn: notes.CronMinute},
		"cronHour":                {fn: notes.CronHour},
		"cronDom":                 {fn: notes.CronDom},
		"cronMonth":               {fn: notes.CronMonth},
		"cronDow":                 {fn: notes.CronDow},
		"cronValid":               {fn: notes.CronValid},
		"cronDescribe":            {fn: notes.CronDescribe},
		"allReplicasReady":        {fn: notes.AllReplicasReady},
		"readyReplicas":           {fn: notes.ReadyReplicas},
		"resourceExists":          {fn: notes.ResourceExists},
		"phase":                   {fn: notes.Phase},
		"resourceCPU":             {fn: notes.ResourceCPU},
		"resourceMemory":          {fn: notes.ResourceMemory},
		"cronJobLastScheduleTime": {fn: notes.CronJobLastScheduleTime},
		"cronJobNextScheduleTime": {fn: notes.CronJobNextScheduleTime},
		"podCount":                {fn: notes.PodCount},
		"readyPodCount":           {fn: notes.ReadyPodCount},
		"podNames":                {fn: notes.PodNames},
		"podMaxRestarts":          {fn: notes.PodMaxRestarts},
		"hasCrashingPod":          {fn: notes.HasCrashingPod},
		"podContainerReasons":     {fn: notes.PodContainerReasons},
		"weekday":                 {fn: func() bool { return notes.Weekday(engine.Now()) }, clock: clockMidnight},
		"timeInWindow":            {fn: func(after, before string) bool { return notes.TimeInWindow(engine.Now(), after, before) }, clock: clockWindow},
		"nextCron":                {fn: func(expr string) string { return notes.NextCron(engine.Now(), expr) }, clock: clockCron},
	} {
		funcs[name] = f
		funcMap[name] = f.fn
	}
}

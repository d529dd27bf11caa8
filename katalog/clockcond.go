package katalog

import (
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// clockCondition decodes a `time:`, `dayOfWeek:` or `cron:` condition into
// c, reporting true when n is one. Such a condition reads the clock, not
// the object, so it has no field.
func (d *decoder) clockCondition(c *Condition, o object, n *yaml.Node, path string) bool {
	var kinds []string
	for _, k := range []string{"time", "dayOfWeek", "cron"} {
		if o.has(k) {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		if o.has("duration") {
			d.errorf(o["duration"].key, path+".duration", "duration belongs to a cron: condition (how long it holds after the schedule fires)")
		}
		return false
	}
	if len(kinds) > 1 || o.has("field") || o.has("operator") {
		what := strings.Join(kinds, ", ")
		if o.has("field") || o.has("operator") {
			what += " and a field condition"
		}
		d.errorf(n, path, "a condition is one test: %s are in one entry; write one condition per test (the original engine used the first and ignored the rest)", what)
		return true
	}
	switch kinds[0] {
	case "time":
		to := d.mapping(o["time"].value, path+".time", timeKeys, nil)
		c.Time = &TimeWindow{After: d.str(to["after"].value, path+".time.after"), Before: d.str(to["before"].value, path+".time.before"), Pos: d.pos(Resolve(o["time"].value))}
		for _, k := range []string{"after", "before"} {
			if v := to[k]; v.value != nil {
				if _, err := time.Parse("15:04", d.str(v.value, path+".time."+k)); err != nil {
					d.errorf(v.value, path+".time."+k, "time.%s must be HH:MM (24-hour, UTC), got %q; the original engine treated the condition as always false", k, d.str(v.value, path+".time."+k))
				}
			}
		}
		if !to.has("after") && !to.has("before") {
			d.errorf(o["time"].value, path+".time", "a time: condition needs after: and/or before: (\"HH:MM\")")
		}
	case "dayOfWeek":
		do := d.mapping(o["dayOfWeek"].value, path+".dayOfWeek", dayOfWeekKeys, nil)
		w := &DayOfWeek{Pos: d.pos(Resolve(o["dayOfWeek"].value))}
		if do.has("weekday") {
			b := d.boolean(do["weekday"].value, path+".dayOfWeek.weekday")
			w.Weekday = &b
		}
		if do.has("weekend") {
			b := d.boolean(do["weekend"].value, path+".dayOfWeek.weekend")
			w.Weekend = &b
		}
		for _, k := range []string{"in", "notIn"} {
			if !do.has(k) {
				continue
			}
			days := d.strList(do[k].value, path+".dayOfWeek."+k)
			for i, day := range days {
				if !isWeekdayName(day) {
					d.errorf(Resolve(do[k].value).Content[i], path+".dayOfWeek."+k, "%q is not a day of the week; write Monday … Sunday (the original engine never matched it)", day)
				}
			}
			if k == "in" {
				w.In = days
			} else {
				w.NotIn = days
			}
		}
		if len(do) != 1 {
			d.errorf(o["dayOfWeek"].value, path+".dayOfWeek", "a dayOfWeek: condition takes one of weekday:, weekend:, in: or notIn:")
		}
		c.DayOfWeek = w
	case "cron":
		c.Cron = d.str(o["cron"].value, path+".cron")
		c.FieldPos = d.pos(o["cron"].value)
	}
	if o.has("duration") {
		if c.Cron == "" {
			d.errorf(o["duration"].key, path+".duration", "duration belongs to a cron: condition (how long it holds after the schedule fires)")
		} else {
			dur, err := ParseDuration(d.str(o["duration"].value, path+".duration"))
			if err != nil {
				d.errorf(o["duration"].value, path+".duration", "%v", err)
			}
			c.Duration = dur
		}
	}
	return true
}

func isWeekdayName(s string) bool {
	for d := time.Sunday; d <= time.Saturday; d++ {
		if strings.EqualFold(s, d.String()) {
			return true
		}
	}
	return false
}

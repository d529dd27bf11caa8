package conformance

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/conversion"
)

// A conversion path that declares mayFail fails, by the katalog's own
// account, on some objects its source schema accepts. Those objects prove
// nothing about round trips or the protocol, and every check would fail on
// them, so they are left out of the round-trip, protocol and apiserver
// groups; static/may fail says how many, and why.

// acknowledged returns the path error of err when a path that declares
// mayFail failed.
func acknowledged(err error) *conversion.PathError {
	var pe *conversion.PathError
	if errors.As(err, &pe) && pe.Acknowledged() {
		return pe
	}
	return nil
}

// rejection is what one mayFail path rejected.
type rejection struct {
	path *engine.Path
	// byVersion counts the objects left out, by the version they are at.
	byVersion map[string]int
	example   string
}

// rejectedBy returns the error of the mayFail path that rejects o (at
// version v) on one of its round trips, as trip takes them; nil when none
// does.
func (r *runner) rejectedBy(ci *crdInfo, o map[string]any, v string) *conversion.PathError {
	for _, w := range ci.versions {
		if w == v {
			continue
		}
		if _, ok := ci.conv.Route(v, w); !ok {
			continue
		}
		if res := r.trip(ci, o, v, w); res.err != nil {
			if pe := acknowledged(res.err); pe != nil {
				return pe
			}
		}
	}
	return nil
}

// leaveOut takes the objects a mayFail path rejects out of ci's samples,
// objects and pool, and records why.
func (r *runner) leaveOut(ci *crdInfo) {
	if ci.conv == nil || !declaresMayFail(ci.conv) {
		return
	}
	ci.rejections = map[*engine.Path]*rejection{}
	for _, v := range ci.versions {
		verdict := map[uintptr]bool{}
		rejected := func(o map[string]any) bool {
			id := reflect.ValueOf(o).Pointer()
			if out, ok := verdict[id]; ok {
				return out
			}
			pe := r.rejectedBy(ci, o, v)
			verdict[id] = pe != nil
			if pe != nil {
				rj := ci.rejections[pe.Path]
				if rj == nil {
					rj = &rejection{path: pe.Path, byVersion: map[string]int{}, example: objName(o) + ": " + pe.Err.Error()}
					ci.rejections[pe.Path] = rj
				}
				rj.byVersion[v]++
			}
			return pe != nil
		}
		generated := map[uintptr]bool{}
		for _, g := range ci.pool[v][:ci.generated[v]] {
			generated[reflect.ValueOf(g).Pointer()] = true
		}
		var objs []map[string]any
		for _, o := range ci.objects[v] {
			if !rejected(o) {
				objs = append(objs, o)
				continue
			}
			ci.leftOut[v]++
			if generated[reflect.ValueOf(o).Pointer()] {
				ci.generated[v]--
			}
		}
		ci.objects[v] = objs
		ci.samples[v] = keep(ci.samples[v], rejected)
		ci.pool[v] = keep(ci.pool[v], rejected)
	}
}

func declaresMayFail(conv *engine.Conversion) bool {
	for _, p := range conv.Paths {
		if p.MayFail() != "" {
			return true
		}
	}
	return false
}

func keep(objs []map[string]any, drop func(map[string]any) bool) []map[string]any {
	var out []map[string]any
	for _, o := range objs {
		if !drop(o) {
			out = append(out, o)
		}
	}
	return out
}

// leftOutNote is what a check over version v's objects adds to its note.
func (ci *crdInfo) leftOutNote(v string) string {
	if n := ci.leftOut[v]; n > 0 {
		return fmt.Sprintf("; %d left out: a mayFail path rejects them (see static/may fail %s)", n, ci.name)
	}
	return ""
}

// mayFailCheck is static/may fail: per path that declares mayFail, its
// reason and how many objects it rejected, by version, with the first
// error. It passes: the katalog says these conversions may fail.
func (r *runner) mayFailCheck(ci *crdInfo) {
	if ci.rejections == nil {
		return
	}
	c := r.begin(GroupStatic, "may fail "+ci.name)
	defer r.end(c)
	for _, v := range ci.versions {
		c.Cases += len(ci.objects[v]) + ci.leftOut[v]
	}
	var notes []string
	for _, p := range sortedPaths(ci.conv) {
		if p.MayFail() == "" {
			continue
		}
		rj := ci.rejections[p]
		if rj == nil {
			notes = append(notes, fmt.Sprintf("path %s→%s (mayFail %q): no object left out", p.From, p.To, p.MayFail()))
			continue
		}
		var counts []string
		for _, v := range ci.versions {
			if n := rj.byVersion[v]; n > 0 {
				counts = append(counts, fmt.Sprintf("%d of %d at %s", n, len(ci.objects[v])+ci.leftOut[v], v))
			}
		}
		notes = append(notes, fmt.Sprintf("path %s→%s (mayFail %q): left out %s, e.g. %s", p.From, p.To, p.MayFail(), strings.Join(counts, ", "), shorten(rj.example, 200)))
	}
	c.Note = strings.Join(notes, "; ")
}

func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

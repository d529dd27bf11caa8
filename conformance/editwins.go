package conformance

import (
	"fmt"
	"sort"
	"strings"

	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// maxEditsPerObject bounds the edits tried on one converted object.
const maxEditsPerObject = 4

// editWinsChecks checks, for every ordered pair of served versions, that an
// edit made at the other version wins over what the stash holds: a's
// objects are converted to b, a top-level spec field of the result is
// replaced by the one of another object of b (or removed), and the edited
// object read back at a must
//   - show the edit wherever the path computes from it: each field whose
//     value the edit changes when b converts to a without a stash takes
//     the edited value, and
//   - convert back to b unchanged: the edit is kept.
func (r *runner) editWinsChecks(ci *crdInfo) {
	r.eachPair(ci, func(a, b string) {
		if len(ci.objects[b]) == 0 {
			return
		}
		c := r.begin(GroupRoundTrip, fmt.Sprintf("%s edit at %s wins over %s", ci.name, b, a))
		edits := 0
		for i, o := range ci.objects[a] {
			oa := settle(deepCopyMap(o), ci.schemas[a])
			ob, err := r.to(ci, oa, b)
			if err != nil {
				continue // reported by the outputs check
			}
			donor := ci.objects[b][(i+1)%len(ci.objects[b])]
			for _, key := range editKeys(ob, donor) {
				edited := settle(withSpecField(ob, donor, key), ci.schemas[b])
				if ci.validate(b, stripped(edited)) != nil {
					continue // the edit is not a valid object at b
				}
				f := r.editWins(ci, a, b, ob, edited, key)
				if f != nil && f.acknowledged {
					continue // the edit makes an object a mayFail path rejects
				}
				edits++
				if f != nil {
					f.Object = oa
					c.fail(*f)
				} else {
					c.pass()
				}
			}
		}
		r.explain(c, ci, b, a)
		c.Note = fmt.Sprintf("%d edits of %d converted objects", edits, len(ci.objects[a]))
		r.end(c)
	})
}

// editWins checks one edit of spec.key on ob (converted from a to b).
func (r *runner) editWins(ci *crdInfo, a, b string, ob, edited map[string]any, key string) *Failure {
	how := fmt.Sprintf("%s→%s, spec.%s edited at %s, →%s", a, b, key, b, a)
	fail := func(field, format string, args ...any) *Failure {
		return &Failure{Field: field, Message: how + ": " + fmt.Sprintf(format, args...)}
	}
	failed := func(what string, err error) *Failure {
		f := fail("", "%s failed: %v", what, err)
		f.acknowledged = acknowledged(err) != nil
		return f
	}
	back, err := r.to(ci, edited, a)
	if err != nil {
		return failed("converting the edited object", err)
	}
	// What the path computes from the object, before and after the edit,
	// without any stash.
	before, err1 := r.to(ci, stripped(ob), a)
	after, err2 := r.to(ci, stripped(edited), a)
	if err := firstErr(err1, err2); err != nil {
		return failed("converting without the stash", err)
	}
	changed := diff(stripped(after), stripped(before))
	for _, d := range diff(stripped(back), stripped(after)) {
		for _, ch := range changed {
			if related(d.path, ch.path) {
				return fail(d.path, "the edit is not visible at %s: %s (the value computed from the edited object); the stash won over the edit", a, d)
			}
		}
	}
	again, err := r.to(ci, back, b)
	if err != nil {
		return failed("converting back to "+b, err)
	}
	if ds := diff(stripped(again), stripped(edited)); len(ds) > 0 {
		return fail(ds[0].path, "→%s does not keep the edit: %s", b, describeDiffs(ds))
	}
	return nil
}

// editKeys are the top-level spec fields where ob and donor differ.
func editKeys(ob, donor map[string]any) []string {
	os, _ := ob["spec"].(map[string]any)
	ds, _ := donor["spec"].(map[string]any)
	var keys []string
	for k, v := range os {
		if w, ok := ds[k]; !ok || !jsonval.Equal(v, w) {
			keys = append(keys, k)
		}
	}
	for k := range ds {
		if _, ok := os[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) > maxEditsPerObject {
		keys = keys[:maxEditsPerObject]
	}
	return keys
}

// withSpecField is a copy of ob whose spec.key is donor's (absent when
// donor has none).
func withSpecField(ob, donor map[string]any, key string) map[string]any {
	out := deepCopyMap(ob)
	spec, _ := out["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		out["spec"] = spec
	}
	ds, _ := donor["spec"].(map[string]any)
	if v, ok := ds[key]; ok {
		spec[key] = deepCopyMap(map[string]any{"v": v})["v"]
	} else {
		delete(spec, key)
	}
	return out
}

// related reports whether one field path is the other or lies below it.
func related(p, q string) bool {
	below := func(x, y string) bool {
		return x == y || strings.HasPrefix(x, y+".") || strings.HasPrefix(x, y+"[")
	}
	return below(p, q) || below(q, p)
}

// stripped is a copy of obj without the round-trip annotation.
func stripped(obj map[string]any) map[string]any {
	return withoutStash(deepCopyMap(obj))
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

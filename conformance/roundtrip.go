package conformance

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/jsonval"
	"github.com/orkspace/orkestra-cel/objgen"
)

// tripResult is what one object's A→B→A trip found.
type tripResult struct {
	// out: A→B failed, or its output is invalid at B.
	out *Failure
	// back: B→A failed, or A→B→A differs from A.
	back *Failure
	// err is the conversion error of a failed trip.
	err error
}

// trip converts o (at a) to b and back, as the API server would: each
// conversion followed by pruning and defaulting at the target version. When
// neither a nor b is the storage version it also takes the way the API
// server takes, through storage: a→S→b→S→a.
func (r *runner) trip(ci *crdInfo, o map[string]any, a, b string) tripResult {
	oa := settle(deepCopyMap(o), ci.schemas[a])
	var res tripResult
	chains := [][]string{{b, a}}
	if a != ci.storage && b != ci.storage {
		chains = append(chains, []string{ci.storage, b, ci.storage, a})
	}
	for _, chain := range chains {
		how := ""
		cur := oa
		for i, v := range chain {
			next, err := r.to(ci, cur, v)
			last := i == len(chain)-1
			if !last {
				how = a + "→" + strings.Join(chain[:i+1], "→")
			} else {
				how = a + "→" + strings.Join(chain, "→")
			}
			if err != nil {
				f := &Failure{Field: evalField(err), Message: fmt.Sprintf("%s: converting %s to %s failed: %v", how, ci.gv(versionOf(cur)), v, err)}
				if last {
					res.back = f
				} else {
					res.out = f
				}
				res.err = err
				return res
			}
			if v == b && !last {
				if err := ci.validate(b, next); err != nil {
					res.out = &Failure{Field: firstField(err), Message: fmt.Sprintf("%s: the %s object is invalid: %v", how, b, err)}
					return res
				}
			}
			cur = next
		}
		how = a + "→" + strings.Join(chain, "→")
		if ds := diff(cur, oa); len(ds) > 0 {
			res.back = &Failure{Field: ds[0].path, Message: fmt.Sprintf("%s does not give the object back: %s", how, describeDiffs(ds))}
			return res
		}
	}
	return res
}

// evalField names the target field of a failed expression, when the error
// says.
func evalField(err error) string {
	var ee *engine.EvalError
	if errors.As(err, &ee) {
		f := ee.Field
		if i := strings.Index(f, "]."); i >= 0 && strings.HasPrefix(f, "conversion.paths[") {
			f = f[i+2:]
		}
		return f
	}
	return ""
}

// outputChecks checks, for every ordered pair of served versions, that the
// A→B outputs validate against B.
func (r *runner) outputChecks(ci *crdInfo) {
	r.eachPair(ci, func(a, b string) {
		c := r.begin(GroupStatic, fmt.Sprintf("outputs %s %s→%s", ci.name, a, b))
		r.runTrips(c, ci, a, b, false, func(res tripResult) *Failure { return res.out })
	})
}

// roundTripChecks checks A→B→A for every ordered pair of served versions.
func (r *runner) roundTripChecks(ci *crdInfo) {
	r.eachPair(ci, func(a, b string) {
		c := r.begin(GroupRoundTrip, fmt.Sprintf("%s %s→%s→%s", ci.name, a, b, a))
		r.runTrips(c, ci, a, b, true, func(res tripResult) *Failure { return res.back })
		if a != ci.storage && b != ci.storage {
			c.Note += fmt.Sprintf("; directly and through %s", ci.storage)
		}
	})
}

// eachPair calls f for every ordered pair of served versions that has a
// route.
func (r *runner) eachPair(ci *crdInfo, f func(a, b string)) {
	if ci.conv == nil {
		return
	}
	for _, a := range ci.versions {
		for _, b := range ci.versions {
			if a == b {
				continue
			}
			if _, ok := ci.conv.Route(a, b); !ok {
				continue // the reachable check failed already
			}
			f(a, b)
		}
	}
}

// runTrips runs the trips a→b(→a) over a's objects; pick selects the
// failure the check is about. The first failure is shown on the smallest
// object that still fails it. With skipOut, an object that does not get to
// b (the outputs check reports it) is not a case: it made no round trip.
func (r *runner) runTrips(c *checker, ci *crdInfo, a, b string, skipOut bool, pickAny func(tripResult) *Failure) {
	// What a mayFail path rejects is not a failure (leaveOut took such
	// objects out; the smallest object must not fail for that reason).
	pick := func(res tripResult) *Failure {
		if acknowledged(res.err) != nil {
			return nil
		}
		return pickAny(res)
	}
	var first map[string]any
	skipped := 0
	for _, o := range ci.objects[a] {
		res := r.trip(ci, o, a, b)
		if skipOut && res.out != nil {
			skipped++
			continue
		}
		f := pick(res)
		if f == nil {
			c.pass()
			continue
		}
		if first == nil {
			first = o
		}
		f.Object = o
		c.fail(*f)
	}
	if first != nil {
		shrunk := objgen.Shrink(ci.schemas[a], first, func(x map[string]any) bool { return pick(r.trip(ci, x, a, b)) != nil })
		if f := pick(r.trip(ci, shrunk, a, b)); f != nil {
			f.Object = shrunk
			c.Failures[0] = *f
			ci.failing[a] = append(ci.failing[a], shrunk)
		}
	}
	r.explain(c, ci, a, b)
	c.Note = fmt.Sprintf("%d objects (%d generated, seed %d)%s", len(ci.objects[a]), ci.generated[a], r.opts.Seed, ci.leftOutNote(a))
	if skipped > 0 {
		c.Note += fmt.Sprintf("; %d did not convert to %s (see static/outputs %s %s→%s)", skipped, b, ci.name, a, b)
	}
	r.end(c)
}

// explain adds to each failure of c the coverage lines of its field for
// the path a→b (or its first hop, through the storage version).
func (r *runner) explain(c *checker, ci *crdInfo, a, b string) {
	if ci.conv == nil {
		return
	}
	route, ok := ci.conv.Route(a, b)
	if !ok {
		return
	}
	cov := r.conv.Coverage(ci.conv, a, route[0].To)
	for i := range c.Failures {
		if f := &c.Failures[i]; f.Field != "" && cov != nil {
			f.Explain = cov.LinesFor(f.Field)
		}
	}
}

// goldenChecks checks the expected conversions offline: the direct
// conversion and the one through the storage version.
func (r *runner) goldenChecks() {
	for i, g := range r.opts.Golden {
		name := g.Name
		if name == "" {
			name = fmt.Sprintf("golden %d", i+1)
		}
		c := r.begin(GroupRoundTrip, "golden "+name)
		ci, src, dst, err := r.goldenTarget(g)
		if err != nil {
			c.failf("%v", err)
			r.end(c)
			continue
		}
		in := settle(jsonval.Normalize(deepCopyMap(g.Object.Object)).(map[string]any), ci.schemas[src])
		chains := [][]string{{dst}}
		if src != ci.storage && dst != ci.storage {
			chains = append(chains, []string{ci.storage, dst})
		}
		for _, chain := range chains {
			got, err := r.through(ci, in, chain...)
			how := src + "→" + strings.Join(chain, "→")
			if err != nil {
				c.fail(Failure{Object: in, Field: evalField(err), Message: fmt.Sprintf("%s: %v", how, err)})
				continue
			}
			if f := compareGolden(got, g.Want); f != nil {
				f.Message = how + ": " + f.Message
				f.Object = in
				c.fail(*f)
				continue
			}
			c.pass()
		}
		c.Note = fmt.Sprintf("%s %s read at %s", ci.gk.Kind, g.Object.GetName(), dst)
		r.end(c)
	}
}

// goldenTarget resolves a golden's CRD and versions.
func (r *runner) goldenTarget(g Golden) (*crdInfo, string, string, error) {
	if g.Object == nil {
		return nil, "", "", errors.New("the golden has no input object")
	}
	gvk := g.Object.GroupVersionKind()
	ci := r.crdFor(gvk.GroupKind())
	if ci == nil {
		return nil, "", "", fmt.Errorf("the katalog serves no %s", gvk.GroupKind())
	}
	dst := g.Version
	if strings.Contains(dst, "/") {
		gv, err := schema.ParseGroupVersion(dst)
		if err != nil {
			return nil, "", "", err
		}
		dst = gv.Version
	}
	for _, v := range []string{gvk.Version, dst} {
		if ci.schemas[v] == nil {
			return nil, "", "", fmt.Errorf("version %q is not served by %s (served: %s)", v, ci.name, strings.Join(ci.versions, ", "))
		}
	}
	return ci, gvk.Version, dst, nil
}

// compareGolden compares a converted object with a golden's Want.
func compareGolden(got, want map[string]any) *Failure {
	for _, top := range []string{"spec", "status"} {
		w, ok := want[top]
		if !ok {
			continue
		}
		g, hasG := got[top]
		var ds []difference
		diffAt(&ds, top, g, w, hasG, true)
		if len(ds) > 0 {
			return &Failure{Field: ds[0].path, Message: "the converted object differs from the expected one: " + describeDiffs(ds)}
		}
	}
	wu := &unstructured.Unstructured{Object: want}
	gu := &unstructured.Unstructured{Object: got}
	for _, m := range []struct {
		name      string
		want, got map[string]string
	}{{"labels", wu.GetLabels(), gu.GetLabels()}, {"annotations", wu.GetAnnotations(), gu.GetAnnotations()}} {
		for k, v := range m.want {
			if gv, ok := m.got[k]; !ok || gv != v {
				return &Failure{Field: join("metadata."+m.name, k), Message: fmt.Sprintf("metadata.%s[%q]: got %q, want %q", m.name, k, m.got[k], v)}
			}
		}
	}
	return nil
}

package migrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/gotmpl"
	"github.com/orkspace/orkestra-cel/engine/jsonval"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/objfile"
	"github.com/orkspace/orkestra-cel/objgen"
)

// ── evaluation ──────────────────────────────────────────────────────────────

// outcome is one evaluation: a value (as JSON), absent, or failed. Two
// outcomes are the same when the values are equal as JSON (what reaches
// the API server: 3 and 3.0 are one number), both are absent, or both
// failed (the child is not applied either way; the messages differ).
type outcome struct {
	json   string
	absent bool
	err    error
}

func (o outcome) String() string {
	switch {
	case o.absent:
		return "<absent> (the field is left unset)"
	case o.err != nil:
		return "<error> " + o.err.Error()
	}
	return o.json
}

var runShape = regexp.MustCompile(`[0-9A-Za-z]+`)

// shape replaces every run of letters and digits with its length: two
// random values of the same kind have the same shape.
func shape(s string) string {
	return runShape.ReplaceAllStringFunc(s, func(r string) string { return fmt.Sprintf("<%d>", len(r)) })
}

// sameFor compares an item's outcomes: where a null leaves the field unset
// (gotmpl.NullLeavesUnset), null and absent are the same.
func sameFor(it *Item, a, b outcome) bool {
	if gotmpl.NullLeavesUnset(&it.rec.ctx) {
		a, b = a.nullAbsent(), b.nullAbsent()
	}
	return same(a, b, it.Random)
}

// nullAbsent is o with a null value read as absent.
func (o outcome) nullAbsent() outcome {
	if o.err == nil && !o.absent && o.json == "null" {
		return outcome{absent: true}
	}
	return o
}

func same(a, b outcome, random bool) bool {
	switch {
	case a.err != nil || b.err != nil:
		return a.err != nil && b.err != nil
	case a.absent || b.absent:
		return a.absent == b.absent
	case random:
		return shape(a.json) == shape(b.json)
	}
	return a.json == b.json
}

type evaluator interface {
	eval(s *engine.Scope) outcome
}

type exprEval struct{ e engine.Expr }

func (x exprEval) eval(s *engine.Scope) outcome {
	v, err := x.e.Eval(s)
	switch {
	case errors.Is(err, engine.ErrAbsent):
		return outcome{absent: true}
	case err != nil:
		return outcome{err: err}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return outcome{err: err}
	}
	return outcome{json: string(b)}
}

type condEval struct{ c engine.Condition }

func (x condEval) eval(s *engine.Scope) outcome {
	ok, err := x.c.Eval(s)
	if err != nil {
		return outcome{err: err}
	}
	return outcome{json: fmt.Sprint(ok)}
}

// ── objects ─────────────────────────────────────────────────────────────────

// sample is one object to verify against.
type sample struct {
	obj    map[string]any
	source string
	// index of a defaulted sample's original in schemaInfo.objects
	index int
}

// raw is the object as written or generated behind smp.
func raw(info *schemaInfo, smp sample) map[string]any {
	if strings.HasSuffix(smp.source, ", defaulted") {
		return info.objects[smp.index].obj
	}
	return smp.obj
}

// verify evaluates every translation and its original on the objects of
// its schema.
func (m *migration) verify() error {
	samples, err := m.readSamples()
	if err != nil {
		return err
	}
	count := m.opts.Count
	if count == 0 {
		count = DefaultCount
	}
	seed := m.opts.Seed
	if seed == 0 {
		seed = 1
	}
	// Objects only for the schemas a translation runs on.
	used := map[*structuralschema.Structural]bool{}
	for _, it := range m.res.Translated {
		used[m.objectSchema(&it.rec.ctx)] = true
	}
	var schemas []*structuralschema.Structural
	for s := range used {
		schemas = append(schemas, s)
	}
	sort.Slice(schemas, func(i, j int) bool {
		a, b := m.schemas[schemas[i]], m.schemas[schemas[j]]
		if a == nil || b == nil {
			return a != nil
		}
		return a.crd.Object.Name+"/"+a.version < b.crd.Object.Name+"/"+b.version
	})
	for _, s := range schemas {
		info := m.schemas[s]
		if info == nil {
			continue
		}
		gvk := schema.GroupVersionKind{Group: info.crd.Object.Spec.Group, Version: info.version, Kind: info.crd.Object.Spec.Names.Kind}
		for _, smp := range samples {
			if smp.obj["apiVersion"] == gvk.GroupVersion().String() && smp.obj["kind"] == gvk.Kind {
				info.objects = append(info.objects, smp)
			}
		}
		if count > 0 {
			gen, err := generate(s, gvk, count, seed, info.crd.Object.Spec.Scope == "Cluster")
			if err != nil {
				return err
			}
			info.objects = append(info.objects, gen...)
		}
		for i, smp := range info.objects {
			o := deepCopy(smp.obj).(map[string]any)
			defaulting.Default(o, s)
			info.defaulted = append(info.defaulted, sample{obj: o, source: smp.source + ", defaulted", index: i})
		}
		m.res.Objects += len(info.objects)
	}
	for _, it := range m.res.Translated {
		info := m.schemas[m.objectSchema(&it.rec.ctx)]
		if info == nil {
			continue
		}
		objects := info.objects
		if defaulted(&it.rec.ctx) {
			objects = info.defaulted
		}
		compare := m.comparer(it, seed)
		for i, smp := range objects {
			m.res.Evaluations++
			// Expressions that read the clock are compared at one instant
			// per object, spread over the hours and days of the week.
			at := sampleInstant(i)
			restore := engine.SetClock(func() time.Time { return at })
			if _, _, same := compare(smp.obj, i); same {
				restore()
				continue
			}
			// Shrink the object as written; with defaulting applied again
			// at each step when the expression sees defaulted objects.
			self := m.objectSchema(&it.rec.ctx)
			prep := func(o map[string]any) map[string]any {
				if defaulted(&it.rec.ctx) {
					o = deepCopy(o).(map[string]any)
					defaulting.Default(o, self)
				}
				return o
			}
			fails := func(o map[string]any) bool {
				_, _, same := compare(prep(o), i)
				return !same
			}
			small := objgen.Shrink(self, raw(info, smp), fails)
			a, b, _ := compare(prep(small), i)
			restore()
			mm := &Mismatch{Item: it, Object: small, Source: strings.TrimSuffix(smp.source, ", defaulted"), Legacy: a.String(), CEL: b.String(), Defaulted: defaulted(&it.rec.ctx)}
			if it.readsClock() {
				mm.At = at
			}
			if err := objgen.Validate(self, raw(info, smp)); err != nil {
				mm.Invalid = err.Error()
			}
			m.res.Mismatches = append(m.res.Mismatches, mm)
			break
		}
	}
	return nil
}

// itemsPerObject is how many items of a forEach field a translation is
// verified with per object.
const itemsPerObject = 4

// comparer evaluates it and its translation on an object (the i-th) as the
// operator would: with a view of observed children where it reads them,
// and once per item (the first few) in a forEach declaration. same is
// false with the first differing outcomes.
func (m *migration) comparer(it *Item, seed int64) func(o map[string]any, i int) (a, b outcome, same bool) {
	views := m.childrenViews(&it.rec.ctx, seed)
	live := m.liveViews(&it.rec.ctx, seed)
	fe := m.forEachOf(it)
	return func(o map[string]any, i int) (outcome, outcome, bool) {
		s := engine.NewScope(o)
		if views != nil {
			v := views[i%len(views)]
			s.Children, s.Vars = v, map[string]any{engine.ChildrenVar: v}
		}
		if live != nil {
			live[i%len(live)].Apply(s)
		}
		scopes := []*engine.Scope{s}
		if fe != nil {
			// a field that is not a list or map fails the render first
			items, _ := fe.Items(o)
			scopes = scopes[:0]
			for _, x := range items[:min(len(items), itemsPerObject)] {
				scopes = append(scopes, fe.Scope(s, x))
			}
		}
		for _, sc := range scopes {
			a, b := it.old.eval(sc), it.new.eval(sc)
			if !sameFor(it, a, b) {
				return a, b, false
			}
		}
		return outcome{}, outcome{}, true
	}
}

// forEachOf is the forEach of the declaration it belongs to; nil outside
// one.
func (m *migration) forEachOf(it *Item) *engine.ForEach {
	e := m.k.Entry(it.Entry)
	if e == nil || e.Box == nil {
		return nil
	}
	for _, h := range e.Box.Hooks {
		if h == nil {
			continue
		}
		for _, r := range h.Resources {
			if r.ForEach != nil && strings.HasPrefix(it.Field, "operatorBox."+r.FieldPath()+".") {
				return engine.Untyped(r.ForEach)
			}
		}
	}
	return nil
}

// childrenViewCount is how many generated children views an expression
// that reads children is verified with (besides "none observed").
const childrenViewCount = 16

// childrenViews are the views of observed children an expression that
// reads them is verified with, nil when it does not: none observed (the
// placeholders of every declared kind, as before the first reconcile),
// then views generated from the children variable's schema.
func (m *migration) childrenViews(ctx *engine.Context, seed int64) []map[string]any {
	var s *structuralschema.Structural
	for _, v := range ctx.Vars {
		if v.Name == engine.ChildrenVar {
			s = v.Schema
		}
	}
	if s == nil {
		return nil
	}
	if views, ok := m.views[s]; ok {
		return views
	}
	none := map[string][]map[string]any{}
	for kind, spec := range katalog.ResourceKinds {
		if _, ok := s.Properties[spec.Children.Plural]; ok {
			none[kind] = nil
		}
	}
	views := []map[string]any{engine.ChildrenView(none)}
	// Half the views with every field the schemas declare, half as the
	// generator picks.
	for _, p := range []float64{1, 0} {
		gen, err := objgen.TryGenerate(s, schema.GroupVersionKind{Kind: "Children"}, childrenViewCount/2, objgen.Options{Seed: seed, OptionalProbability: p})
		if err == nil {
			views = append(views, gen...)
		}
	}
	if m.views == nil {
		m.views = map[*structuralschema.Structural][]map[string]any{}
	}
	m.views[s] = views
	return views
}

// sampleInstant is the time object i is verified at: from Monday
// 2026-07-13 00:00 UTC, 7h13m apart (every hour of every weekday comes up).
func sampleInstant(i int) time.Time {
	return time.Date(2026, 7, 13, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * (7*time.Hour + 13*time.Minute))
}

// generate makes count objects: most with the generator's defaults, a
// fifth with only required fields, a fifth with every field, plus
// variants of some of them that push strings, numbers and booleans to
// the edges the legacy semantics treat specially ("", white space at the
// ends, 0, false), kept when the API server would accept them.
func generate(s *structuralschema.Structural, gvk schema.GroupVersionKind, count int, seed int64, cluster bool) ([]sample, error) {
	minimal, full := count/5, count/5
	base := count - minimal - full
	var out []sample
	add := func(n int, opts objgen.Options, label string) error {
		if n <= 0 {
			return nil
		}
		opts.Seed, opts.ClusterScoped = seed, cluster
		objs, err := objgen.TryGenerate(s, gvk, n, opts)
		if err != nil {
			return fmt.Errorf("generating %s objects to verify against: %w", gvk.Kind, err)
		}
		for i, o := range objs {
			out = append(out, sample{obj: o, source: fmt.Sprintf("generated (%s #%d, seed %d)", label, i, seed)})
		}
		return nil
	}
	if err := add(base, objgen.Options{}, "default"); err != nil {
		return nil, err
	}
	if err := add(minimal, objgen.Options{OptionalProbability: -1}, "required fields only"); err != nil {
		return nil, err
	}
	if err := add(full, objgen.Options{OptionalProbability: 1}, "every field"); err != nil {
		return nil, err
	}
	v, err := objgen.NewValidator(s)
	if err != nil {
		return out, nil
	}
	n := len(out)
	for i := 0; i < n && i < count/2; i++ {
		for j, vr := range variants(out[i].obj, v) {
			out = append(out, sample{obj: vr, source: fmt.Sprintf("%s, edge variant %d", out[i].source, j+1)})
		}
	}
	return out, nil
}

// variants of obj: strings of spec and status padded with white space;
// strings emptied, numbers 0 and booleans false. Each leaf is changed only
// when the object stays valid (enums, patterns and bounds hold).
func variants(obj map[string]any, v *objgen.Validator) []map[string]any {
	edits := []func(any) any{
		func(x any) any {
			if s, ok := x.(string); ok {
				return " " + s + "\t"
			}
			return x
		},
		func(x any) any {
			switch x.(type) {
			case string:
				return ""
			case int64:
				return int64(0)
			case float64:
				return float64(0)
			case bool:
				return false
			}
			return x
		},
	}
	var out []map[string]any
	for _, edit := range edits {
		c := deepCopy(obj).(map[string]any)
		changed := false
		for _, top := range []string{"spec", "status"} {
			walkLeaves(c[top], func(get func() any, set func(any)) {
				old := get()
				nv := edit(old)
				if jsonval.Equal(nv, old) {
					return
				}
				set(nv)
				if v.Validate(c) != nil {
					set(old)
					return
				}
				changed = true
			})
		}
		if changed {
			out = append(out, c)
		}
	}
	return out
}

// walkLeaves calls f for every scalar below v, with its getter and setter.
func walkLeaves(v any, f func(get func() any, set func(any))) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			switch x[k].(type) {
			case map[string]any, []any:
				walkLeaves(x[k], f)
			default:
				k := k
				f(func() any { return x[k] }, func(n any) { x[k] = n })
			}
		}
	case []any:
		for i := range x {
			switch x[i].(type) {
			case map[string]any, []any:
				walkLeaves(x[i], f)
			default:
				i := i
				f(func() any { return x[i] }, func(n any) { x[i] = n })
			}
		}
	}
}

func mapLeaves(v any, f func(any) any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = mapLeaves(e, f)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = mapLeaves(e, f)
		}
		return out
	}
	return f(v)
}

func deepCopy(v any) any { return mapLeaves(v, func(x any) any { return x }) }

// readSamples reads the entries' crFiles and the extra samples.
func (m *migration) readSamples() ([]sample, error) {
	var files []string
	seen := map[string]bool{}
	for _, e := range m.k.CRDs {
		for _, f := range e.CRFiles {
			if !seen[f] {
				seen[f] = true
				files = append(files, f)
			}
		}
	}
	for _, f := range m.opts.Samples {
		if !seen[f] {
			seen[f] = true
			files = append(files, f)
		}
	}
	var out []sample
	for _, f := range files {
		objs, err := readObjects(f)
		if err != nil {
			return nil, err
		}
		for i, o := range objs {
			src := f
			if len(objs) > 1 {
				src = fmt.Sprintf("%s (document %d)", f, i+1)
			}
			out = append(out, sample{obj: o, source: src})
		}
	}
	return out, nil
}

// readObjects reads custom resources as the API server decodes them
// (objfile: integers int64, other numbers float64).
func readObjects(path string) ([]map[string]any, error) {
	objs, err := objfile.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading sample objects: %w", err)
	}
	out := make([]map[string]any, len(objs))
	for i, u := range objs {
		out[i] = u.Object
	}
	return out, nil
}

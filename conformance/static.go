package conformance

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/objgen"
)

// staticChecks runs the static group for one CRD and prepares its objects.
func (r *runner) staticChecks(ci *crdInfo) {
	r.reachableCheck(ci)
	if ci.conv != nil {
		r.literalsCheck(ci)
	}
	r.samplesCheck(ci)
	r.buildObjects(ci)
	r.leaveOut(ci)
	r.mayFailCheck(ci)
	r.outputChecks(ci)
}

func (r *runner) reachableCheck(ci *crdInfo) {
	c := r.begin(GroupStatic, "reachable "+ci.name)
	defer r.end(c)
	switch {
	case len(ci.versions) <= 1 && ci.conv == nil:
		c.pass()
		c.Note = fmt.Sprintf("one served version (%s): nothing to convert", strings.Join(ci.versions, ""))
		return
	case ci.conv == nil:
		c.failf("CRD %s serves %s but no katalog entry declares conversion: the API server would only rewrite apiVersion between them; add a conversion block with paths between every pair (or through the storage version %s)", ci.name, strings.Join(ci.versions, ", "), ci.storage)
		return
	}
	direct, via := 0, 0
	for _, a := range ci.versions {
		for _, b := range ci.versions {
			if a == b {
				continue
			}
			route, ok := ci.conv.Route(a, b)
			switch {
			case !ok:
				c.failf("no conversion from %s to %s: add a path from %s to %s, or paths %s→%s and %s→%s through the storage version", a, b, a, b, a, ci.storage, ci.storage, b)
			case len(route) == 1:
				direct++
				c.pass()
			default:
				via++
				c.pass()
			}
		}
	}
	c.Note = fmt.Sprintf("%d versions, %d ordered pairs: %d direct, %d through %s", len(ci.versions), direct+via+c.Failed, direct, via, ci.storage)
}

// literalsCheck validates every literal a path writes against the target
// field's schema (enum is checked at compile time; this adds ranges,
// lengths, patterns, formats and label/annotation syntax).
func (r *runner) literalsCheck(ci *crdInfo) {
	c := r.begin(GroupStatic, "literals "+ci.name)
	defer r.end(c)
	for _, p := range sortedPaths(ci.conv) {
		obj := map[string]any{
			"apiVersion": ci.gv(p.To),
			"kind":       ci.gk.Kind,
			"metadata":   map[string]any{"name": "literal-check"},
		}
		if ci.namespaced {
			obj["metadata"].(map[string]any)["namespace"] = "default"
		}
		var lits []string
		values := map[string]any{}
		set := func(top []string, n *engine.Node) {
			if n == nil {
				return
			}
			v, ok := literalTree(n, strings.Join(top, "."), &lits, values)
			if !ok {
				return
			}
			m := obj
			for _, k := range top[:len(top)-1] {
				m = m[k].(map[string]any)
			}
			m[top[len(top)-1]] = v
		}
		set([]string{"spec"}, p.Spec)
		set([]string{"status"}, p.Status)
		set([]string{"metadata", "labels"}, p.Labels)
		set([]string{"metadata", "annotations"}, p.Annotations)
		if len(lits) == 0 {
			continue
		}
		bad := map[string]string{}
		for _, fe := range fieldErrors(ci.validate(p.To, obj)) {
			for _, l := range lits {
				// Label and annotation errors name the map, with the
				// offending key or value.
				meta := strings.HasPrefix(fe.Field, "metadata.") && strings.HasPrefix(l, fe.Field) && fe.Type != field.ErrorTypeRequired &&
					(fmt.Sprint(fe.BadValue) == fmt.Sprint(values[l]) || fmt.Sprint(fe.BadValue) == lastKey(l))
				if fe.Field == l || meta {
					bad[l] = fe.Error()
				}
			}
		}
		for _, l := range lits {
			if msg, ok := bad[l]; ok {
				c.fail(Failure{Field: l, Message: fmt.Sprintf("%s: path %s→%s writes %s, which the %s schema rejects: %s", values["@"+l], p.From, p.To, brief(values[l]), p.To, msg)})
			} else {
				c.pass()
			}
		}
	}
	c.Note = fmt.Sprintf("%d literals in %d paths", c.Cases, len(ci.conv.Paths))
}

// lastKey is the last key of a field path (a.b, a["x.y/z"]).
func lastKey(path string) string {
	if strings.HasSuffix(path, "\"]") {
		if i := strings.LastIndex(path, "[\""); i >= 0 {
			if k, err := strconv.Unquote(path[i+1 : len(path)-1]); err == nil {
				return k
			}
		}
	}
	return path[strings.LastIndex(path, ".")+1:]
}

// literalTree builds the value of the literal leaves under n (expressions
// left out, list items that are not literal kept as null placeholders so
// that indexes hold) and collects their field paths.
func literalTree(n *engine.Node, path string, lits *[]string, values map[string]any) (any, bool) {
	switch {
	case n.IsLiteral():
		if n.Literal == nil {
			return nil, false
		}
		*lits = append(*lits, path)
		values[path] = n.Literal
		values["@"+path] = n.Pos.String()
		return n.Literal, true
	case n.IsMap():
		m := map[string]any{}
		for _, f := range n.Fields {
			if v, ok := literalTree(f.Value, join(path, f.Key), lits, values); ok {
				m[f.Key] = v
			}
		}
		return m, len(m) > 0
	case n.IsList():
		l := make([]any, len(n.Items))
		found := false
		for i, it := range n.Items {
			if v, ok := literalTree(it, fmt.Sprintf("%s[%d]", path, i), lits, values); ok {
				l[i] = v
				found = true
			}
		}
		return l, found
	}
	return nil, false
}

// fieldErrors flattens a validation error into field errors.
func fieldErrors(err error) []*field.Error {
	if err == nil {
		return nil
	}
	var out []*field.Error
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		for _, e := range agg.Errors() {
			out = append(out, fieldErrors(e)...)
		}
		return out
	}
	var fe *field.Error
	if errors.As(err, &fe) {
		return []*field.Error{fe}
	}
	return []*field.Error{{Type: field.ErrorTypeInternal, Detail: err.Error()}}
}

// firstField is the field path of the first field error in err.
func firstField(err error) string {
	for _, fe := range fieldErrors(err) {
		if fe.Field != "" {
			return fe.Field
		}
	}
	return ""
}

func sortedPaths(conv *engine.Conversion) []*engine.Path {
	out := make([]*engine.Path, 0, len(conv.Paths))
	for _, p := range conv.Paths {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].From != out[j].From {
			return out[i].From < out[j].From
		}
		return out[i].To < out[j].To
	})
	return out
}

// samplesCheck validates the sample objects at their own version.
func (r *runner) samplesCheck(ci *crdInfo) {
	if len(ci.pendingSamples) == 0 && (len(r.sampleErrs) == 0 || ci != r.crds[0]) {
		return
	}
	c := r.begin(GroupStatic, "samples "+ci.name)
	defer r.end(c)
	if ci == r.crds[0] {
		for _, f := range r.sampleErrs {
			c.fail(f)
		}
	}
	for _, s := range ci.pendingSamples {
		v := versionOf(s.obj)
		if ci.schemas[v] == nil || !slices.Contains(ci.versions, v) {
			c.fail(Failure{Object: s.obj, Field: "apiVersion", Message: fmt.Sprintf("%s: version %q is not served by CRD %s (served: %s)", s.source, v, ci.name, strings.Join(ci.versions, ", "))})
			continue
		}
		obj := deepCopyMap(s.obj)
		if ci.namespaced && nestedString(obj, "metadata", "namespace") == "" {
			setNested(obj, "default", "metadata", "namespace")
		}
		if err := ci.validate(v, obj); err != nil {
			c.fail(Failure{Object: s.obj, Field: firstField(err), Message: fmt.Sprintf("%s is not a valid %s: %v", s.source, ci.gv(v), err)})
			continue
		}
		c.pass()
		ci.samples[v] = append(ci.samples[v], settle(obj, ci.schemas[v]))
	}
	c.Note = fmt.Sprintf("%d sample objects", len(ci.pendingSamples))
}

// buildObjects fills ci.objects: per version the samples at it, the samples
// of the other versions converted to it, and Count generated objects.
func (r *runner) buildObjects(ci *crdInfo) {
	for _, v := range ci.versions {
		objs := append([]map[string]any(nil), ci.samples[v]...)
		for _, w := range ci.versions {
			if w == v || ci.conv == nil {
				continue
			}
			for _, s := range ci.samples[w] {
				if o, err := r.to(ci, s, v); err == nil {
					objs = append(objs, o)
				}
			}
		}
		n := max(r.opts.Count, r.opts.APIServerCount, 3)
		gen, err := objgen.TryGenerate(ci.schemas[v], ci.gvk(v), n, objgen.Options{Seed: r.opts.Seed, ClusterScoped: !ci.namespaced})
		if err != nil {
			c := r.begin(GroupStatic, "generate "+ci.name+" "+v)
			c.failf("cannot generate objects from the %s schema: %v", v, err)
			r.end(c)
		}
		for _, g := range gen {
			ci.pool[v] = append(ci.pool[v], settle(g, ci.schemas[v]))
		}
		ci.generated[v] = min(r.opts.Count, len(ci.pool[v]))
		objs = append(objs, ci.pool[v][:ci.generated[v]]...)
		ci.objects[v] = objs
	}
}

func versionOf(obj map[string]any) string {
	av, _ := obj["apiVersion"].(string)
	if i := strings.LastIndex(av, "/"); i >= 0 {
		return av[i+1:]
	}
	return av
}

func nestedString(obj map[string]any, path ...string) string {
	var cur any = obj
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[k]
	}
	s, _ := cur.(string)
	return s
}

func setNested(obj map[string]any, v any, path ...string) {
	m := obj
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

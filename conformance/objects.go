package conformance

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/jsonval"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/objfile"
	"github.com/orkspace/orkestra-cel/objgen"
)

// crdInfo is one CRD the katalog names, with what the checks need.
type crdInfo struct {
	crd  *katalog.CRD
	gk   schema.GroupKind
	name string
	// versions are the served versions in manifest order.
	versions []string
	storage  string
	schemas  map[string]*structuralschema.Structural
	// conv is nil when no entry declares conversion for the CRD.
	conv       *engine.Conversion
	namespaced bool
	plural     string
	// samples by version: the katalog's crFiles and Options.Samples at
	// that version (valid ones only, after the samples check).
	samples map[string][]map[string]any
	// objects by version: samples at the version, samples of other versions
	// converted to it, then generated objects.
	objects   map[string][]map[string]any
	generated map[string]int // how many of objects are generated
	// pool are, by version, generated objects (settled) for the protocol
	// and apiserver checks: at least a few even when Count is 0; the first
	// ones are the generated objects of objects.
	pool       map[string][]map[string]any
	validators map[string]*objgen.Validator
	// pendingSamples are the samples before the samples check.
	pendingSamples []sample
	// failing are, by version, the smallest objects the offline checks
	// found failing; the apiserver checks write them too.
	failing map[string][]map[string]any
	// leftOut counts, by version, the objects taken out of objects because
	// a mayFail path rejects them; rejections says which path rejected how
	// many (nil when no path declares mayFail).
	leftOut    map[string]int
	rejections map[*engine.Path]*rejection
}

func (ci *crdInfo) gv(version string) string { return ci.gk.Group + "/" + version }

func (ci *crdInfo) gvk(version string) schema.GroupVersionKind {
	return ci.gk.WithVersion(version)
}

func (ci *crdInfo) gvr(version string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: ci.gk.Group, Version: version, Resource: ci.plural}
}

// validate validates obj against version's schema with objgen (the API
// server's checks on create).
func (ci *crdInfo) validate(version string, obj map[string]any) error {
	v := ci.validators[version]
	if v == nil {
		var err error
		v, err = objgen.NewValidator(ci.schemas[version])
		if err != nil {
			return err
		}
		ci.validators[version] = v
	}
	return v.Validate(obj)
}

func (ci *crdInfo) versionSpec(version string) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range ci.crd.Object.Spec.Versions {
		if ci.crd.Object.Spec.Versions[i].Name == version {
			return &ci.crd.Object.Spec.Versions[i]
		}
	}
	return nil
}

// collectCRDs lists the CRDs of the plan's entries, once each, in katalog order.
func collectCRDs(plan *engine.Plan) []*crdInfo {
	var out []*crdInfo
	seen := map[*katalog.CRD]bool{}
	for _, e := range plan.Entries {
		crd := e.Source.CRD
		if crd == nil || seen[crd] {
			continue
		}
		seen[crd] = true
		ci := &crdInfo{
			crd:        crd,
			gk:         crd.GroupKind(),
			name:       crd.Object.Name,
			versions:   crd.Served,
			storage:    crd.StorageVersion,
			schemas:    crd.Schemas,
			conv:       plan.Conversions[crd.GroupKind()],
			namespaced: e.Namespaced,
			plural:     crd.Object.Spec.Names.Plural,
			samples:    map[string][]map[string]any{},
			objects:    map[string][]map[string]any{},
			generated:  map[string]int{},
			pool:       map[string][]map[string]any{},
			validators: map[string]*objgen.Validator{},
			failing:    map[string][]map[string]any{},
			leftOut:    map[string]int{},
		}
		out = append(out, ci)
	}
	return out
}

func (r *runner) crdFor(gk schema.GroupKind) *crdInfo {
	for _, ci := range r.crds {
		if ci.gk == gk {
			return ci
		}
	}
	return nil
}

// sample is one sample object and where it comes from.
type sample struct {
	obj    map[string]any
	source string
}

// loadSamples reads the entries' crFiles and adds Options.Samples.
func (r *runner) loadSamples() {
	seenFile := map[string]bool{}
	byCRD := map[*crdInfo][]sample{}
	addObj := func(o map[string]any, source string) {
		u := &unstructured.Unstructured{Object: o}
		ci := r.crdFor(u.GroupVersionKind().GroupKind())
		if ci == nil {
			return
		}
		byCRD[ci] = append(byCRD[ci], sample{obj: o, source: source})
	}
	for _, e := range r.plan.Entries {
		for _, f := range e.Source.CRFiles {
			if seenFile[f] {
				continue
			}
			seenFile[f] = true
			objs, err := readObjectsFile(f)
			if err != nil {
				r.sampleErrs = append(r.sampleErrs, Failure{Message: err.Error()})
				continue
			}
			for i, o := range objs {
				addObj(o, fmt.Sprintf("%s (document %d)", f, i+1))
			}
		}
	}
	for i, u := range r.opts.Samples {
		addObj(jsonval.Normalize(deepCopyMap(u.Object)).(map[string]any), fmt.Sprintf("sample %d (%s %s)", i+1, u.GetKind(), u.GetName()))
	}
	for _, ci := range r.crds {
		ci.pendingSamples = byCRD[ci]
	}
}

// readObjectsFile reads the objects of a YAML or JSON file (objfile).
func readObjectsFile(path string) ([]map[string]any, error) {
	objs, err := objfile.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading sample objects: %w", err)
	}
	out := make([]map[string]any, len(objs))
	for i, u := range objs {
		out[i] = jsonval.Normalize(u.Object).(map[string]any)
	}
	return out, nil
}

// settle does to obj what the API server does to an object of version
// before it stores or returns it: drops nulls of non-nullable fields
// without a default, prunes unknown fields and applies defaults. obj is
// modified and returned.
func settle(obj map[string]any, s *structuralschema.Structural) map[string]any {
	if s == nil {
		return obj
	}
	defaulting.PruneNonNullableNullsWithoutDefaults(obj, s)
	pruning.Prune(obj, s, true)
	defaulting.Default(obj, s)
	return obj
}

// to converts obj to version and settles it there, as the API server does
// after each conversion. obj is not modified.
func (r *runner) to(ci *crdInfo, obj map[string]any, version string) (map[string]any, error) {
	u := &unstructured.Unstructured{Object: obj}
	if u.GetAPIVersion() == ci.gv(version) {
		return settle(deepCopyMap(obj), ci.schemas[version]), nil
	}
	out, err := r.offline.Convert(u, ci.gv(version))
	if err != nil {
		return nil, err
	}
	return settle(deepCopyMap(out.Object), ci.schemas[version]), nil
}

// through converts obj along versions in turn, settling after each step.
func (r *runner) through(ci *crdInfo, obj map[string]any, versions ...string) (map[string]any, error) {
	cur := obj
	for _, v := range versions {
		next, err := r.to(ci, cur, v)
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return cur, nil
}

func deepCopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return normalizeCopy(m).(map[string]any)
}

// normalizeCopy deep-copies v, turning Go int types into int64 and
// map[string]string into map[string]any, so the copy holds only the types
// unstructured content (and runtime.DeepCopyJSONValue) accept.
func normalizeCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = normalizeCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = normalizeCopy(e)
		}
		return l
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = e
		}
		return m
	}
	return v
}

// serverMetadata are the metadata fields the API server sets; comparisons
// ignore them.
var serverMetadata = []string{"resourceVersion", "managedFields", "creationTimestamp", "generation", "uid", "selfLink"}

// withoutServerMetadata returns a copy of obj without serverMetadata.
func withoutServerMetadata(obj map[string]any) map[string]any {
	out := deepCopyMap(obj)
	if meta, ok := out["metadata"].(map[string]any); ok {
		for _, k := range serverMetadata {
			delete(meta, k)
		}
	}
	return out
}

// difference is one field where two objects differ.
type difference struct {
	path             string
	got, want        any
	hasGot, hasWant  bool
	gotKind, wntKind string
}

func (d difference) String() string {
	switch {
	case !d.hasGot:
		return fmt.Sprintf("%s: missing, want %s", d.path, brief(d.want))
	case !d.hasWant:
		return fmt.Sprintf("%s: got %s, want it absent", d.path, brief(d.got))
	}
	return fmt.Sprintf("%s: got %s, want %s", d.path, brief(d.got), brief(d.want))
}

// diff lists the fields where got differs from want, sorted by path.
func diff(got, want any) []difference {
	var out []difference
	diffAt(&out, "", got, want, true, true)
	sortDiffs(out)
	return out
}

// sortDiffs orders differences by path, those in the round-trip annotation
// (a symptom, not the cause) last.
func sortDiffs(ds []difference) {
	stash := func(d difference) bool { return strings.HasPrefix(d.path, "metadata.annotations") }
	sort.SliceStable(ds, func(i, j int) bool {
		if si, sj := stash(ds[i]), stash(ds[j]); si != sj {
			return sj
		}
		return ds[i].path < ds[j].path
	})
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

func join(path, key string) string {
	if !identRE.MatchString(key) {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func diffAt(out *[]difference, path string, got, want any, hasGot, hasWant bool) {
	if !hasGot || !hasWant {
		*out = append(*out, difference{path: path, got: got, want: want, hasGot: hasGot, hasWant: hasWant})
		return
	}
	gm, gok := got.(map[string]any)
	wm, wok := want.(map[string]any)
	if gok && wok {
		keys := map[string]bool{}
		for k := range gm {
			keys[k] = true
		}
		for k := range wm {
			keys[k] = true
		}
		for k := range keys {
			g, hg := gm[k]
			w, hw := wm[k]
			diffAt(out, join(path, k), g, w, hg, hw)
		}
		return
	}
	gl, gok := got.([]any)
	wl, wok := want.([]any)
	if gok && wok && len(gl) == len(wl) {
		for i := range gl {
			diffAt(out, fmt.Sprintf("%s[%d]", path, i), gl[i], wl[i], true, true)
		}
		return
	}
	if !jsonval.Equal(got, want) {
		*out = append(*out, difference{path: path, got: got, want: want, hasGot: true, hasWant: true})
	}
}

// brief prints a value for a message, cut to 120 bytes.
func brief(v any) string {
	b, err := jsonMarshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	if len(b) > 120 {
		return string(b[:117]) + "..."
	}
	return string(b)
}

// describeDiffs summarises differences: the first few paths.
func describeDiffs(ds []difference) string {
	var parts []string
	for i, d := range ds {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(ds)-3))
			break
		}
		parts = append(parts, d.String())
	}
	return strings.Join(parts, "; ")
}

// objName names an object in messages.
func objName(obj map[string]any) string {
	u := &unstructured.Unstructured{Object: obj}
	name := u.GetName()
	if ns := u.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return fmt.Sprintf("%s %s (%s)", u.GetKind(), name, u.GetAPIVersion())
}

package simulate

import (
	"fmt"
	"io"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/conversion"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/objfile"
)

// Compiler loads and compiles a katalog (a file or directory) the way
// orkestra check and run do, with the CRD manifests crds supplying schemas
// of entries without crdFile; it prints the katalog's diagnostics to w and
// returns an error when it has problems.
type Compiler func(w io.Writer, katalog string, crds []string) (*engine.Plan, error)

// prepared is a spec ready to run: its compiled katalog, the CRDs the
// cluster serves, and the objects it starts with.
type prepared struct {
	plan *engine.Plan
	crds []*apiextensionsv1.CustomResourceDefinition
	// untyped are the custom child kinds the katalog declares without a
	// CRD: the in-memory cluster serves them untyped.
	untyped []schema.GroupVersionKind
	// mapper is the in-memory cluster's: what the cluster serves.
	mapper meta.RESTMapper
	// objects are the custom resources (at the version their entry
	// reconciles) and other objects of the spec's cr files.
	objects []*objectWithSource
}

// errKatalog: the spec's katalog has problems (printed by the compiler).
type errKatalog struct{ file string }

func (e errKatalog) Error() string {
	return fmt.Sprintf("the katalog %s does not load (its problems are listed above): fix them, orkestra check -f %s says the same", e.file, e.file)
}

// prepare compiles the spec's katalog, reads its CRDs and objects and
// checks what needs the katalog to check: the entries expect.crds names,
// the custom child kinds without a CRD, the resources the rules name, the
// kinds of the objects.
func prepare(spec *Spec, o Options, w io.Writer) (*prepared, error) {
	run := spec.Run
	plan, err := o.Compile(w, run.Katalog, run.CRDs)
	if err != nil {
		return nil, errKatalog{file: run.Katalog}
	}
	p := &prepared{plan: plan}
	r := &reader{}
	p.crds = r.crds(plan, run)
	p.untyped = r.untyped(plan, p.crds, run, o.Envtest, w)
	p.mapper, _ = mapperFor(p.crds, p.untyped)
	r.checkEntries(plan, run)
	r.checkResources(p.crds, p.untyped, run)
	if len(r.problems) == 0 {
		p.objects = r.objects(plan, p.mapper, run)
	}
	if len(r.problems) > 0 {
		return nil, &InvalidError{Problems: r.problems}
	}
	return p, nil
}

// untyped are the custom child kinds the katalog declares (with a literal
// apiVersion and kind) that neither a CRD nor the built-in kinds give: a
// third-party kind such as Argo CD's Application. The in-memory cluster
// serves them untyped, saying so on w; a real API server (--envtest) needs
// their CRD.
func (r *reader) untyped(plan *engine.Plan, crds []*apiextensionsv1.CustomResourceDefinition, run *Run, envtest bool, w io.Writer) []schema.GroupVersionKind {
	served, _ := mapperFor(crds, nil)
	var out []schema.GroupVersionKind
	seen := map[schema.GroupVersionKind]bool{}
	for _, e := range plan.Entries {
		for _, h := range katalog.Hooks {
			for _, rs := range e.Hooks[h] {
				if !rs.Kind.Open || rs.GVK == nil || seen[*rs.GVK] {
					continue
				}
				gvk := *rs.GVK
				seen[gvk] = true
				if _, err := served.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
					continue
				}
				if envtest {
					r.errorf(rs.Fields.Pos, rs.Fields.Field, "%s (%s) has no CRD: --envtest installs only the CRDs the katalog and the spec give; add its CRD to spec.crd or spec.crdFiles", gvk.Kind, gvk.GroupVersion())
					continue
				}
				plural, _ := meta.UnsafeGuessKindToResource(gvk)
				fmt.Fprintf(w, "%s: warning: [%s] %s: %s (%s) has no CRD here: the simulated cluster serves it untyped as %q, namespaced; give its CRD in spec.crd or spec.crdFiles to serve it as your cluster does\n", rs.Fields.Pos, e.Name, rs.Fields.Field, gvk.Kind, gvk.GroupVersion(), plural.Resource)
				out = append(out, gvk)
			}
		}
	}
	return out
}

// crds are the plan's CRDs (built-in kinds aside) and the spec's.
func (r *reader) crds(plan *engine.Plan, run *Run) []*apiextensionsv1.CustomResourceDefinition {
	var out []*apiextensionsv1.CustomResourceDefinition
	seen := map[string]bool{}
	add := func(c *apiextensionsv1.CustomResourceDefinition) {
		if !seen[c.Name] {
			seen[c.Name] = true
			out = append(out, c)
		}
	}
	for _, e := range plan.Entries {
		if src := e.Source.CRD; src != nil && src.Object != nil && src.Origin != katalog.BuiltIn {
			add(src.Object)
		}
	}
	for _, f := range run.CRDs {
		list, err := katalog.ReadCRDs(f)
		if err != nil {
			r.errorf(run.Pos, "spec.crdFiles", "%v", err)
			continue
		}
		for _, c := range list {
			add(c)
		}
	}
	return out
}

// checkEntries: every entry expect.crds names reconciles here.
func (r *reader) checkEntries(plan *engine.Plan, run *Run) {
	if run.Expect == nil {
		return
	}
	var names []string
	reconciles := map[string]bool{}
	for _, e := range plan.Entries {
		names = append(names, e.Name)
		reconciles[e.Name] = e.Enabled && e.Reconciles
	}
	for name, at := range run.Expect.CRDPos {
		switch ok, known := reconciles[name]; {
		case !known:
			r.errorf(at, "spec.expect.crds."+name, "the katalog has no entry %q%s (entries: %s)", name, katalog.DidYouMean(name, names), strings.Join(names, ", "))
		case !ok:
			r.errorf(at, "spec.expect.crds."+name, "entry %q does not reconcile (it is disabled, or serves a version other than its CRD's storage version, which another entry reconciles)", name)
		}
	}
}

// checkResources: every resource a rule names is one the cluster serves.
func (r *reader) checkResources(crds []*apiextensionsv1.CustomResourceDefinition, untyped []schema.GroupVersionKind, run *Run) {
	if run.Expect == nil {
		return
	}
	known := servedResources(crds, untyped)
	check := func(rules []Rule) {
		for _, rule := range rules {
			res, _, _ := strings.Cut(rule.Resource, "/")
			if res == "status" || known[res] {
				continue
			}
			var all []string
			for k := range known {
				all = append(all, k)
			}
			sort.Strings(all)
			r.errorf(rule.Pos, rule.Field+".resource", "no kind the simulated cluster serves is called %q%s: a rule names a built-in kind's or a katalog CRD's plural (add the CRD of another kind to spec.crdFiles)", res, katalog.DidYouMean(res, all))
		}
	}
	for _, e := range append([]*Expect{run.Expect}, crdExpects(run.Expect)...) {
		check(e.Ops)
		check(e.Absent)
	}
}

func crdExpects(e *Expect) []*Expect {
	var out []*Expect
	for _, sub := range e.CRDs {
		if sub != nil {
			out = append(out, sub)
		}
	}
	return out
}

// servedResources are the plurals of the built-in kinds, of crds and of the
// untyped kinds.
func servedResources(crds []*apiextensionsv1.CustomResourceDefinition, untyped []schema.GroupVersionKind) map[string]bool {
	out := map[string]bool{}
	for p := range builtIns().plurals {
		out[p] = true
	}
	for _, c := range crds {
		out[c.Spec.Names.Plural] = true
	}
	for _, gvk := range untyped {
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		out[plural.Resource] = true
	}
	return out
}

// objects reads the spec's cr files: custom resources of the katalog's
// entries (converted to the version their entry reconciles), and any other
// object the cluster serves, placed in namespace default when namespaced
// and without one.
func (r *reader) objects(plan *engine.Plan, mapper meta.RESTMapper, run *Run) []*objectWithSource {
	var conv *conversion.Converter
	var out []*objectWithSource
	for _, f := range run.CRs {
		objs, err := objfile.Read([]string{f}, nil)
		if err != nil {
			r.errorf(katalog.Pos{File: f}, "spec.cr", "%v", err)
			continue
		}
		for i, o := range objs {
			at := katalog.Pos{File: f}
			gvk := o.GroupVersionKind()
			m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				r.errorf(at, fmt.Sprintf("object %d (%s %s)", i+1, gvk.Kind, o.GetName()), "the simulated cluster does not serve %s: it is neither a built-in kind nor a kind of the katalog; add its CRD to spec.crdFiles", gvk)
				continue
			}
			if e := plan.Reconciler(gvk.GroupKind()); e != nil && e.GVK.Version != gvk.Version {
				if conv == nil {
					conv = conversion.New(plan, conversion.Options{})
				}
				converted, err := conv.Convert(o, e.GVK.GroupVersion().String())
				if err != nil {
					r.errorf(at, fmt.Sprintf("object %d (%s %s)", i+1, gvk.Kind, o.GetName()), "converting it to %s, the version entry %s reconciles: %v", e.GVK.Version, e.Name, err)
					continue
				}
				o = converted
			}
			if m.Scope.Name() == meta.RESTScopeNameNamespace && o.GetNamespace() == "" {
				o.SetNamespace("default")
			}
			out = append(out, &objectWithSource{obj: o, file: f})
		}
	}
	return out
}

// objectWithSource is an object of a cr file.
type objectWithSource struct {
	obj  *unstructured.Unstructured
	file string
}

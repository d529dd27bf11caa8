package manifests

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// Verbs in the order rules list them.
var verbOrder = []string{"get", "list", "watch", "create", "update", "patch", "delete"}

// verbSet collects verbs per group and resource.
type verbSet map[schema.GroupResource]map[string]bool

func (v verbSet) add(gr schema.GroupResource, verbs ...string) {
	if v[gr] == nil {
		v[gr] = map[string]bool{}
	}
	for _, verb := range verbs {
		v[gr][verb] = true
	}
}

// ChildAccess explains, per child resource, why each verb is granted: what
// the operator's appliers do with objects of that kind.
type ChildAccess struct {
	Resource schema.GroupResource
	Verbs    []string
	// Guessed is true when the resource name was guessed from a custom
	// kind that is not one of the katalog's CRDs.
	Guessed bool
}

// ClusterRules returns the cluster-wide rules the operator needs for plan,
// least privilege, derived from what the katalog declares:
//
//   - every child kind a hook declares: get, list, watch (the caches and the
//     owned-object watches) and create;
//   - update for drift-corrected children (onReconcile, or reconcile: true),
//     except Jobs (create-only) and Pods (replaced, not updated), and for
//     `once` secrets with rotateAfter (regenerated in place);
//   - delete for drift-corrected children with a when/or condition (deleted
//     when it stops holding), Pods (recreated on drift), Services declaring
//     `headless` and Secrets declaring `type` (immutable fields: recreated);
//   - the CRDs' custom resources: get, list, watch; patch for the entries
//     that reconcile (finalizers, the Jobs annotation, status without a
//     subresource) and for the storage migration (list and patch, every
//     CRD), patch on /status, update on /finalizers (owner references that
//     block deletion);
//   - events (core and events.k8s.io): create and patch.
//
// Custom children need a literal apiVersion and kind to be derived; the
// warnings name those that could not be, and resources guessed from a kind.
func ClusterRules(plan *engine.Plan) (rules []rbacv1.PolicyRule, children []ChildAccess, warnings []string) {
	crs := verbSet{}
	kids := verbSet{}
	guessed := map[schema.GroupResource]bool{}
	plurals := map[schema.GroupKind]string{}
	for _, e := range plan.Entries {
		plurals[e.GVK.GroupKind()] = e.GVR.Resource
	}
	for _, e := range plan.Entries {
		gr := e.GVR.GroupResource()
		// The storage migration rewrites every katalog CRD's objects
		// (an unchanged patch), whether its entries are enabled or not.
		if e.Source.CRD != nil && e.Source.CRD.Origin != katalog.BuiltIn {
			crs.add(gr, "list", "patch")
		}
		if !e.Enabled {
			continue
		}
		crs.add(gr, "get", "list", "watch")
		if !e.Reconciles {
			continue
		}
		crs.add(gr, "patch")
		if hasStatusSubresource(e) {
			crs.add(schema.GroupResource{Group: gr.Group, Resource: gr.Resource + "/status"}, "patch")
		}
		crs.add(schema.GroupResource{Group: gr.Group, Resource: gr.Resource + "/finalizers"}, "update")
		for _, hook := range katalog.Hooks {
			for _, r := range e.Hooks[hook] {
				gr, guess, warn := childResource(r, plurals)
				if warn != "" {
					warnings = append(warnings, fmt.Sprintf("[%s] %s: %s", e.Name, r.Source.FieldPath(), warn))
				}
				if gr == nil {
					continue
				}
				if guess {
					guessed[*gr] = true
				}
				kids.add(*gr, childVerbs(r)...)
			}
		}
	}
	for gr := range guessed {
		warnings = append(warnings, fmt.Sprintf("the resource of custom children %q was guessed from their kind (it is not one of the katalog's CRDs); check the ClusterRole", gr.String()))
	}
	sort.Strings(warnings)

	all := verbSet{}
	for gr, vs := range crs {
		all.add(gr, keys(vs)...)
	}
	for gr, vs := range kids {
		all.add(gr, keys(vs)...)
		children = append(children, ChildAccess{Resource: gr, Verbs: ordered(vs), Guessed: guessed[gr]})
	}
	sort.Slice(children, func(i, j int) bool { return children[i].Resource.String() < children[j].Resource.String() })
	all.add(schema.GroupResource{Resource: "events"}, "create", "patch")
	all.add(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, "create", "patch")
	return toRules(all), children, warnings
}

// childVerbs are the verbs the appliers use on one declared child.
func childVerbs(r *engine.Resource) []string {
	verbs := []string{"get", "list", "watch", "create"}
	reconciled := r.Hook == katalog.OnReconcile || r.Reconcile
	conditional := r.When != nil
	switch r.Kind.Key {
	case "jobs":
		// Created once, never updated; deleted when a condition stops holding.
		if reconciled && conditional {
			verbs = append(verbs, "delete")
		}
	case "pods":
		// A pod's spec is immutable: drift is corrected by recreating it.
		if reconciled {
			verbs = append(verbs, "delete")
		}
	default:
		if reconciled {
			verbs = append(verbs, "update")
			if conditional || recreates(r) {
				verbs = append(verbs, "delete")
			}
		}
	}
	if r.Once && r.RotateAfter > 0 {
		verbs = append(verbs, "update")
	}
	if r.Hook == katalog.OnDelete {
		// onDelete children are only created (and read while they run).
		verbs = []string{"get", "list", "watch", "create"}
	}
	return verbs
}

// recreates reports whether drift in a field the declaration manages is
// corrected by deleting and recreating the object (immutable fields).
func recreates(r *engine.Resource) bool {
	switch r.Kind.Key {
	case "services":
		return r.Fields.Get("headless") != nil
	case "secrets":
		return r.Fields.Get("type") != nil
	}
	return false
}

// childResource returns the group and resource of a declared child. Custom
// children need literal apiVersion and kind; their resource is the plural
// of a katalog CRD of that kind, else guessed.
func childResource(r *engine.Resource, plurals map[schema.GroupKind]string) (gr *schema.GroupResource, guessed bool, warning string) {
	if !r.Kind.Open {
		gvk := schema.FromAPIVersionAndKind(r.Kind.APIVersion, r.Kind.Kind)
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		return &schema.GroupResource{Group: gvk.Group, Resource: plural.Resource}, false, ""
	}
	av, k := r.Fields.Get("apiVersion"), r.Fields.Get("kind")
	if av == nil || k == nil || !av.IsLiteral() || !k.IsLiteral() {
		return nil, false, "a custom child's apiVersion and kind are computed, so its RBAC cannot be derived; add a rule for its resource to the ClusterRole by hand"
	}
	avs, _ := av.Literal.(string)
	ks, _ := k.Literal.(string)
	gv, err := schema.ParseGroupVersion(avs)
	if err != nil || ks == "" {
		return nil, false, fmt.Sprintf("custom child apiVersion %q / kind %q do not name a resource; no RBAC rule derived", avs, ks)
	}
	gvk := gv.WithKind(ks)
	if p, ok := plurals[gvk.GroupKind()]; ok {
		return &schema.GroupResource{Group: gvk.Group, Resource: p}, false, ""
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return &schema.GroupResource{Group: gvk.Group, Resource: plural.Resource}, true, ""
}

func hasStatusSubresource(e *engine.Entry) bool {
	if e.Source == nil || e.Source.CRD == nil {
		return false
	}
	for _, v := range e.Source.CRD.Object.Spec.Versions {
		if v.Name == e.GVK.Version {
			return v.Subresources != nil && v.Subresources.Status != nil
		}
	}
	return false
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// ordered returns the verbs in verbOrder.
func ordered(m map[string]bool) []string {
	var out []string
	for _, v := range verbOrder {
		if m[v] {
			out = append(out, v)
		}
	}
	return out
}

// toRules groups resources of one API group with the same verbs into one
// rule; rules are sorted by group, then resources.
func toRules(all verbSet) []rbacv1.PolicyRule {
	type key struct{ group, verbs string }
	byKey := map[key][]string{}
	for gr, vs := range all {
		k := key{gr.Group, strings.Join(ordered(vs), ",")}
		byKey[k] = append(byKey[k], gr.Resource)
	}
	rules := make([]rbacv1.PolicyRule, 0, len(byKey))
	for k, res := range byKey {
		sort.Strings(res)
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{k.group}, Resources: res, Verbs: strings.Split(k.verbs, ",")})
	}
	sortRules(rules)
	return rules
}

func sortRules(rules []rbacv1.PolicyRule) {
	sort.SliceStable(rules, func(i, j int) bool {
		a, b := rules[i], rules[j]
		if a.APIGroups[0] != b.APIGroups[0] {
			return a.APIGroups[0] < b.APIGroups[0]
		}
		return slices.Compare(a.Resources, b.Resources) < 0
	})
}

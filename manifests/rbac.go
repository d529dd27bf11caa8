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
	"github.com/orkspace/orkestra-cel/operator/render"
)

// Verbs in the order rules list them.
var verbOrder = []string{"get", "list", "watch", "create", "update", "patch", "delete", "bind", "escalate"}

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
	// Namespaces the access is limited to (Roles); nil: cluster-wide.
	Namespaces []string
	// Guessed is true when the resource name was guessed from a custom
	// kind that is not one of the katalog's CRDs.
	Guessed bool
}

// Access is the RBAC the operator needs for a plan, least privilege,
// derived from what the katalog declares.
type Access struct {
	// Cluster rules go into the ClusterRole.
	Cluster []rbacv1.PolicyRule
	// Namespaced rules go into a Role (and RoleBinding) per namespace: the
	// resources of entries that allowedNamespaces or namespace: limit to
	// known namespaces, and copy sources in a literal fromNamespace.
	Namespaced map[string][]rbacv1.PolicyRule
	Children   []ChildAccess
	Warnings   []string
}

// grants collects verbs per scope ("" is cluster-wide, else a namespace) and
// resource, and `get` by name (copy sources).
type grants struct {
	verbs map[string]verbSet
	names map[string]map[schema.GroupResource][]string
}

func newGrants() *grants {
	return &grants{verbs: map[string]verbSet{}, names: map[string]map[schema.GroupResource][]string{}}
}

// add grants verbs on gr in each namespace of scopes, cluster-wide when nil.
func (g *grants) add(scopes []string, gr schema.GroupResource, verbs ...string) {
	if scopes == nil {
		scopes = []string{""}
	}
	for _, ns := range scopes {
		if g.verbs[ns] == nil {
			g.verbs[ns] = verbSet{}
		}
		g.verbs[ns].add(gr, verbs...)
	}
}

// addNamed grants get on the object name of gr in namespace ns ("": any).
func (g *grants) addNamed(ns string, gr schema.GroupResource, name string) {
	if g.names[ns] == nil {
		g.names[ns] = map[schema.GroupResource][]string{}
	}
	if !slices.Contains(g.names[ns][gr], name) {
		g.names[ns][gr] = append(g.names[ns][gr], name)
	}
}

// rules returns the rules of one scope: a get by name is left out where get
// on every object of the resource is granted already.
func (g *grants) rules(ns string) []rbacv1.PolicyRule {
	rules := toRules(g.verbs[ns])
	covered := func(scope string, gr schema.GroupResource) bool { return g.verbs[scope][gr]["get"] }
	for gr, names := range g.names[ns] {
		if covered(ns, gr) || covered("", gr) {
			continue
		}
		sort.Strings(names)
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{gr.Group}, Resources: []string{gr.Resource}, ResourceNames: names, Verbs: []string{"get"}})
	}
	sortRules(rules)
	return rules
}

// Rules derives the operator's RBAC from plan:
//
//   - every child kind a hook declares: get, list, watch (the caches and the
//     owned-object watches) and create;
//   - update for drift-corrected children (onReconcile, or reconcile: true),
//     except kinds created once (Jobs) or recreated (Pods), and for `once`
//     secrets with rotateAfter (regenerated in place);
//   - delete for drift-corrected children with a when/or condition (deleted
//     when it stops holding), kinds recreated on drift, and declarations
//     setting a field that cannot change in place (render.Kinds: a Service's
//     headless, a Secret's type);
//   - the CRDs' custom resources: get, list, watch; patch for the entries
//     that reconcile (finalizers, the Jobs annotation, status without a
//     subresource), patch on /status, update on /finalizers (owner
//     references that block deletion);
//   - get on the Secret or ConfigMap a copy reads, by name when its name is
//     a literal (in a Role of fromNamespace when that is a literal too);
//   - what a kind's Grants add (render.Kinds): escalate on roles and
//     clusterroles for Role and ClusterRole children, bind on the roles a
//     binding may name;
//   - the kinds the entry observes (cross reads, watches): get, list,
//     watch, where their objects can be (engine.Entry.ObservedNamespaces);
//   - get on the Secret an external call's auth reads, by name;
//   - events (core and events.k8s.io): create and patch.
//
// Entries limited to known namespaces (allowedNamespaces of exact names,
// namespace:) get their rules in Roles of those namespaces, as long as no
// other entry needs the same resource everywhere (engine.Plan.
// WatchNamespaces, which the operator's caches follow too). Custom children
// need a literal apiVersion and kind to be derived; the warnings name those
// that could not be, and resources guessed from a kind.
func Rules(plan *engine.Plan) *Access {
	a := &Access{Namespaced: map[string][]rbacv1.PolicyRule{}}
	crs, kids := newGrants(), newGrants()
	guessed := map[schema.GroupResource]bool{}
	plurals := map[schema.GroupKind]string{}
	for _, e := range plan.Entries {
		plurals[e.GVK.GroupKind()] = e.GVR.Resource
	}
	for _, e := range plan.Entries {
		gr := e.GVR.GroupResource()
		if !e.Enabled {
			continue
		}
		scopes := plan.WatchNamespaces(e.GVK)
		crs.add(scopes, gr, "get", "list", "watch")
		if !e.Reconciles {
			continue
		}
		crs.add(scopes, gr, "patch")
		if e.Cleanup != nil {
			// operatorBox.runtime.cleanup deletes custom resources.
			crs.add(scopes, gr, "delete")
		}
		if hasStatusSubresource(e) {
			crs.add(scopes, schema.GroupResource{Group: gr.Group, Resource: gr.Resource + "/status"}, "patch")
		}
		crs.add(scopes, schema.GroupResource{Group: gr.Group, Resource: gr.Resource + "/finalizers"}, "update")
		liveGrants(plan, e, crs, kids)
		for _, hook := range katalog.Hooks {
			for _, r := range e.Hooks[hook] {
				a.Warnings = append(a.Warnings, childGrants(plan, e, r, plurals, kids, guessed)...)
			}
		}
	}
	for gr := range guessed {
		a.Warnings = append(a.Warnings, fmt.Sprintf("the resource of custom children %q was guessed from their kind (it is not one of the katalog's CRDs); check the ClusterRole", gr.String()))
	}
	sort.Strings(a.Warnings)

	all := newGrants()
	for _, g := range []*grants{crs, kids} {
		for ns, vs := range g.verbs {
			for gr, verbs := range vs {
				all.add(scopeOf(ns), gr, keys(verbs)...)
			}
		}
		for ns, byGR := range g.names {
			for gr, names := range byGR {
				for _, n := range names {
					all.addNamed(ns, gr, n)
				}
			}
		}
	}
	a.Children = childAccess(kids, guessed)
	all.add(nil, schema.GroupResource{Resource: "events"}, "create", "patch")
	all.add(nil, schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, "create", "patch")
	a.Cluster = all.rules("")
	for _, ns := range scopeNames(all) {
		a.Namespaced[ns] = all.rules(ns)
	}
	return a
}

func scopeOf(ns string) []string {
	if ns == "" {
		return nil
	}
	return []string{ns}
}

// scopeNames returns the namespaces with rules, sorted.
func scopeNames(g *grants) []string {
	set := map[string]bool{}
	for ns := range g.verbs {
		set[ns] = true
	}
	for ns := range g.names {
		set[ns] = true
	}
	delete(set, "")
	out := keys(set)
	sort.Strings(out)
	return out
}

// childGrants adds the grants one declared child needs and returns warnings.
func childGrants(plan *engine.Plan, e *engine.Entry, r *engine.Resource, plurals map[schema.GroupKind]string, kids *grants, guessed map[schema.GroupResource]bool) []string {
	var warnings []string
	gr, guess, warn := childResource(r, plurals)
	if warn != "" {
		warnings = append(warnings, fmt.Sprintf("[%s] %s: %s", e.Name, r.Source.FieldPath(), warn))
	}
	if gr == nil {
		return warnings
	}
	if guess {
		guessed[*gr] = true
	}
	// Namespaced built-in kinds' caches follow WatchNamespaces (a
	// cluster-scoped kind's is cluster-wide). A custom kind's scope is not
	// known here: cluster-wide.
	var scopes []string
	if !r.Kind.Open {
		scopes = plan.WatchNamespaces(*r.GVK)
	}
	kids.add(scopes, *gr, childVerbs(r)...)
	// What applying the kind takes besides its own verbs (render.Kinds:
	// escalate to write a Role's rules, bind to bind a role).
	for _, g := range render.KindOf(r.Kind.Key).Grants {
		for _, res := range g.Resources {
			kids.add(scopes, schema.GroupResource{Group: g.Group, Resource: res}, g.Verbs...)
		}
	}
	if w := copyGrants(r, kids, plan.WatchNamespaces(e.GVK)); w != "" {
		warnings = append(warnings, fmt.Sprintf("[%s] %s: %s", e.Name, r.Source.FieldPath(), w))
	}
	if r.Kind.Open && r.Fields.Get("status") != nil && r.Source.WritesStatus() && r.Hook != katalog.OnDelete {
		// Its initial status goes through the status subresource.
		kids.add(nil, schema.GroupResource{Group: gr.Group, Resource: gr.Resource + "/status"}, "patch")
	}
	return warnings
}

// liveGrants adds what an entry's live inputs need: get, list and watch on
// the kinds it observes (the informers its cross reads and watches read)
// and on Pods where its workload children are when it reads their pods
// (enrich: [pods]),
// get by name on the Secrets its external calls and remote cross reads take
// credentials from (in the Secret's namespace, else where the custom
// resources are).
func liveGrants(plan *engine.Plan, e *engine.Entry, crs, kids *grants) {
	for _, o := range e.Observations {
		if o.Source.Plural == "" {
			continue
		}
		crs.add(plan.WatchNamespaces(o.GVK), schema.GroupResource{Group: o.GVK.Group, Resource: o.Source.Plural}, "get", "list", "watch")
	}
	if e.EnrichesPods() {
		crs.add(plan.WatchNamespaces(engine.PodGVK), schema.GroupResource{Resource: "pods"}, "get", "list", "watch")
	}
	secrets := schema.GroupResource{Resource: "secrets"}
	auths := make([]*katalog.ExternalAuth, 0, len(e.External)+len(e.Remote))
	for _, c := range e.External {
		auths = append(auths, c.Source.Auth)
	}
	for _, r := range e.Remote {
		auths = append(auths, r.Source.Remote.Auth)
	}
	for _, a := range auths {
		if a == nil {
			continue
		}
		scopes := []string{a.Namespace}
		if a.Namespace == "" {
			if scopes = plan.WatchNamespaces(e.GVK); scopes == nil {
				scopes = []string{""}
			}
		}
		for _, ns := range scopes {
			kids.addNamed(ns, secrets, a.Secret)
		}
	}
}

// copyGrants grants get on the object a Secret or ConfigMap copies: by name
// when the name is a literal, in fromNamespace when that is a literal (else
// where the custom resources are: crNamespaces, nil for everywhere). A
// computed name needs get on every object of the kind: the returned warning
// says so.
func copyGrants(r *engine.Resource, kids *grants, crNamespaces []string) string {
	key := render.CopyKey(r.Kind.Key)
	from := r.Fields.Get(key)
	if key == "" || from == nil {
		return ""
	}
	plural, _ := meta.UnsafeGuessKindToResource(*r.GVK)
	gr := plural.GroupResource()
	scopes := crNamespaces
	if n := r.Fields.Get("fromNamespace"); n != nil {
		scopes = nil
		if n.IsLiteral() {
			scopes = []string{fmt.Sprint(n.Literal)}
		}
	}
	if from.IsLiteral() {
		if scopes == nil {
			scopes = []string{""}
		}
		for _, ns := range scopes {
			kids.addNamed(ns, gr, fmt.Sprint(from.Literal))
		}
		return ""
	}
	kids.add(scopes, gr, "get")
	where := "every namespace"
	if scopes != nil {
		where = "namespace " + strings.Join(scopes, ", ")
	}
	return fmt.Sprintf("%s is computed, so the operator may read every %s in %s (get); write the name as a literal to grant get on that one object only", key, r.Kind.Kind, where)
}

// childAccess lists, per child resource, its verbs and where they apply.
func childAccess(kids *grants, guessed map[schema.GroupResource]bool) []ChildAccess {
	byGR := map[schema.GroupResource]*ChildAccess{}
	for _, ns := range append([]string{""}, scopeNames(kids)...) {
		for gr, vs := range kids.verbs[ns] {
			ca := byGR[gr]
			if ca == nil {
				ca = &ChildAccess{Resource: gr, Guessed: guessed[gr]}
				byGR[gr] = ca
			}
			ca.Verbs = ordered(union(ca.Verbs, keys(vs)))
			if ns != "" {
				ca.Namespaces = append(ca.Namespaces, ns)
			}
		}
	}
	out := make([]ChildAccess, 0, len(byGR))
	for _, ca := range byGR {
		out = append(out, *ca)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Resource.String() < out[j].Resource.String() })
	return out
}

func union(a, b []string) map[string]bool {
	m := map[string]bool{}
	for _, s := range a {
		m[s] = true
	}
	for _, s := range b {
		m[s] = true
	}
	return m
}

// childVerbs are the verbs the appliers use on one declared child, from its
// kind's lifecycle (render.Kinds). Children are written with server-side
// apply: patch, and create for the apply that creates one.
func childVerbs(r *engine.Resource) []string {
	verbs := []string{"get", "list", "watch", "create", "patch"}
	if r.Hook == katalog.OnDelete {
		// onDelete children are only created (and read while they run).
		return verbs
	}
	reconciled := r.Modes.Reconcile
	// A condition that stops holding, or a forEach item that is gone,
	// deletes the child when the declaration prunes.
	prunes := (r.Modes.Prune && r.When != nil) || (r.Modes.PruneItems && r.ForEach != nil)
	k := render.KindOf(r.Kind.Key)
	switch k.Lifecycle {
	case render.CreateOnly:
		// Created once, never updated.
		if prunes {
			verbs = append(verbs, "delete")
		}
	case render.Recreate:
		// Drift is corrected by recreating the object.
		if reconciled || prunes {
			verbs = append(verbs, "delete")
		}
	default:
		if reconciled {
			// The corrected object, when an apply leaves another
			// manager's item in a compared list or map.
			verbs = append(verbs, "update")
		}
		if prunes || reconciled && recreates(r, k) {
			verbs = append(verbs, "delete")
		}
	}
	return verbs
}

// recreates reports whether drift in a field the declaration manages is
// corrected by deleting and recreating the object (immutable fields).
func recreates(r *engine.Resource, k *render.Kind) bool {
	for _, f := range k.Recreates {
		if r.Fields.Get(f) != nil {
			return true
		}
	}
	return false
}

// childResource returns the group and resource of a declared child. Custom
// children need literal apiVersion and kind; their resource is the plural
// of a katalog CRD of that kind, else guessed.
func childResource(r *engine.Resource, plurals map[schema.GroupKind]string) (gr *schema.GroupResource, guessed bool, warning string) {
	if r.GVK == nil {
		return nil, false, "a custom child's apiVersion and kind are computed, so its RBAC cannot be derived; add a rule for its resource to the ClusterRole by hand"
	}
	gvk := *r.GVK
	if p, ok := plurals[gvk.GroupKind()]; ok && r.Kind.Open {
		return &schema.GroupResource{Group: gvk.Group, Resource: p}, false, ""
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return &schema.GroupResource{Group: gvk.Group, Resource: plural.Resource}, r.Kind.Open, ""
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

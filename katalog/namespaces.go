package katalog

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// NamespaceRules are an entry's namespace restrictions, as upstream has them
// (pkg/types/ns_allowed.go, ns_restricted.go, pkg/runtime/reconciler/
// run_namespace_guard.go, pkg/runtime/informer/docs/02-namespace-filter.md):
//
//   - allowedNamespaces: only custom resources in these namespaces are
//     reconciled, and children go only to these namespaces;
//   - restrictedNamespaces: custom resources there are not reconciled, and no
//     child goes there (a restriction wins over an allowance);
//   - namespace: the informer watches this one namespace (children are not
//     restricted).
//
// Patterns are exact names, `prefix*` or `*suffix`. The empty namespace (a
// cluster-scoped object) always passes.
type NamespaceRules struct {
	Allowed    []string
	Restricted []string
	// Watch is the entry's `namespace:`; "" when absent.
	Watch string
	Pos   Pos
	// allowedPos is where Allowed was written (zero: not written).
	allowedPos Pos
}

// Permits reports whether a custom resource or child in namespace ns passes
// the allow and restrict lists.
func (r *NamespaceRules) Permits(ns string) bool {
	if r == nil || ns == "" {
		return true
	}
	for _, p := range r.Restricted {
		if MatchNamespace(p, ns) {
			return false
		}
	}
	if len(r.Allowed) == 0 {
		return true
	}
	for _, p := range r.Allowed {
		if MatchNamespace(p, ns) {
			return true
		}
	}
	return false
}

// Reconciles reports whether the entry reconciles custom resources in ns:
// they must pass Permits and, with namespace:, live there.
func (r *NamespaceRules) Reconciles(ns string) bool {
	if r == nil {
		return true
	}
	if r.Watch != "" && ns != r.Watch {
		return false
	}
	return r.Permits(ns)
}

// WatchNamespaces returns the exact namespaces the entry's custom resources
// can live in, nil when they cannot be listed (no restriction, a pattern, or
// only restrictions: Kubernetes watches and RBAC cannot exclude).
func (r *NamespaceRules) WatchNamespaces() []string {
	if r == nil {
		return nil
	}
	if r.Watch != "" {
		return []string{r.Watch}
	}
	if len(r.Allowed) == 0 {
		return nil
	}
	var out []string
	for _, p := range r.Allowed {
		if strings.Contains(p, "*") {
			return nil
		}
		if r.Permits(p) {
			out = append(out, p)
		}
	}
	return out
}

// ChildNamespaces returns the exact namespaces the entry's children can go
// to, nil when they cannot be listed.
func (r *NamespaceRules) ChildNamespaces() []string {
	if r == nil || len(r.Allowed) == 0 {
		return nil
	}
	return (&NamespaceRules{Allowed: r.Allowed, Restricted: r.Restricted}).WatchNamespaces()
}

// MatchNamespace reports whether ns matches pattern: an exact name,
// `prefix*` or `*suffix`.
func MatchNamespace(pattern, ns string) bool {
	switch {
	case pattern == ns:
		return true
	case strings.HasSuffix(pattern, "*"):
		return strings.HasPrefix(ns, strings.TrimSuffix(pattern, "*"))
	case strings.HasPrefix(pattern, "*"):
		return strings.HasSuffix(ns, strings.TrimPrefix(pattern, "*"))
	}
	return false
}

// namespaceRules decodes allowedNamespaces, restrictedNamespaces and
// namespace, and reports the entry keys upstream declares but ignores.
func (d *decoder) namespaceRules(e *CRDEntry, o object) {
	var r NamespaceRules
	set := false
	if f, ok := o["allowedNamespaces"]; ok {
		set = true
		r.Allowed, r.Pos, r.allowedPos = d.patterns(f, "allowedNamespaces"), d.pos(f.key), d.pos(f.key)
	}
	if f, ok := o["restrictedNamespaces"]; ok {
		set = true
		r.Restricted = d.patterns(f, "restrictedNamespaces")
		if r.Pos.IsZero() {
			r.Pos = d.pos(f.key)
		}
	}
	if f, ok := o["namespace"]; ok {
		set = true
		r.Watch = d.str(f.value, "namespace")
		if errs := validation.IsDNS1123Label(r.Watch); len(errs) > 0 {
			d.errorf(f.value, "namespace", "namespace %q is not a namespace name: %s", r.Watch, strings.Join(errs, "; "))
		}
		if r.Pos.IsZero() {
			r.Pos = d.pos(f.key)
		}
	}
	if set {
		e.Namespaces = &r
	}
	// Upstream's CRDEntry type has both fields commented out: it reads and
	// ignores them (pkg/types/types_crd_entry.go), so nothing changes here.
	for _, k := range []struct{ key, what string }{
		{"labels", "labels for the custom resources"},
		{"critical", "marking the whole controller degraded with this entry"},
	} {
		if f, ok := o[k.key]; ok {
			d.warnf(f.key, k.key, "%s: the original runtime reads and ignores this key (%s was removed from it), and so does this runtime; remove it", k.key, k.what)
		}
	}
}

// allowedNamespaces decodes an allowedNamespaces list found at path (the
// entry's, or operatorBox.runtime's) into the entry's rules.
func (d *decoder) allowedNamespaces(e *CRDEntry, f field, path string) {
	if e.Namespaces == nil {
		e.Namespaces = &NamespaceRules{Pos: d.pos(f.key)}
	}
	e.Namespaces.Allowed, e.Namespaces.allowedPos = d.patterns(f, path), d.pos(f.key)
}

// patterns decodes a list of namespace patterns at path.
func (d *decoder) patterns(f field, path string) []string {
	list := d.strList(f.value, path)
	for i, p := range list {
		if msg := checkPattern(p); msg != "" {
			d.errorf(Resolve(f.value).Content[i], fmt.Sprintf("%s[%d]", path, i), "%q %s", p, msg)
		}
	}
	return list
}

// checkPattern returns what is wrong with a namespace pattern, "" if nothing.
func checkPattern(p string) string {
	name := strings.TrimSuffix(strings.TrimPrefix(p, "*"), "*")
	switch {
	case strings.Count(p, "*") > 1 || strings.Contains(name, "*"):
		return "is not a namespace pattern: use an exact name, prefix* or *suffix"
	case name == "" && p != "":
		return "matches every namespace; remove the list instead"
	case name == "":
		return "is empty"
	}
	if !strings.Contains(p, "*") {
		if errs := validation.IsDNS1123Label(p); len(errs) > 0 {
			return "is not a namespace name: " + strings.Join(errs, "; ")
		}
	}
	return ""
}

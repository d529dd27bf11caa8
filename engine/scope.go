package engine

import (
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Where the operator reads objects: one answer for its caches (operator) and
// the RBAC of the install (manifests), so that the two never
// disagree.

// crNamespaces are the namespaces the entry's custom resources are
// reconciled in; nil: every namespace (or a cluster-scoped CRD).
func (e *Entry) crNamespaces() []string {
	if !e.Namespaced {
		return nil
	}
	return e.Namespaces.WatchNamespaces()
}

// ChildNamespaces are the namespaces a declaration's children can be in; nil
// when they cannot be listed (or are in none: cluster-scoped kinds).
// Children without namespace: or toNamespaces live with their custom
// resource; others where allowedNamespaces lets them.
func (e *Entry) ChildNamespaces(r *Resource) []string {
	if r.Kind.ClusterScoped {
		return nil
	}
	if r.Fields.Get("namespace") == nil && r.Fields.Get("toNamespaces") == nil {
		return e.crNamespaces()
	}
	return e.Namespaces.ChildNamespaces()
}

// ObservedNamespaces are the namespaces the objects of an observation can
// be in; nil when they cannot be listed (a namespace computed from the
// custom resource, a watch of every namespace, a cluster-scoped or unknown
// kind). A cross read without namespace reads in its custom resource's.
func (e *Entry) ObservedNamespaces(o *Observation) []string {
	src := o.Source
	if src.CRD == nil || src.CRD.Object.Spec.Scope == apiextensionsv1.ClusterScoped {
		return nil
	}
	if src.Namespace != nil {
		if Classify(src.Namespace.Str) == Literal && src.Namespace.Str != "" {
			return []string{src.Namespace.Str}
		}
		return nil
	}
	if src.Exposed() {
		return e.crNamespaces()
	}
	return nil
}

// Observes reports whether an entry of the plan observes objects of gvk
// (cross reads, watches): the operator then caches all of them, not only
// those labelled as its children.
func (p *Plan) Observes(gvk schema.GroupVersionKind) bool {
	for _, e := range p.Entries {
		if !e.Enabled {
			continue
		}
		for _, o := range e.Observations {
			if o.GVK == gvk {
				return true
			}
		}
		if e.EnrichesPods() && gvk == PodGVK {
			return true
		}
	}
	return false
}

// WatchNamespaces returns the namespaces in which the operator reads objects
// of gvk — the custom resources of the entries serving it, the children
// declared with it and the objects observed of it — sorted; nil means
// every namespace.
func (p *Plan) WatchNamespaces(gvk schema.GroupVersionKind) []string {
	set := map[string]bool{}
	add := func(nss []string) bool {
		if nss == nil {
			return false
		}
		for _, ns := range nss {
			set[ns] = true
		}
		return true
	}
	found := false
	for _, e := range p.Entries {
		if !e.Enabled {
			continue
		}
		if e.GVK == gvk {
			found = true
			if !add(e.crNamespaces()) {
				return nil
			}
		}
		for _, rs := range e.Hooks {
			for _, r := range rs {
				if r.GVK == nil || *r.GVK != gvk {
					continue
				}
				found = true
				if !add(e.ChildNamespaces(r)) {
					return nil
				}
			}
		}
		for _, o := range e.Observations {
			if o.GVK != gvk {
				continue
			}
			found = true
			if !add(e.ObservedNamespaces(o)) {
				return nil
			}
		}
		if e.EnrichesPods() && gvk == PodGVK {
			// A workload child's pods are where the child is.
			for _, rs := range e.Hooks {
				for _, r := range rs {
					if r.GVK == nil || PodOwnerKind(r.GVK.Kind) == "" {
						continue
					}
					found = true
					if !add(e.ChildNamespaces(r)) {
						return nil
					}
				}
			}
		}
	}
	if !found {
		return nil
	}
	out := make([]string, 0, len(set))
	for ns := range set {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out
}

package render

import (
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RBAC: roles, roleBindings, clusterRoles, clusterRoleBindings, written as
// Kubernetes writes them (rules, roleRef, subjects) with upstream's
// defaults: a roleRef's kind is Role on a RoleBinding and ClusterRole on a
// ClusterRoleBinding, a ServiceAccount subject without namespace is in the
// binding's namespace (the custom resource's for a ClusterRoleBinding), and
// a User or Group subject is of the RBAC API group (upstream:
// pkg/types/types_rbac.go).
//
// The API server lets an operator create a Role only with permissions it
// holds itself, unless it may escalate, and a binding only to a role whose
// permissions it holds, unless it may bind it: the grants say so, and
// `orkestra manifests` gives them to the operator.

func init() {
	escalate := func(resource string) []Grant {
		return []Grant{{Group: rbacv1.GroupName, Resources: []string{resource}, Verbs: []string{"escalate"}}}
	}
	register("roles", &Kind{Build: buildRole, Drift: driftRules, Grants: escalate("roles")})
	register("clusterRoles", &Kind{Build: buildClusterRole, Drift: driftRules, Grants: escalate("clusterroles")})
	register("roleBindings", &Kind{Build: buildRoleBinding, Drift: driftBinding, Recreates: []string{"roleRef"},
		Grants: []Grant{{Group: rbacv1.GroupName, Resources: []string{"roles", "clusterroles"}, Verbs: []string{"bind"}}}})
	register("clusterRoleBindings", &Kind{Build: buildClusterRoleBinding, Drift: driftBinding, Recreates: []string{"roleRef"},
		Grants: []Grant{{Group: rbacv1.GroupName, Resources: []string{"clusterroles"}, Verbs: []string{"bind"}}}})
}

func buildRole(b *builder) (client.Object, error) {
	r := &rbacv1.Role{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "Role"), ObjectMeta: b.meta()}
	b.f.into("rules", &r.Rules)
	return r, nil
}

func buildClusterRole(b *builder) (client.Object, error) {
	r := &rbacv1.ClusterRole{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "ClusterRole"), ObjectMeta: b.meta()}
	b.f.into("rules", &r.Rules)
	b.f.into("aggregationRule", &r.AggregationRule)
	return r, nil
}

func buildRoleBinding(b *builder) (client.Object, error) {
	rb := &rbacv1.RoleBinding{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "RoleBinding"), ObjectMeta: b.meta()}
	rb.RoleRef = b.roleRef("Role")
	rb.Subjects = b.subjects(b.c.Namespace)
	return rb, nil
}

func buildClusterRoleBinding(b *builder) (client.Object, error) {
	rb := &rbacv1.ClusterRoleBinding{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"), ObjectMeta: b.meta()}
	rb.RoleRef = b.roleRef("ClusterRole")
	rb.Subjects = b.subjects(b.r.cr.GetNamespace())
	return rb, nil
}

// roleRef reads roleRef: {name, kind (default kind), apiGroup}.
func (b *builder) roleRef(kind string) rbacv1.RoleRef {
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind}
	b.f.into("roleRef", &ref)
	if ref.Name == "" {
		b.f.fail("roleRef.name", "names the %s bound; it is required", kind)
	}
	if kind == "ClusterRole" && ref.Kind != kind {
		b.f.fail("roleRef.kind", "a ClusterRoleBinding binds a ClusterRole, not a %s", ref.Kind)
	}
	return ref
}

// subjects reads subjects, defaulting a ServiceAccount's namespace to ns
// and a User's or Group's API group.
func (b *builder) subjects(ns string) []rbacv1.Subject {
	var out []rbacv1.Subject
	b.f.into("subjects", &out)
	for i := range out {
		s := &out[i]
		switch s.Kind {
		case rbacv1.ServiceAccountKind:
			if s.Namespace == "" {
				s.Namespace = ns
			}
		case rbacv1.UserKind, rbacv1.GroupKind:
			if s.APIGroup == "" {
				s.APIGroup = rbacv1.GroupName
			}
		default:
			b.f.fail(fmt.Sprintf("subjects[%d].kind", i), "is %q; a subject is a ServiceAccount, User or Group", s.Kind)
		}
	}
	return out
}

// ---- drift ----

func driftRules(d *Drift, _ Managed, want, live client.Object) {
	switch w := want.(type) {
	case *rbacv1.Role:
		g := live.(*rbacv1.Role)
		if !eqPlain(w.Rules, g.Rules) {
			g.Rules = w.Rules
			d.add("rules")
		}
	case *rbacv1.ClusterRole:
		g := live.(*rbacv1.ClusterRole)
		if w.AggregationRule != nil && !subset(w.AggregationRule, g.AggregationRule) {
			// An aggregated role's rules are the controller's to fill.
			g.AggregationRule = w.AggregationRule
			d.add("aggregationRule")
		} else if w.AggregationRule == nil && !eqPlain(w.Rules, g.Rules) {
			g.Rules = w.Rules
			d.add("rules")
		}
	}
}

// driftBinding corrects subjects in place; a different roleRef, which the
// API server never changes, recreates the binding.
func driftBinding(d *Drift, _ Managed, want, live client.Object) {
	var wRef, gRef rbacv1.RoleRef
	var wSub []rbacv1.Subject
	var gSub *[]rbacv1.Subject
	switch w := want.(type) {
	case *rbacv1.RoleBinding:
		g := live.(*rbacv1.RoleBinding)
		wRef, gRef, wSub, gSub = w.RoleRef, g.RoleRef, w.Subjects, &g.Subjects
	case *rbacv1.ClusterRoleBinding:
		g := live.(*rbacv1.ClusterRoleBinding)
		wRef, gRef, wSub, gSub = w.RoleRef, g.RoleRef, w.Subjects, &g.Subjects
	}
	if wRef != gRef {
		d.add("roleRef")
		d.Recreate = true
		return
	}
	if !eqPlain(wSub, *gSub) {
		*gSub = wSub
		d.add("subjects")
	}
}

package manifests

import (
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/orkestra-cel/engine"
)

// clusterScopedGroups hold only cluster-scoped resources the operator uses:
// CRDs, admission policies and storage version migrations.
var clusterScopedGroups = map[string]bool{
	apiextensionsv1.GroupName:      true,
	"admissionregistration.k8s.io": true,
	"storagemigration.k8s.io":      true,
}

// namespaceScoped splits the derived rules of a namespace-scoped install:
// cluster-scoped resources (CRDs, admission policies, storage version
// migrations) stay cluster-wide; the custom resources, children and events
// go to a Role in the watched namespace. An entry whose CRD is
// cluster-scoped cannot be reconciled from one namespace: an error.
func namespaceScoped(plan *engine.Plan, rules []rbacv1.PolicyRule) (cluster, watched []rbacv1.PolicyRule, err error) {
	var clusterScoped []string
	for _, e := range plan.Entries {
		if e.Enabled && !e.Namespaced {
			clusterScoped = append(clusterScoped, fmt.Sprintf("%s (%s)", e.Name, e.GVK.Kind))
		}
	}
	if len(clusterScoped) > 0 {
		return nil, nil, fmt.Errorf("--watch-namespace: the custom resources of %s are cluster-scoped, so an operator watching one namespace never sees them; install cluster-wide (drop --watch-namespace)", strings.Join(clusterScoped, ", "))
	}
	for _, r := range rules {
		if len(r.APIGroups) == 1 && clusterScopedGroups[r.APIGroups[0]] {
			cluster = append(cluster, r)
		} else {
			watched = append(watched, r)
		}
	}
	return cluster, watched, nil
}

func (in *Install) watchRoleName() string { return in.Options.Name + "-watch" }

// addRole adds a Role with rules in namespace and its binding to subjects.
func (in *Install) addRole(namespace, name string, labels map[string]string, rules []rbacv1.PolicyRule, subjects []rbacv1.Subject) {
	in.add(FileRBAC, &rbacv1.Role{
		TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "Role"),
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Rules:      rules,
	})
	in.add(FileRBAC, &rbacv1.RoleBinding{
		TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "RoleBinding"),
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   subjects,
	})
}

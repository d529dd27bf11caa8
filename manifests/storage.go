package manifests

import (
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// StorageMigrationRules are what the storage migration of orkestra run
// needs (and the built-in certificate mode's CA bundle writes, which patch
// a subset of the same CRDs): the katalog's CRDs by name (read, progress
// annotation, status.storedVersions and the StorageMigrating condition) and
// StorageVersionMigrations (to use the cluster's built-in migrator; their
// names are generated, so they cannot be restricted by name), and list and
// patch on the CRDs' objects in every namespace (the unchanged writes), whether
// the katalog's entries are enabled or limited to some namespaces or not:
// stored objects anywhere must move to the storage version.
func StorageMigrationRules(plan *engine.Plan) []rbacv1.PolicyRule {
	names := plan.CRDNames()
	objects := verbSet{}
	for _, e := range plan.Entries {
		if e.Source.CRD != nil && e.Source.CRD.Origin != katalog.BuiltIn {
			objects.add(e.GVR.GroupResource(), "list", "patch")
		}
	}
	rules := toRules(objects)
	rules = append(rules, []rbacv1.PolicyRule{
		{APIGroups: []string{apiextensionsv1.GroupName}, Resources: []string{"customresourcedefinitions"}, ResourceNames: names, Verbs: []string{"get", "list", "watch", "patch"}},
		{APIGroups: []string{apiextensionsv1.GroupName}, Resources: []string{"customresourcedefinitions/status"}, ResourceNames: names, Verbs: []string{"update"}},
		{APIGroups: []string{"storagemigration.k8s.io"}, Resources: []string{"storageversionmigrations"}, Verbs: []string{"create", "get", "delete"}},
	}...)
	return rules
}

// mergeRules unions the verbs of rules on the same resources (without
// resource names), so that one resource is listed once in a ClusterRole.
func mergeRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	byResource := verbSet{}
	var out []rbacv1.PolicyRule
	for _, r := range rules {
		if len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
			out = append(out, r)
			continue
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				byResource.add(schema.GroupResource{Group: g, Resource: res}, r.Verbs...)
			}
		}
	}
	out = append(toRules(byResource), out...)
	sortRules(out)
	return out
}

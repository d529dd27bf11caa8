package manifests

import (
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/lifecycle/storage"
)

// StorageMigrationRules are what the storage migration of orkestra run
// needs (and the built-in certificate mode's CA bundle writes, which patch
// a subset of the same CRDs): the katalog's CRDs by name (read, progress
// annotation, status.storedVersions and the StorageMigrating condition) and
// StorageVersionMigrations (to use the cluster's built-in migrator; their
// names are generated, so they cannot be restricted by name). The unchanged
// writes to the CRDs' objects are in ClusterRules.
func StorageMigrationRules(plan *engine.Plan) []rbacv1.PolicyRule {
	names := storage.CRDNames(plan)
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{apiextensionsv1.GroupName}, Resources: []string{"customresourcedefinitions"}, ResourceNames: names, Verbs: []string{"get", "list", "watch", "patch"}},
		{APIGroups: []string{apiextensionsv1.GroupName}, Resources: []string{"customresourcedefinitions/status"}, ResourceNames: names, Verbs: []string{"update"}},
		{APIGroups: []string{"storagemigration.k8s.io"}, Resources: []string{"storageversionmigrations"}, Verbs: []string{"create", "get", "delete"}},
	}
	return rules
}

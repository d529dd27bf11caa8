package manifests

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// withEntryLines puts extra entry-level lines (allowedNamespaces, …) into a
// katalog written by writeKatalog.
func withEntryLines(t *testing.T, file, lines string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Replace(string(data), "      operatorBox:\n", lines+"      operatorBox:\n", 1)
	if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
}

func named(group, resource string, names ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, ResourceNames: names, Verbs: []string{"get"}}
}

// An entry limited to known namespaces gets its rules in Roles there, not
// cluster-wide; the operator's caches read those namespaces only
// (engine.Plan.WatchNamespaces, shared with operator.CacheOptions).
func TestRulesFollowAllowedNamespaces(t *testing.T) {
	file := writeKatalog(t, `
onReconcile:
  configMaps:
    - data: {a: b}
`)
	withEntryLines(t, file, "      allowedNamespaces: [apps, web]\n")
	a := Rules(compile(t, file))
	if !reflect.DeepEqual(a.Cluster, eventRules) {
		t.Errorf("cluster rules = %v; want only events", a.Cluster)
	}
	want := []rbacv1.PolicyRule{
		rule("", []string{"configmaps"}, "get", "list", "watch", "create", "update", "patch"),
		rule("test.orkestra.io", []string{"widgets"}, "get", "list", "watch", "patch"),
		rule("test.orkestra.io", []string{"widgets/finalizers"}, "update"),
	}
	for _, ns := range []string{"apps", "web"} {
		if !reflect.DeepEqual(a.Namespaced[ns], want) {
			t.Errorf("Role in %s:\n got %v\nwant %v", ns, a.Namespaced[ns], want)
		}
	}
	if len(a.Namespaced) != 2 || !reflect.DeepEqual(a.Children[0].Namespaces, []string{"apps", "web"}) {
		t.Errorf("namespaces %v, children %+v", a.Namespaced, a.Children)
	}

	// A pattern cannot be listed, nor can "all but": cluster-wide again.
	file = writeKatalog(t, `
onReconcile:
  configMaps:
    - data: {a: b}
`)
	withEntryLines(t, file, "      allowedNamespaces: [team-*]\n")
	if a := Rules(compile(t, file)); len(a.Namespaced) != 0 {
		t.Errorf("a pattern gave Roles: %v", a.Namespaced)
	}
}

// A copy needs get on exactly its source when the name is a literal: in a
// Role of fromNamespace when that is a literal, else cluster-wide by name; a
// computed name needs get on every object of the kind, and a warning says so.
// Upstream: pkg/resources/secrets/secret.go.
func TestRulesForCopySources(t *testing.T) {
	file := writeKatalog(t, `
onCreate:
  configMaps:
    - name: settings
      fromConfigMap: platform-settings
      fromNamespace: platform
    - name: flags
      fromConfigMap: flags
  secrets:
    - name: pull
      fromSecret: "${self.spec.image}"
      fromNamespace: platform
`)
	withEntryLines(t, file, "      allowedNamespaces: [apps]\n")
	a := Rules(compile(t, file))
	if !reflect.DeepEqual(a.Cluster, eventRules) {
		t.Errorf("cluster rules = %v; want only events", a.Cluster)
	}
	// In apps the operator reads every ConfigMap anyway (its children): the
	// copy of flags, which lives with the custom resource, needs no rule of
	// its own.
	wantApps := []rbacv1.PolicyRule{
		rule("", []string{"configmaps", "secrets"}, "get", "list", "watch", "create", "patch"),
		rule("test.orkestra.io", []string{"widgets"}, "get", "list", "watch", "patch"),
		rule("test.orkestra.io", []string{"widgets/finalizers"}, "update"),
	}
	wantPlatform := []rbacv1.PolicyRule{
		named("", "configmaps", "platform-settings"),
		rule("", []string{"secrets"}, "get"),
	}
	if len(a.Namespaced) != 2 || !reflect.DeepEqual(a.Namespaced["apps"], wantApps) || !reflect.DeepEqual(a.Namespaced["platform"], wantPlatform) {
		t.Errorf("Roles:\n got %v\nwant apps: %v\nplatform: %v", a.Namespaced, wantApps, wantPlatform)
	}
	want := `[widget] onCreate.secrets[0]: fromSecret is computed, so the operator may read every Secret in namespace platform (get); write the name as a literal to grant get on that one object only`
	if len(a.Warnings) != 1 || a.Warnings[0] != want {
		t.Errorf("warnings %q\nwant %q", a.Warnings, want)
	}

	// A literal name in a computed namespace: get on that name, in every
	// namespace.
	file = writeKatalog(t, `
onCreate:
  secrets:
    - name: pull
      fromSecret: registry
      fromNamespace: "${self.spec.image}"
`)
	withEntryLines(t, file, "      allowedNamespaces: [apps]\n")
	a = Rules(compile(t, file))
	if want := []rbacv1.PolicyRule{eventRules[0], named("", "secrets", "registry"), eventRules[1]}; !reflect.DeepEqual(a.Cluster, want) {
		t.Errorf("cluster rules = %v\nwant %v", a.Cluster, want)
	}
}

// The children of a forEach declaration whose item is gone are deleted only
// when it prunes (prune: true on it, its hook or operatorBox): delete is then
// granted even without a when. By default they stay (upstream's forEach only
// expands the current items), so nothing is deleted.
func TestRulesForForEach(t *testing.T) {
	for _, tc := range []struct {
		hook, hookPrune, prune string
		verbs                  []string
	}{
		{"onReconcile", "", "", []string{"get", "list", "watch", "create", "update", "patch"}},
		{"onReconcile", "  prune: true\n", "", []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		{"onCreate", "", "", []string{"get", "list", "watch", "create", "patch"}},
		{"onCreate", "", "      prune: true\n", []string{"get", "list", "watch", "create", "patch", "delete"}},
	} {
		a := Rules(compile(t, writeKatalog(t, tc.hook+":\n"+tc.hookPrune+`  configMaps:
    - name: "${self.metadata.name}-${each}"
      data: {a: b}
      forEach: {field: spec.hosts}
`+tc.prune)))
		if want := rule("", []string{"configmaps"}, tc.verbs...); !reflect.DeepEqual(a.Cluster[0], want) {
			t.Errorf("%s %q %q: %v, want %v", tc.hook, tc.hookPrune, tc.prune, a.Cluster[0], want)
		}
	}
}

// A Job whose when stops holding stays (upstream's pkg/runners/jobs.go has no
// delete branch) unless prune: true: only then is delete granted.
func TestRulesForPrunedJobs(t *testing.T) {
	for _, tc := range []struct {
		prune string
		verbs []string
	}{
		{"", []string{"get", "list", "watch", "create", "patch"}},
		{"      prune: true\n", []string{"get", "list", "watch", "create", "patch", "delete"}},
	} {
		a := Rules(compile(t, writeKatalog(t, `onReconcile:
  jobs:
    - name: "${self.metadata.name}-job"
      image: busybox
      when: "self.spec.image == 'x'"
`+tc.prune)))
		want := rule("batch", []string{"jobs"}, tc.verbs...)
		if !slices.ContainsFunc(a.Cluster, func(r rbacv1.PolicyRule) bool { return reflect.DeepEqual(r, want) }) {
			t.Errorf("prune %q: %v, want among them %v", tc.prune, a.Cluster, want)
		}
	}
}

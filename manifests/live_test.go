package manifests

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// The RBAC of live inputs: get, list and watch on exactly the kinds an
// entry observes, where their objects can be (a literal namespace: a Role
// there); get on the one Secret an external call's auth reads; the calls
// listed on the NetworkPolicy, with a note.
func TestLiveInputRules(t *testing.T) {
	plan := compile(t, writeKatalog(t, `
cross:
  - crd: widget
    selector: {name: "${self.spec.image}"}
    as: peer
watch:
  - apiVersion: v1
    kind: ConfigMap
    namespace: shared
    name: settings
  - apiVersion: apps/v1
    kind: Deployment
    keyFrom: {label: example.com/widget}
onReconcile:
  external:
    - name: api
      url: "https://api.example.com/${self.metadata.name}"
      method: POST
      auth: {secretRef: {name: api-token, namespace: creds}}
`))
	a := Rules(plan)
	want := []rbacv1.PolicyRule{
		eventRules[0],
		rule("apps", []string{"deployments"}, "get", "list", "watch"),
		eventRules[1],
		rule("test.orkestra.io", []string{"widgets"}, "get", "list", "watch", "patch"),
		rule("test.orkestra.io", []string{"widgets/finalizers"}, "update"),
	}
	if !reflect.DeepEqual(a.Cluster, want) {
		t.Errorf("cluster rules:\n got %v\nwant %v", a.Cluster, want)
	}
	wantNS := map[string][]rbacv1.PolicyRule{
		"shared": {rule("", []string{"configmaps"}, "get", "list", "watch")},
		"creds":  {{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"api-token"}, Verbs: []string{"get"}}},
	}
	if !reflect.DeepEqual(a.Namespaced, wantNS) {
		t.Errorf("namespaced rules:\n got %v\nwant %v", a.Namespaced, wantNS)
	}

	in, err := Generate(plan, Options{Namespace: "orkestra-system", Name: "orkestra"})
	if err != nil {
		t.Fatal(err)
	}
	var ann map[string]string
	for _, o := range in.Objects {
		if o.File == FileNetworkPolicy {
			ann = o.Object.GetAnnotations()
		}
	}
	if got := ann[AnnotationExternalCalls]; got != "widget/api POST https://api.example.com/${self.metadata.name}" {
		t.Errorf("NetworkPolicy %s = %v", AnnotationExternalCalls, got)
	}
	if len(in.Notes) == 0 || !strings.Contains(strings.Join(in.Notes, "\n"), "the katalog makes 1 external call(s)") {
		t.Errorf("notes %v", in.Notes)
	}
}

// A cross read with source: is an egress like an external call (on the
// NetworkPolicy's annotation, its URL as asked) and reads its token's
// Secret; enrich: [pods] reads Pods where the workload children are.
func TestRemoteReadAndEnrichRules(t *testing.T) {
	file := writeKatalog(t, `
cross:
  - crd: loader
    selector: {name: "${self.metadata.name}"}
    source:
      host: "http://loader.loader-system:8080"
      protocol: cr
      auth: {secretRef: {name: loader-token, namespace: creds}}
    as: loader
onReconcile:
  deployments:
    - image: nginx
      readyWhen: ["true"]
  configMaps:
    - data: {pods: "{{ podCount .children.deployment }}"}
`)
	withEntryLines(t, file, "      allowedNamespaces: [apps]\n      enrich: [pods]\n")
	plan := compile(t, file)
	a := Rules(plan)
	pods := rule("", []string{"pods"}, "get", "list", "watch")
	if !slices.ContainsFunc(a.Namespaced["apps"], func(r rbacv1.PolicyRule) bool { return reflect.DeepEqual(r, pods) }) {
		t.Errorf("Role in apps lacks %v:\n%v", pods, a.Namespaced["apps"])
	}
	secret := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"loader-token"}, Verbs: []string{"get"}}
	if !reflect.DeepEqual(a.Namespaced["creds"], []rbacv1.PolicyRule{secret}) {
		t.Errorf("Role in creds = %v, want %v", a.Namespaced["creds"], secret)
	}
	in, err := Generate(plan, Options{Namespace: "orkestra-system", Name: "orkestra"})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range in.Objects {
		if o.File == FileNetworkPolicy {
			if got, want := o.Object.GetAnnotations()[AnnotationExternalCalls], "widget/cross.loader GET http://loader.loader-system:8080/katalog/loader/cr/{namespace}/{name}"; got != want {
				t.Errorf("NetworkPolicy %s = %q, want %q", AnnotationExternalCalls, got, want)
			}
		}
	}
}

package manifests

import (
	"reflect"
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

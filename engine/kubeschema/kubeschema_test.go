package kubeschema

import (
	"runtime/debug"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/katalog"
)

// Every built-in kind a katalog may declare has its published schema, from
// the Kubernetes release of the pinned k8s.io/api (else `go generate`).
func TestEveryBuiltInKindHasItsSchema(t *testing.T) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("no build info")
	}
	for _, d := range info.Deps {
		if d.Path == "k8s.io/api" && Release() != "v1"+strings.TrimPrefix(d.Version, "v0") {
			t.Errorf("openapi.json.gz is from Kubernetes %s, k8s.io/api is %s: run go generate ./engine/kubeschema/", Release(), d.Version)
		}
	}
	for key, k := range katalog.ResourceKinds {
		if k.Open {
			continue
		}
		s := Schema(schema.FromAPIVersionAndKind(k.APIVersion, k.Kind))
		if s == nil {
			t.Errorf("%s: no schema for %s %s; run go generate ./engine/kubeschema/", key, k.APIVersion, k.Kind)
			continue
		}
		if _, ok := s.Properties["metadata"]; !ok {
			t.Errorf("%s: the schema has no metadata", key)
		}
	}
	d := Schema(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
	rr := d.Properties["status"].Properties["readyReplicas"]
	port := d.Properties["spec"].Properties["template"].Properties["spec"].Properties["containers"].Items.Properties["ports"].Items.Properties["containerPort"]
	cpu := d.Properties["spec"].Properties["template"].Properties["spec"].Properties["containers"].Items.Properties["resources"].Properties["limits"].AdditionalProperties.Structural
	if rr.Type != "integer" || port.Type != "integer" || !cpu.XIntOrString {
		t.Errorf("readyReplicas %q, containerPort %q, a limit int-or-string %v", rr.Type, port.Type, cpu.XIntOrString)
	}
	if Schema(schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Thing"}) != nil {
		t.Error("a custom kind has a built-in schema")
	}
}

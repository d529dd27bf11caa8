package conversion_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	celgo "github.com/google/cel-go/cel"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/orkspace/orkestra-cel/engine"
	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/conversion"
	"github.com/orkspace/orkestra-cel/engine/gotmpl"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/objgen"
)

func compile(t testing.TB, path string) *engine.Plan {
	t.Helper()
	k, diags := katalog.Load(path)
	if diags.HasErrors() {
		t.Fatalf("load %s: %v", path, diags)
	}
	cel, err := celengine.New(celengine.Options{Libraries: []celgo.EnvOption{gotmpl.CELLibrary()}})
	if err != nil {
		t.Fatal(err)
	}
	plan, cdiags := engine.Compile(k, engine.Backends{CEL: cel, Legacy: gotmpl.New(cel)}, engine.CompileOptions{})
	if cdiags.HasErrors() {
		t.Fatalf("compile %s: %v", path, cdiags)
	}
	return plan
}

func obj(t testing.TB, y string) *unstructured.Unstructured {
	t.Helper()
	// Decode as the API server does (JSON numbers → int64 / float64).
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatal(err)
	}
	return u
}

func readObj(t testing.TB, path string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return obj(t, string(b))
}

const website = "../../examples/website/katalog.yaml"

func TestWebsiteUpAndBack(t *testing.T) {
	c := conversion.New(compile(t, website), conversion.Options{})
	in := readObj(t, "../../examples/website/website-v1alpha1.yaml")
	orig := in.DeepCopy()

	up, err := c.Convert(in, "demo.orkestra.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in.Object, orig.Object) {
		t.Fatal("Convert modified its input")
	}
	if up.GetAPIVersion() != "demo.orkestra.io/v1" || up.GetName() != "hello" || up.GetNamespace() != "default" {
		t.Fatalf("identity changed: %v %s/%s", up.GetAPIVersion(), up.GetNamespace(), up.GetName())
	}
	wantSpec := map[string]any{"image": "nginx:1.27", "replicas": int64(2), "port": int64(8080), "tier": "pro", "seo": map[string]any{"enabled": false}}
	if got := up.Object["spec"]; !reflect.DeepEqual(got, wantSpec) {
		t.Fatalf("v1 spec = %#v\nwant %#v", got, wantSpec)
	}
	stash := up.GetAnnotations()[conversion.StashAnnotation]
	if stash != `{"v1alpha1":{"set":{"spec":{"theme":"dark"}}}}` {
		t.Fatalf("stash = %s", stash)
	}

	back, err := c.Convert(up, "demo.orkestra.io/v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Object, orig.Object) {
		t.Fatalf("round trip lost data:\n got %#v\nwant %#v", back.Object, orig.Object)
	}
}

func TestWebsiteDownAndBackKeepsSEO(t *testing.T) {
	c := conversion.New(compile(t, website), conversion.Options{})
	in := readObj(t, "../../examples/website/website-v1.yaml")
	down, err := c.Convert(in, "demo.orkestra.io/v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	if theme, _, _ := unstructured.NestedString(down.Object, "spec", "theme"); theme != "default" {
		t.Fatalf("theme = %q, want the path's literal default", theme)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(down.Object, "spec", "seo"); found {
		t.Fatal("v1alpha1 cannot hold seo")
	}
	back, err := c.Convert(down, "demo.orkestra.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Object, in.Object) {
		t.Fatalf("round trip lost data:\n got %#v\nwant %#v", back.Object, in.Object)
	}
}

func TestComputedFieldsWinOverRestored(t *testing.T) {
	c := conversion.New(compile(t, website), conversion.Options{})
	in := readObj(t, "../../examples/website/website-v1.yaml")
	down, err := c.Convert(in, "demo.orkestra.io/v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	// A client edits the object at v1alpha1: the image changes and the theme too.
	edited := down.DeepCopy()
	_ = unstructured.SetNestedField(edited.Object, "nginx:2", "spec", "image")
	back, err := c.Convert(edited, "demo.orkestra.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	img, _, _ := unstructured.NestedString(back.Object, "spec", "image")
	enabled, _, _ := unstructured.NestedBool(back.Object, "spec", "seo", "enabled")
	keywords, _, _ := unstructured.NestedStringSlice(back.Object, "spec", "seo", "keywords")
	if img != "nginx:2" {
		t.Fatalf("image = %q: the value computed from self must win", img)
	}
	if !enabled || !reflect.DeepEqual(keywords, []string{"shoes", "boots"}) {
		t.Fatalf("seo not restored over the path's literal: enabled=%v keywords=%v", enabled, keywords)
	}
}

func TestSameVersionIsUnchanged(t *testing.T) {
	c := conversion.New(compile(t, website), conversion.Options{})
	in := readObj(t, "../../examples/website/website-v1.yaml")
	out, err := c.Convert(in, "demo.orkestra.io/v1")
	if err != nil || !reflect.DeepEqual(out.Object, in.Object) {
		t.Fatalf("same version: %v %v", err, out)
	}
}

func TestAbsentPlainReferenceLeavesTargetUnset(t *testing.T) {
	c := conversion.New(compile(t, website), conversion.Options{})
	in := obj(t, `
apiVersion: demo.orkestra.io/v1alpha1
kind: Website
metadata: {name: bare, namespace: ns1, uid: "1234", resourceVersion: "7", labels: {a: b}}
spec: {image: nginx}
status: {phase: Running, readyReplicas: 1}
`)
	up, err := c.Convert(in, "demo.orkestra.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	// The v1 schema's defaults fill what the path leaves unset, as the API
	// server would.
	want := map[string]any{"image": "nginx", "seo": map[string]any{"enabled": false}, "port": int64(80), "replicas": int64(1), "tier": "free"}
	if !reflect.DeepEqual(up.Object["spec"], want) {
		t.Fatalf("spec = %#v, want %#v", up.Object["spec"], want)
	}
	meta := up.Object["metadata"].(map[string]any)
	for k, v := range map[string]any{"name": "bare", "namespace": "ns1", "uid": "1234", "resourceVersion": "7"} {
		if meta[k] != v {
			t.Errorf("metadata.%s = %v, want %v", k, meta[k], v)
		}
	}
	if !reflect.DeepEqual(up.Object["status"], map[string]any{"phase": "Running", "readyReplicas": int64(1)}) {
		t.Fatalf("status must pass through: %#v", up.Object["status"])
	}
	back, err := c.Convert(up, "demo.orkestra.io/v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	// At v1alpha1 too the API server applies the schema's defaults.
	want = map[string]any{"image": "nginx", "port": int64(80), "replicas": int64(1), "tier": "free"}
	if !reflect.DeepEqual(back.Object["spec"], want) {
		t.Fatalf("round trip: spec = %#v, want %#v", back.Object["spec"], want)
	}
	if _, ok := back.GetAnnotations()[conversion.StashAnnotation]; ok {
		t.Fatalf("nothing to stash for a defaulted object: %v", back.GetAnnotations())
	}
}

func TestRouteThroughStorageVersion(t *testing.T) {
	c := conversion.New(compile(t, "testdata/threeway/katalog.yaml"), conversion.Options{})
	in := obj(t, `
apiVersion: test.orkestra.io/v1alpha1
kind: Gadget
metadata: {name: g, namespace: default}
spec: {hostPort: "localhost:8080", size: 3, color: red}
status: {phase: Ready}
`)
	beta, err := c.Convert(in, "test.orkestra.io/v1beta1")
	if err != nil {
		t.Fatal(err)
	}
	wantSpec := map[string]any{"address": map[string]any{"host": "localhost", "port": "8080"}, "size": int64(3)}
	if !reflect.DeepEqual(beta.Object["spec"], wantSpec) {
		t.Fatalf("v1beta1 spec = %#v", beta.Object["spec"])
	}
	if beta.GetLabels()["converted-from"] != "v1alpha1" {
		t.Fatalf("labels mapped by the first hop must survive: %v", beta.GetLabels())
	}
	v1, err := c.Convert(in, "test.orkestra.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(v1.Object, "spec", "port"); got != "8080" {
		t.Fatalf("the Kubernetes e2e case: hostPort split into host and port, got port %q", got)
	}
	back, err := c.Convert(beta, "test.orkestra.io/v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	spec := back.Object["spec"].(map[string]any)
	if spec["hostPort"] != "localhost:8080" || spec["color"] != "red" || spec["size"] != int64(3) {
		t.Fatalf("back at v1alpha1: %#v", spec)
	}
}

func TestErrorsNameObjectPathFieldExpression(t *testing.T) {
	dir := t.TempDir()
	crd, _ := os.ReadFile("testdata/threeway/crd.yaml")
	_ = os.WriteFile(filepath.Join(dir, "crd.yaml"), crd, 0o644)
	_ = os.WriteFile(filepath.Join(dir, "k.yaml"), []byte(`
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
spec:
  crds:
    gadget:
      crdFile: ./crd.yaml
      apiTypes: {group: test.orkestra.io, version: v1, kind: Gadget}
      conversion:
        storageVersion: v1
        paths:
          - from: v1alpha1
            to: v1
            spec:
              host: "${self.spec.hostPort}"
              size: "${self.spec.size / 0}"
          - from: v1
            to: v1alpha1
            spec:
              hostPort: "${self.spec.host}"
          - from: v1beta1
            to: v1
            spec: {host: x}
          - from: v1
            to: v1beta1
            spec: {address: {host: x}}
`), 0o644)
	c := conversion.New(compile(t, filepath.Join(dir, "k.yaml")), conversion.Options{})
	in := obj(t, `{apiVersion: test.orkestra.io/v1alpha1, kind: Gadget, metadata: {name: g1, namespace: team-a}, spec: {hostPort: h, size: 2}}`)
	_, err := c.Convert(in, "test.orkestra.io/v1")
	if err == nil {
		t.Fatal("division by zero must fail the conversion")
	}
	for _, want := range []string{"Gadget team-a/g1", "from v1alpha1 to v1", "conversion.paths[0].spec.size", "${self.spec.size / 0}", "k.yaml:16:22", "division by zero"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	for _, tc := range []struct {
		obj, to, want string
	}{
		{`{apiVersion: test.orkestra.io/v1alpha1, kind: Widget, metadata: {name: w}}`, "test.orkestra.io/v1", "declares no conversion for Widget.test.orkestra.io"},
		{`{apiVersion: test.orkestra.io/v1alpha1, kind: Gadget, metadata: {name: w}, spec: {hostPort: a}}`, "test.orkestra.io/v9", `version "v9" is not served`},
		{`{apiVersion: other.io/v1, kind: Gadget, metadata: {name: w}}`, "test.orkestra.io/v1", "cannot convert between groups"},
		{`{apiVersion: test.orkestra.io/v1alpha1, kind: Gadget, metadata: {name: w, annotations: {"conversion.orkestra.orkspace.io/stash": "{oops"}}, spec: {hostPort: a}}`, "test.orkestra.io/v1", "is not valid JSON"},
	} {
		_, err := c.Convert(obj(t, tc.obj), tc.to)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Convert(%s → %s) error = %v, want %q", tc.obj, tc.to, err, tc.want)
		}
	}
}

func TestStashIsBounded(t *testing.T) {
	c := conversion.New(compile(t, website), conversion.Options{MaxStashBytes: 40})
	in := readObj(t, "../../examples/website/website-v1alpha1.yaml")
	_ = unstructured.SetNestedField(in.Object, strings.Repeat("x", 64), "spec", "theme")
	_, err := c.Convert(in, "demo.orkestra.io/v1")
	if err == nil || !strings.Contains(err.Error(), "over the 40-byte limit") {
		t.Fatalf("err = %v", err)
	}
}

// TestRoundTripProperty: for every ordered pair of served versions, objects
// generated from the source schema come back identical after A→B→A.
func TestRoundTripProperty(t *testing.T) {
	for _, path := range []string{website, "testdata/threeway/katalog.yaml"} {
		plan := compile(t, path)
		c := conversion.New(plan, conversion.Options{})
		for gk, conv := range plan.Conversions {
			for _, a := range conv.Versions {
				for _, b := range conv.Versions {
					if a == b {
						continue
					}
					gvk := schema.GroupVersionKind{Group: gk.Group, Version: a, Kind: gk.Kind}
					for i, o := range objgen.Generate(conv.Schemas[a], gvk, 200, objgen.Options{Seed: int64(len(a)*31 + len(b))}) {
						// The API server defaults what it stores and serves.
						defaulting.Default(o, conv.Schemas[a])
						in := &unstructured.Unstructured{Object: o}
						orig := in.DeepCopy()
						mid, err := c.Convert(in, gk.Group+"/"+b)
						if err != nil {
							t.Fatalf("%s %s→%s object %d: %v", path, a, b, i, err)
						}
						if err := objgen.Validate(conv.Schemas[b], withoutStash(mid.Object)); err != nil {
							t.Fatalf("%s %s→%s object %d does not validate at %s: %v\n%#v", path, a, b, i, b, err, mid.Object)
						}
						back, err := c.Convert(mid, gk.Group+"/"+a)
						if err != nil {
							t.Fatalf("%s %s→%s→%s object %d: %v", path, a, b, a, i, err)
						}
						if !reflect.DeepEqual(back.Object, orig.Object) {
							t.Fatalf("%s %s→%s→%s object %d lost data:\n got %#v\nwant %#v", path, a, b, a, i, back.Object, orig.Object)
						}
					}
				}
			}
		}
	}
}

func withoutStash(o map[string]any) map[string]any {
	u := (&unstructured.Unstructured{Object: o}).DeepCopy()
	ann := u.GetAnnotations()
	delete(ann, conversion.StashAnnotation)
	u.SetAnnotations(ann)
	if len(ann) == 0 {
		unstructured.RemoveNestedField(u.Object, "metadata", "annotations")
	}
	return u.Object
}

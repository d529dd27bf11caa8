package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/orkspace/orkestra-cel/manifests"
)

const websiteKatalog = "../../examples/website/katalog.yaml"

func execManifests(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := newManifestsCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err = cmd.Execute()
	return out.String(), errOut.String(), err
}

func manifestDocs(t *testing.T, out string) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, doc := range strings.Split(out, "\n---\n")[1:] {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs
}

func findObject(t *testing.T, objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind {
			return o
		}
	}
	t.Fatalf("no %s in the output", kind)
	return nil
}

// TestManifestsCommand: the command prints what the generator builds, with
// the flags applied, and -o writes exactly deploy/base for the example.
func TestManifestsCommand(t *testing.T) {
	out, _, err := execManifests(t, "-f", websiteKatalog)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := (&katalogFlags{files: []string{websiteKatalog}}).compile(&bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	in, err := manifests.Generate(plan, manifests.Options{Image: defaultImage(), KatalogPaths: []string{websiteKatalog}})
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := in.WriteYAML(&want); err != nil {
		t.Fatal(err)
	}
	if out != want.String() {
		t.Fatal("orkestra manifests does not print the generator's output")
	}

	out, _, err = execManifests(t, "-f", websiteKatalog, "--cert-manager", "-n", "ops", "--name", "web", "--replicas", "3", "--image", "registry.example/orkestra:v9")
	if err != nil {
		t.Fatal(err)
	}
	objs := manifestDocs(t, out)
	d := findObject(t, objs, "Deployment")
	if d.GetNamespace() != "ops" || d.GetName() != "web" {
		t.Fatalf("deployment %s/%s", d.GetNamespace(), d.GetName())
	}
	if r, _, _ := unstructured.NestedFieldNoCopy(d.Object, "spec", "replicas"); r != float64(3) {
		t.Fatalf("replicas %v", r)
	}
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	c := containers[0].(map[string]any)
	if c["image"] != "registry.example/orkestra:v9" || !strings.Contains(strings.Join(toStrings(c["args"]), " "), "--tls-cert=/etc/orkestra/tls/tls.crt") {
		t.Fatalf("container %v", c)
	}
	findObject(t, objs, "Certificate")
	crd := findObject(t, objs, "CustomResourceDefinition")
	if crd.GetAnnotations()[manifests.AnnotationInjectCA] != "ops/web-webhook" {
		t.Fatalf("annotations %v", crd.GetAnnotations())
	}
	if svc, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "webhook", "clientConfig", "service", "namespace"); svc != "ops" {
		t.Fatalf("conversion service namespace %q", svc)
	}

	// -o: the kustomize base of the example is deploy/base, byte for byte.
	dir := t.TempDir()
	if _, _, err := execManifests(t, "-f", websiteKatalog, "-o", dir, "--image", manifests.DefaultImage); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir("../../deploy/base")
	if err != nil {
		t.Fatal(err)
	}
	written, _ := os.ReadDir(dir)
	if len(entries) != len(written) {
		t.Fatalf("deploy/base has %d files, orkestra manifests -o writes %d", len(entries), len(written))
	}
	for _, e := range entries {
		want, _ := os.ReadFile(filepath.Join("../../deploy/base", e.Name()))
		got, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("deploy/base/%s differs from `orkestra manifests -f examples/website/katalog.yaml -o DIR`; run go generate ./manifests/", e.Name())
		}
	}

	if _, _, err := execManifests(t, "-f", websiteKatalog, "--replicas", "0"); err == nil || !strings.Contains(err.Error(), "--replicas") {
		t.Fatalf("--replicas 0: %v", err)
	}
	if _, stderr, err := execManifests(t, "-f", "testdata/missing.yaml"); err == nil || stderr == "" {
		t.Fatalf("a katalog that does not load must fail with its problems on stderr: %v %q", err, stderr)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestGeneratedDeploymentArgsAreRunFlags: the container args of both modes
// parse as `orkestra run` flags, so the installed pods start.
func TestGeneratedDeploymentArgsAreRunFlags(t *testing.T) {
	for _, mode := range [][]string{nil, {"--cert-manager"}, {"--watch-namespace", "team-a"}} {
		out, _, err := execManifests(t, append([]string{"-f", websiteKatalog}, mode...)...)
		if err != nil {
			t.Fatal(err)
		}
		d := findObject(t, manifestDocs(t, out), "Deployment")
		containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
		args := toStrings(containers[0].(map[string]any)["args"])
		if args[0] != "run" {
			t.Fatalf("args %v", args)
		}
		run := newRunCmd()
		if err := run.ParseFlags(args[1:]); err != nil {
			t.Errorf("orkestra manifests %v: the Deployment's args %v are not `orkestra run` flags: %v (the built-in certificate flags come from certs.Options.AddFlags; see webhook/certs)", mode, args[1:], err)
		}
	}
}

package manifests

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	celgo "github.com/google/cel-go/cel"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/orkspace/orkestra-cel/engine"
	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/gotmpl"
	"github.com/orkspace/orkestra-cel/katalog"
)

func compile(t *testing.T, files ...string) *engine.Plan {
	t.Helper()
	k, diags := katalog.Load(files...)
	if diags.HasErrors() {
		t.Fatalf("loading %v: %v", files, diags.Errors())
	}
	cel, err := celengine.New(celengine.Options{Libraries: []celgo.EnvOption{gotmpl.CELLibrary()}})
	if err != nil {
		t.Fatal(err)
	}
	plan, cdiags := engine.Compile(k, engine.Backends{CEL: cel, Legacy: gotmpl.New(cel)}, engine.CompileOptions{})
	if cdiags.HasErrors() {
		t.Fatalf("compiling %v: %v", files, cdiags.Errors())
	}
	return plan
}

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.test.orkestra.io
spec:
  group: test.orkestra.io
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                image: {type: string, maxLength: 64}
                kind: {type: string, maxLength: 64}
                enabled: {type: boolean}
                hosts: {type: array, maxItems: 4, items: {type: string, maxLength: 64}}
`

// writeKatalog writes a one-entry katalog for the Widget CRD (no status
// subresource) with the given operatorBox body.
func writeKatalog(t *testing.T, box string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "katalog", "crds"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "katalog", "crds", "widget.yaml"), []byte(widgetCRD), 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(`apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata:
  name: Widgets & Co
spec:
  crds:
    widget:
      crdFile: ./crds/widget.yaml
      apiTypes: {group: test.orkestra.io, version: v1, kind: Widget, plural: widgets}
      operatorBox:
`)
	for _, line := range strings.Split(strings.Trim(box, "\n"), "\n") {
		b.WriteString("        " + line + "\n")
	}
	if err := os.MkdirAll(filepath.Join(dir, "katalog"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "katalog", "katalog.yaml")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func rule(group string, resources []string, verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: resources, Verbs: verbs}
}

var eventRules = []rbacv1.PolicyRule{
	rule("", []string{"events"}, "create", "patch"),
	rule("events.k8s.io", []string{"events"}, "create", "patch"),
}

func TestClusterRulesWebsite(t *testing.T) {
	plan := compile(t, filepath.Join("..", "examples", "website", "katalog.yaml"))
	a := Rules(plan)
	rules, children, warnings := a.Cluster, a.Children, a.Warnings
	want := []rbacv1.PolicyRule{
		// A Service and a ConfigMap have a when: update for drift, delete
		// when it stops holding.
		rule("", []string{"configmaps", "services"}, "get", "list", "watch", "create", "update", "patch", "delete"),
		eventRules[0],
		// The Deployment is drift-corrected and unconditional: never deleted.
		rule("apps", []string{"deployments"}, "get", "list", "watch", "create", "update", "patch"),
		rule("demo.orkestra.io", []string{"websites"}, "get", "list", "watch", "patch"),
		rule("demo.orkestra.io", []string{"websites/finalizers"}, "update"),
		rule("demo.orkestra.io", []string{"websites/status"}, "patch"),
		eventRules[1],
	}
	if !reflect.DeepEqual(rules, want) {
		t.Fatalf("rules:\n got %v\nwant %v", rules, want)
	}
	if len(children) != 3 || len(warnings) != 0 {
		t.Fatalf("children %v warnings %v", children, warnings)
	}
}

func TestClusterRulesPerKind(t *testing.T) {
	file := writeKatalog(t, `
onCreate:
  jobs:
    - name: "${self.metadata.name}-init"
      image: busybox
  secrets:
    - name: "${self.metadata.name}-token"
      once: true
      rotateAfter: 30d
      data:
        token: "${randomHex(16)}"
  configMaps:
    - name: "${self.metadata.name}-seed"
      data: {a: b}
  services:
    - name: "${self.metadata.name}-headless"
      headless: true
      reconcile: true
      port: 80
onReconcile:
  pods:
    - name: "${self.metadata.name}"
      image: "${self.spec.image}"
  jobs:
    - name: "${self.metadata.name}-job"
      image: busybox
      when: "self.spec.?enabled.orValue(false)"
  custom:
    - apiVersion: test.orkestra.io/v1
      kind: Widget
      name: "${self.metadata.name}-child"
      spec: {image: x}
    - apiVersion: example.com/v1
      kind: Gizmo
      name: "${self.metadata.name}-gizmo"
    - apiVersion: example.com/v1
      kind: "${self.spec.kind}"
      name: "${self.metadata.name}-any"
onDelete:
  jobs:
    - name: "${self.metadata.name}-cleanup"
      image: busybox
`)
	plan := compile(t, file)
	a := Rules(plan)
	rules, warnings := a.Cluster, a.Warnings
	want := []rbacv1.PolicyRule{
		// onCreate ConfigMap: applied once, never updated or deleted; a
		// `once` secret with rotateAfter is regenerated with an apply.
		rule("", []string{"configmaps", "secrets"}, "get", "list", "watch", "create", "patch"),
		eventRules[0],
		// Pods are recreated on drift (delete + apply), never updated.
		rule("", []string{"pods"}, "get", "list", "watch", "create", "patch", "delete"),
		// reconcile: true with headless (immutable clusterIP): recreated.
		rule("", []string{"services"}, "get", "list", "watch", "create", "update", "patch", "delete"),
		// Jobs are create-only, and stay when their when stops holding
		// (no prune: true).
		rule("batch", []string{"jobs"}, "get", "list", "watch", "create", "patch"),
		rule("events.k8s.io", []string{"events"}, "create", "patch"),
		// The guessed custom kind.
		rule("example.com", []string{"gizmos"}, "get", "list", "watch", "create", "update", "patch"),
		// The katalog's own CRD as a child: its plural; no status subresource.
		rule("test.orkestra.io", []string{"widgets"}, "get", "list", "watch", "create", "update", "patch"),
		rule("test.orkestra.io", []string{"widgets/finalizers"}, "update"),
	}
	if !reflect.DeepEqual(rules, want) {
		t.Fatalf("rules:\n got %+v\nwant %+v", rules, want)
	}
	if len(warnings) != 2 ||
		!strings.Contains(warnings[0], "onReconcile.custom[2]") || !strings.Contains(warnings[0], "computed") ||
		!strings.Contains(warnings[1], `"gizmos.example.com" was guessed`) {
		t.Fatalf("warnings: %q", warnings)
	}
}

func TestKatalogFilesInSubdirectories(t *testing.T) {
	file := writeKatalog(t, `
onReconcile:
  configMaps:
    - data: {a: b}
`)
	plan := compile(t, file)
	in, err := Generate(plan, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if in.LeaseName != "orkestra-widgets-co" {
		t.Fatalf("lease %q", in.LeaseName)
	}
	us, err := in.Unstructured()
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range us {
		switch u.GetKind() {
		case "ConfigMap":
			data := u.Object["data"].(map[string]any)
			if _, ok := data["katalog.yaml"]; !ok {
				t.Fatalf("ConfigMap keys %v", keys2(data))
			}
			if data["crds__widget.yaml"] != widgetCRD {
				t.Fatal("the CRD manifest is not shipped verbatim")
			}
		case "Deployment":
			d := u.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			c := d["containers"].([]any)[0].(map[string]any)
			if args := c["args"].([]any); args[1] != "--katalog=/etc/orkestra/katalog/katalog.yaml" {
				t.Fatalf("args %v", args)
			}
			items := d["volumes"].([]any)[0].(map[string]any)["configMap"].(map[string]any)["items"].([]any)
			if len(items) != 2 || items[0].(map[string]any)["path"] != "crds/widget.yaml" || items[1].(map[string]any)["path"] != "katalog.yaml" {
				t.Fatalf("items %v: the crdFile ./crds/widget.yaml must resolve from the mounted katalog", items)
			}
		case "CustomResourceDefinition":
			// No conversion declared: the CRD keeps its own setting.
			if _, ok := u.Object["spec"].(map[string]any)["conversion"]; ok {
				t.Fatal("a CRD the katalog does not convert must not get webhook conversion")
			}
		}
	}
}

// Issue 15 item 5: manifests embedded files from anywhere (crFiles:
// [/etc/passwd]) in the katalog ConfigMap. A file outside the katalog's
// directory is refused even when --allow-outside-paths let the loader read
// it.
func TestManifestsRefuseFilesOutsideTheKatalog(t *testing.T) {
	file := writeKatalog(t, `
onReconcile:
  configMaps:
    - data: {a: b}
`)
	dir := filepath.Dir(file)
	outside := filepath.Join(filepath.Dir(dir), "widget.yaml")
	if err := os.Rename(filepath.Join(dir, "crds", "widget.yaml"), outside); err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(body), "./crds/widget.yaml", "../widget.yaml", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	k, diags := katalog.LoadWith(katalog.Options{AllowOutsidePaths: true}, file)
	if diags.HasErrors() {
		t.Fatal(diags.Errors())
	}
	cel, err := celengine.New(celengine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	plan, cdiags := engine.Compile(k, engine.Backends{CEL: cel}, engine.CompileOptions{})
	if cdiags.HasErrors() {
		t.Fatal(cdiags.Errors())
	}
	realDir, _ := filepath.EvalSymlinks(dir)
	want := outside + " is outside the katalog's directory " + realDir + " (it is in no git repository); orkestra manifests ships only files under it (in the katalog ConfigMap): copy the file there and name it relative to the katalog"
	if _, err := Generate(plan, Options{}); err == nil || err.Error() != want {
		t.Fatalf("Generate: %v\nwant %s", err, want)
	}
}

func keys2(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Issue 25: a katalog in a git repository may name a CRD in a sibling
// folder (upstream's examples share ../crd.yaml). manifests ships it at
// its place relative to the katalog and runs the operator with
// --allow-outside-paths, since the mounted ConfigMap has no .git; a file
// outside the repository is still refused, the repository named.
func TestManifestsShipFilesOfTheRepository(t *testing.T) {
	file := writeKatalog(t, `
onReconcile:
  configMaps:
    - data: {a: b}
`)
	dir := filepath.Dir(file)
	repo := filepath.Dir(dir)
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(repo, "shared.yaml")
	if err := os.Rename(filepath.Join(dir, "crds", "widget.yaml"), shared); err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(body), "./crds/widget.yaml", "../shared.yaml", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := Generate(compile(t, file), Options{KatalogPaths: []string{file}})
	if err != nil {
		t.Fatal(err)
	}
	var cm *corev1.ConfigMap
	var dep *appsv1.Deployment
	for _, o := range in.Objects {
		switch x := o.Object.(type) {
		case *corev1.ConfigMap:
			cm = x
		case *appsv1.Deployment:
			dep = x
		}
	}
	if cm == nil || dep == nil {
		t.Fatal("no ConfigMap or Deployment")
	}
	if _, ok := cm.Data["shared.yaml"]; !ok || cm.Data["katalog__katalog.yaml"] == "" {
		t.Errorf("ConfigMap keys %v, want shared.yaml and katalog__katalog.yaml", keys2(anyMap(cm.Data)))
	}
	args := strings.Join(dep.Spec.Template.Spec.Containers[0].Args, " ")
	if !strings.Contains(args, "--katalog="+KatalogMountPath+"/katalog/katalog.yaml") || !strings.Contains(args, "--allow-outside-paths") {
		t.Errorf("args %s", args)
	}

	// Outside the repository: refused.
	realRepo, _ := filepath.EvalSymlinks(repo)
	outside := filepath.Join(t.TempDir(), "widget.yaml")
	if err := os.Rename(shared, outside); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(body), "./crds/widget.yaml", outside, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	k, diags := katalog.LoadWith(katalog.Options{AllowOutsidePaths: true}, file)
	if diags.HasErrors() {
		t.Fatal(diags.Errors())
	}
	cel, err := celengine.New(celengine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	plan, cdiags := engine.Compile(k, engine.Backends{CEL: cel}, engine.CompileOptions{})
	if cdiags.HasErrors() {
		t.Fatal(cdiags.Errors())
	}
	want := outside + " is outside the katalog's repository " + realRepo + "; orkestra manifests ships only files under it (in the katalog ConfigMap): copy the file there and name it relative to the katalog"
	if _, err := Generate(plan, Options{KatalogPaths: []string{file}}); err == nil || err.Error() != want {
		t.Fatalf("Generate: %v\nwant %s", err, want)
	}
}

func anyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

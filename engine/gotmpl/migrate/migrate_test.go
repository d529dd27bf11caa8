package migrate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/objgen"
	"github.com/orkspace/orkestra-cel/operator/render"
)

const example = "../../../examples/legacy-website"

// copyDir copies a katalog directory so that tests can rewrite it.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	tmp := t.TempDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return tmp
}

// The migrated legacy-website example, as the migration must write it:
// every template translated, every untouched line as it was. The CRD does
// not require spec, and the legacy engine failed on a field of a missing
// spec, so plain references go through optional.of (see plainForm).
const wantExample = `# A katalog in the original text/template style, as existing users have them.
# It must load, run and convert unchanged; ` + "`orkestra migrate`" + ` turns it into CEL.
apiVersion: orkestra.konductor.io/v1Alpha
kind: Katalog
metadata:
  name: webapp-legacy
spec:
  crds:
    - name: webapp
      crdFile: ./crd.yaml
      workers: 2
      apiTypes:
        group: demo.orkestra.io
        version: v1alpha1
        kind: WebApp
        plural: webapps
      reconciler:
        default: true
        status:
          fields:
            - path: phase
              value: Running
            - path: endpoint
              value: "${self.metadata.name}.${self.metadata.namespace}.svc.cluster.local"
        onCreate:
          deployments:
            - name: "${self.metadata.name}"
              image: "${self.spec.image.trim()}"
              replicas: "${optional.of(self.spec.replicas)}"
              port: "${optional.of(self.spec.port)}"
              reconcile: true
              labels:
                - key: app
                  value: "${self.metadata.name}"
                - key: env
                  value: "${(self.spec.?environment.orValue('') != '' ? self.spec.environment : 'dev').trim()}"
          services:
            - name: "${self.metadata.name}-svc"
              type: "${optional.of(self.spec.serviceType)}"
              port: "80"
              targetPort: "${optional.of(self.spec.port)}"
              reconcile: true
          configMaps:
            - name: "${self.metadata.name}-monitoring"
              data:
                SCRAPE_INTERVAL: "15s"
                TARGET: "${self.metadata.name}-svc:${self.spec.port}"
              reconcile: true
              when:
                - "self.?spec.?monitoring.orValue(false) == true"
          secrets:
            - name: "${self.metadata.name}-api-key"
              once: true
              data:
                key: "${randomHex(16)}"
        onReconcile:
          configMaps:
            - name: "${self.metadata.name}-banner"
              data:
                message: "${(self.metadata.name.upperAscii() + ' runs ' + self.spec.image).trim()}"
              when:
                - "self.?spec.?environment.orValue('') in ['staging', 'production']"
`

// TestLegacyWebsiteExample migrates the example fully, proves it on
// generated objects, and writes exactly the expected text.
func TestLegacyWebsiteExample(t *testing.T) {
	res, err := Run(Options{Files: []string{example + "/katalog.yaml"}, Samples: []string{example + "/webapp.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res.Summary())
	for _, it := range res.Left {
		t.Errorf("left legacy: %s: %s (%s)", it.Pos, it.Legacy, it.Reason)
	}
	if !res.Equivalent() {
		for _, m := range res.Mismatches {
			t.Error(m)
		}
	}
	if len(res.Check) > 0 {
		t.Errorf("the migrated katalog does not check: %v", res.Check)
	}
	if len(res.Translated) != 18 {
		t.Errorf("translated %d, want 18", len(res.Translated))
	}
	// 200 generated, their edge variants, and the sample.
	if res.Objects < 201 || res.Evaluations < 18*201 {
		t.Errorf("verified against %d objects (%d comparisons)", res.Objects, res.Evaluations)
	}
	if len(res.Files) != 1 {
		t.Fatalf("%d files", len(res.Files))
	}
	got := string(res.Files[0].Migrated)
	if got != wantExample {
		t.Errorf("migrated katalog:\n%s\nwant:\n%s", got, wantExample)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "apiVersion kept") {
		t.Errorf("notes: %v", res.Notes)
	}
}

// TestUntouchedLinesByteIdentical: a katalog with blank lines, comments,
// odd spacing, compact sequences, anchors and block scalars keeps every
// line the migration does not rewrite, byte for byte.
func TestUntouchedLinesByteIdentical(t *testing.T) {
	dir := copyDir(t, example)
	src := `# head comment

apiVersion: orkestra.konductor.io/v1Alpha   # old group, kept
kind: Katalog
metadata:
    name: formatting     # four-space indentation
spec:
    crds:
    -   name: webapp
        crdFile: ./crd.yaml
        apiTypes: {group: demo.orkestra.io, version: v1alpha1, kind: WebApp, plural: webapps}

        reconciler:
            onCreate:
                deployments:
                - name: '{{ .metadata.name }}'    # single-quoted
                  image: nginx:{{ .spec.replicas }}
                  replicas: "{{ .spec.replicas }}"
                  port: 8080
                  labels: {tier: "{{ .spec.serviceType }}", fixed: yes}

                configMaps:
                - name: "{{ .metadata.name }}-conf"
                  data:
                    # the config file
                    app.conf: |
                      name={{ .metadata.name }}
                      replicas={{ .spec.replicas }}
                    shared: &shared "{{ .metadata.namespace }}"
                    again: *shared
                  when:
                  - field: spec.monitoring   # only with monitoring
                    equals: "true"
                  - {field: spec.serviceType, notEquals: NodePort}
`
	res := migrateText(t, dir, src, 60)
	for _, it := range res.Left {
		t.Errorf("left legacy: %s: %s (%s)", it.Pos, it.Legacy, it.Reason)
	}
	if !res.Equivalent() || len(res.Check) > 0 {
		t.Fatalf("mismatches %v, check %v", res.Mismatches, res.Check)
	}
	got := string(res.Files[0].Migrated)
	want := strings.NewReplacer(
		`'{{ .metadata.name }}'    # single`, `'${self.metadata.name}'    # single`,
		`nginx:{{ .spec.replicas }}`, `nginx:${self.spec.replicas}`,
		`"{{ .spec.replicas }}"`, `"${optional.of(self.spec.replicas)}"`,
		`"{{ .spec.serviceType }}"`, `"${optional.of(self.spec.serviceType)}"`,
		`"{{ .metadata.name }}-conf"`, `"${self.metadata.name}-conf"`,
		"|\n                      name={{ .metadata.name }}\n                      replicas={{ .spec.replicas }}",
		"|-\n                      name=${self.metadata.name}\n                      replicas=${self.spec.replicas}",
		`&shared "{{ .metadata.namespace }}"`, `&shared "${self.metadata.namespace}"`,
		"- field: spec.monitoring   # only with monitoring\n                    equals: \"true\"",
		`- "self.?spec.?monitoring.orValue(false) == true" # only with monitoring`,
		`{field: spec.serviceType, notEquals: NodePort}`, `"self.?spec.?serviceType.orValue('') != 'NodePort'"`,
	).Replace(src)
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// Every line that holds no rewritten value is the original line.
	gl, ol := strings.Split(got, "\n"), strings.Split(src, "\n")
	j := 0
	for _, l := range ol {
		if strings.Contains(l, "{{") || strings.Contains(l, "field:") || strings.HasPrefix(strings.TrimSpace(l), "equals:") || strings.HasSuffix(l, "app.conf: |") {
			continue
		}
		for j < len(gl) && gl[j] != l {
			j++
		}
		if j == len(gl) {
			t.Errorf("untouched line %q is missing or changed", l)
			j = 0
		}
	}
}

// TestNotEquivalentRefused: a wrong translation (the legacy trim dropped)
// is found on the padded-string variants, with the shrunk object and both
// outputs.
func TestNotEquivalentRefused(t *testing.T) {
	res, err := Run(Options{Files: []string{example + "/katalog.yaml"}, translate: func(it *Item, def string) string {
		if it.Legacy == "{{ .spec.image }}" {
			return "${string(self.spec.image)}"
		}
		return def
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Equivalent() || len(res.Mismatches) != 1 {
		t.Fatalf("mismatches: %v", res.Mismatches)
	}
	m := res.Mismatches[0].String()
	for _, want := range []string{
		"katalog.yaml:28:23: [webapp] operatorBox.onCreate.deployments[0].image: the translation is NOT equivalent",
		"legacy: {{ .spec.image }}", "cel:    ${string(self.spec.image)}",
		"on this object (shrunk from generated",
		"legacy gives: ", "cel gives:    ",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("report lacks %q:\n%s", want, m)
		}
	}
	// The shrunk object still differs, and is small: the padded image.
	o := res.Mismatches[0].Object
	img, _, _ := unstructured.NestedString(o, "spec", "image")
	if strings.TrimSpace(img) == img {
		t.Errorf("the differing object should have white space around the image: %q", img)
	}
	if spec, _ := o["spec"].(map[string]any); len(spec) > 1 {
		t.Errorf("not shrunk: %v", spec)
	}
	t.Log("\n" + m)
}

// TestLeftItemsListed: what has no exact form stays legacy with its
// position and reason; the rest still migrates.
func TestLeftItemsListed(t *testing.T) {
	dir := copyDir(t, example)
	src := webappKatalog("left") + `      operatorBox:
        onCreate:
          configMaps:
            - name: "{{ .metadata.name }}"
              data:
                upper: "{{ toUpper .spec.environment }}"
                loop: "{{ range .metadata.finalizers }}{{ . }},{{ end }}"
                ok: "{{ .spec.replicas }}"
          secrets:
            - name: "{{ .metadata.name }}-s"
              once: true
              data:
                b64: "{{ randomBase64 24 }}"
`
	res := migrateText(t, dir, src, 40)
	if len(res.Translated) != 3 || len(res.Left) != 3 || !res.Equivalent() || len(res.Check) > 0 {
		t.Fatalf("translated %d, left %d, mismatches %v, check %v", len(res.Translated), len(res.Left), res.Mismatches, res.Check)
	}
	var b strings.Builder
	res.WriteReport(&b)
	for _, want := range []string{
		"katalog.yaml:15:36: [webapp] operatorBox.onCreate.configMaps[0].data.upper: toUpper changes every Unicode letter",
		"katalog.yaml:16:33: [webapp] operatorBox.onCreate.configMaps[0].data.loop: {{ range }} has no exact CEL form",
		"katalog.yaml:22:26: [webapp] operatorBox.onCreate.secrets[0].data.b64: randomBase64 has no exact CEL equivalent: the legacy randomBase64 uses the URL-safe alphabet",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	got := string(res.Files[0].Migrated)
	for _, want := range []string{`upper: "{{ toUpper .spec.environment }}"`, `ok: "${string(self.spec.replicas)}"`, `b64: "{{ randomBase64 24 }}"`} {
		if !strings.Contains(got, want) {
			t.Errorf("migrated katalog lacks %s:\n%s", want, got)
		}
	}
}

// TestRenderEquivalent renders the example's custom resources through
// operator/render with the legacy plan and with the migrated one: the
// same children, fields and status (random secret data compared by shape).
func TestRenderEquivalent(t *testing.T) {
	dir := copyDir(t, example)
	path := filepath.Join(dir, "katalog.yaml")
	res, err := Run(Options{Files: []string{path}, Count: 40})
	if err != nil {
		t.Fatal(err)
	}
	oldPlan := compile(t, path)
	if err := os.WriteFile(path, res.Files[0].Migrated, 0o644); err != nil {
		t.Fatal(err)
	}
	newPlan := compile(t, path)
	oe, ne := oldPlan.Entries[0], newPlan.Entries[0]
	objs := objgen.Generate(oe.Schema, oe.GVK, 150, objgen.Options{Seed: 3})
	sample, err := readObjects(example + "/webapp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs = append(sample, objs...)
	rendered := 0
	for _, o := range objs {
		defaulting.Default(o, oe.Schema)
		a, aerr := render.Render(oe, &unstructured.Unstructured{Object: o})
		b, berr := render.Render(ne, &unstructured.Unstructured{Object: o})
		if (aerr == nil) != (berr == nil) {
			t.Fatalf("on %v: legacy error %v, cel error %v", o, aerr, berr)
		}
		if aerr != nil {
			continue
		}
		rendered++
		if x, y := renderJSON(t, a), renderJSON(t, b); shape(x) != shape(y) || !sameExceptSecrets(x, y) {
			t.Fatalf("renders differ on %v:\nlegacy: %s\ncel:    %s", o, x, y)
		}
	}
	if rendered < 50 {
		t.Errorf("only %d objects rendered", rendered)
	}
}

func compile(t *testing.T, path string) *engine.Plan {
	t.Helper()
	k, d := katalog.Load(path)
	if d.HasErrors() {
		t.Fatal(d)
	}
	cel, legacy, err := Backends(0)
	if err != nil {
		t.Fatal(err)
	}
	p, d := engine.Compile(k, engine.Backends{CEL: cel, Legacy: legacy}, engine.CompileOptions{})
	if d.HasErrors() {
		t.Fatal(d)
	}
	return p
}

func renderJSON(t *testing.T, r *render.Result) string {
	out := map[string]any{"status": r.Status}
	for hook, children := range r.Hooks {
		var cs []any
		for _, c := range children {
			var obj any
			if c.Object != nil {
				obj = c.Object.Object
			}
			cs = append(cs, map[string]any{"key": c.Key(), "when": c.When, "fields": c.Fields, "object": obj})
		}
		out[hook] = cs
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sameExceptSecrets: equal once random secret values are masked.
func sameExceptSecrets(a, b string) bool {
	mask := func(s string) string {
		var v map[string]any
		_ = json.Unmarshal([]byte(s), &v)
		for _, hook := range []string{"onCreate", "onReconcile", "onDelete"} {
			cs, _ := v[hook].([]any)
			for _, c := range cs {
				c := c.(map[string]any)
				if strings.HasPrefix(c["key"].(string), "secrets/") {
					c["fields"], c["object"] = nil, nil
				}
			}
		}
		out, _ := json.Marshal(v)
		return string(out)
	}
	return mask(a) == mask(b)
}

var _ = schema.GroupVersionKind{}

// A katalog with structured admission rules migrates like any other: the
// rules compile to the API server's CEL at load (they are not migrated),
// and the values around them are. (The recorder once hid the legacy
// backend's structured-rule translator, so every upstream katalog with a
// validation block was refused as "does not check".)
func TestMigrateWithStructuredValidationRules(t *testing.T) {
	dir := copyDir(t, example)
	src := webappKatalog("rules") + `      validation:
        rules:
          - field: spec.replicas
            operator: lessThan
            value: "10"
            message: at most 9 replicas
      operatorBox:
        onCreate:
          configMaps:
            - name: "{{ .metadata.name }}"
              data:
                ok: "{{ .spec.replicas }}"
`
	res := migrateText(t, dir, src, 20)
	if len(res.Translated) != 2 || !res.Equivalent() || len(res.Check) > 0 {
		t.Fatalf("translated %d, left %d, mismatches %v, check %v", len(res.Translated), len(res.Left), res.Mismatches, res.Check)
	}
	if got := string(res.Files[0].Migrated); !strings.Contains(got, "operator: lessThan") {
		t.Errorf("the validation rule was rewritten:\n%s", got)
	}
}

// A Komposer and the katalog it imports migrate together, and the result
// is checked as loaded from the Komposer (each entry once), not file by
// file, which declared every imported entry twice.
func TestMigrateKomposer(t *testing.T) {
	dir := copyDir(t, example)
	files := map[string]string{
		"base.yaml": webappKatalog("base") + `      operatorBox:
        onCreate:
          configMaps:
            - name: "{{ .metadata.name }}"
              data:
                replicas: "{{ .spec.replicas }}"
`,
		"komposer.yaml": `apiVersion: orkestra.orkspace.io/v1
kind: Komposer
metadata: {name: platform}
imports:
  files: [./base.yaml]
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Run(Options{Files: []string{filepath.Join(dir, "komposer.yaml")}, Count: 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Translated) != 2 || !res.Equivalent() || len(res.Check) > 0 {
		t.Fatalf("translated %d, left %d, mismatches %v, check %v", len(res.Translated), len(res.Left), res.Mismatches, res.Check)
	}
	var changed []string
	for _, f := range res.Files {
		if f.Changed() {
			changed = append(changed, filepath.Base(f.Path))
		}
	}
	if len(changed) != 1 || changed[0] != "base.yaml" {
		t.Errorf("changed files %v, want the imported base.yaml", changed)
	}
}

// An onDelete declaration that only names a declared child (upstream's
// examples/use-cases/temporal/01-business-hours) keeps naming it after
// migration: its name is rewritten with the child's, so the migrated
// katalog still checks.
func TestMigrateNamedDelete(t *testing.T) {
	dir := copyDir(t, example)
	src := webappKatalog("named") + `      operatorBox:
        onCreate:
          services:
            - name: "{{ .metadata.name }}-svc"
              port: 80
        onDelete:
          services:
            - name: "{{ .metadata.name }}-svc"
`
	res := migrateText(t, dir, src, 10)
	if len(res.Translated) != 1 || len(res.Check) > 0 {
		t.Fatalf("translated %d, check %v", len(res.Translated), res.Check)
	}
	got := string(res.Files[0].Migrated)
	if strings.Count(got, `name: "${self.metadata.name}-svc"`) != 2 {
		t.Errorf("both names should read the same CEL:\n%s", got)
	}
}

// Templates that read the children back (.children.deployment.status…)
// translate to the CEL variable children, typed by the child kinds'
// schemas, and are verified on views of observed children: none observed
// (the placeholders) and views generated from those schemas.
func TestMigrateChildrenReads(t *testing.T) {
	dir := copyDir(t, example)
	src := webappKatalog("kids") + `      operatorBox:
        onCreate:
          deployments:
            - image: nginx
        status:
          fields:
            - path: phase
              value: "{{ .children.deployment.status.readyReplicas }}"
            - path: endpoint
              value: "ready {{ .children.deployment.status.readyReplicas }} of {{ .spec.replicas }}"
              when:
                - field: children.deployment.status.readyReplicas
                  greaterThan: "0"
`
	res := migrateText(t, dir, src, 20)
	if !res.Equivalent() || len(res.Check) > 0 {
		t.Fatalf("mismatches %v, check %v", res.Mismatches, res.Check)
	}
	var b strings.Builder
	res.WriteReport(&b)
	got := string(res.Files[0].Migrated)
	for _, want := range []string{"children.deployment.status", "${", "legacy.gt(legacy.str(children, 'deployment.status.readyReplicas'), 0.0)"} {
		if !strings.Contains(got, want) {
			t.Errorf("migrated katalog lacks %s:\n%s\n%s", want, got, b.String())
		}
	}
	for _, it := range res.Left {
		if strings.Contains(it.Legacy, ".children") {
			t.Errorf("left legacy: %s: %s", it.Legacy, it.Reason)
		}
	}
	if len(res.Translated) != 3 || res.Evaluations == 0 {
		t.Errorf("translated %d (want the two status fields and the condition), %d evaluations:\n%s", len(res.Translated), res.Evaluations, b.String())
	}
}

// Templates of a forEach declaration read the item (.item or its alias,
// .index, .value): they translate to the CEL variables each (or the
// alias), index and value, and are verified once per item, as rendered.
func TestMigrateForEachItems(t *testing.T) {
	dir := t.TempDir()
	crd := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: fleets.demo.orkestra.io}
spec:
  group: demo.orkestra.io
  scope: Namespaced
  names: {plural: fleets, singular: fleet, kind: Fleet, listKind: FleetList}
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
                regions:
                  type: array
                  maxItems: 5
                  items:
                    type: object
                    required: [name]
                    properties:
                      name: {type: string, pattern: '^[a-z]+$', maxLength: 10}
                      replicas: {type: integer}
                zones:
                  type: object
                  maxProperties: 4
                  additionalProperties: {type: integer}
`
	src := `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: fleet}
spec:
  crds:
    fleet:
      crdFile: ./crd.yaml
      apiTypes: {group: demo.orkestra.io, version: v1, kind: Fleet}
      operatorBox:
        onReconcile:
          deployments:
            - name: "{{ .metadata.name }}-{{ .region.name }}"
              image: nginx
              replicas: "{{ .region.replicas }}"
              forEach: {field: spec.regions, as: region}
          configMaps:
            - name: "{{ .metadata.name }}-zone-{{ .item }}"
              data:
                index: "{{ .index }}"
                weight: "{{ .value }}"
              forEach: {field: spec.zones}
`
	for name, body := range map[string]string{"crd.yaml": crd, "katalog.yaml": src} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Run(Options{Files: []string{filepath.Join(dir, "katalog.yaml")}, Count: 40})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	res.WriteReport(&b)
	if !res.Equivalent() || len(res.Check) > 0 || len(res.Left) > 0 {
		t.Fatalf("mismatches %v, check %v:\n%s", res.Mismatches, res.Check, b.String())
	}
	got := string(res.Files[0].Migrated)
	for _, want := range []string{"${region.name}", "${region.replicas}", "${string(index)}", "${string(value)}", "'-zone-' + each"} {
		if !strings.Contains(got, want) {
			t.Errorf("migrated katalog lacks %s:\n%s", want, got)
		}
	}
}

// migrateText writes src as katalog.yaml into dir and migrates it.
func migrateText(t *testing.T, dir, src string, count int) *Result {
	t.Helper()
	path := filepath.Join(dir, "katalog.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Run(Options{Files: []string{path}, Count: count})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// webappKatalog is the head of a katalog with one entry, webapp, for the
// legacy example's CRD (copied beside it by copyDir); tests append the
// entry's other keys. It spans nine lines, so positions in the appended
// text start at line 10.
func webappKatalog(name string) string {
	return "apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nmetadata:\n  name: " + name + "\nspec:\n  crds:\n    webapp:\n      crdFile: ./crd.yaml\n      apiTypes: {group: demo.orkestra.io, version: v1alpha1, kind: WebApp}\n"
}

package katalog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFiles writes files (name → content) into a fresh directory, with a
// copy of the website CRD as crd.yaml, and returns the directory.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	crd, err := os.ReadFile("testdata/website-crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files["crd.yaml"] = string(crd)
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.TrimLeft(body, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// diagLines prints diagnostics one per line with the directory removed.
func diagLines(dir string, diags Diagnostics) string {
	var lines []string
	for _, d := range diags {
		lines = append(lines, strings.ReplaceAll(d.Error(), dir+string(filepath.Separator), ""))
	}
	return strings.Join(lines, "\n")
}

// Upstream keys this runtime does not implement: a warning where nothing
// observable changes, else an error naming the alternative. The keys are
// those of upstream's pkg/types (orkspace/orkestra pkg/types/types_crd_entry.go,
// types_operatorbox.go, katalog.go).
func TestUpstreamKeysReported(t *testing.T) {
	cases := []struct {
		name, body, want string
	}{
		{"documentation metadata is a warning", "metadata:\n  name: t\n  license: MIT\n" + entrySpec(""),
			`katalog.yaml:5:3: warning: metadata.license: "license" is part of the original katalog format and changes nothing in this runtime (documentation metadata); it is ignored`},
		{"control center is a warning", "controlCenter: {enabled: true}\n" + entrySpec(""),
			`katalog.yaml:3:1: warning: controlCenter: "controlCenter" is part of the original katalog format and changes nothing in this runtime`},
		{"gateway endpoint is a warning", "gateway:\n  endpoint: http://gw:8080\n" + entrySpec(""),
			`katalog.yaml:4:3: warning: gateway.endpoint: upstream's separate gateway is not used: this runtime serves /convert itself and its admission rules run in the API server; it is ignored`},
		{"gateway api is an error", "gateway:\n  api: {enabled: true}\n" + entrySpec(""),
			`katalog.yaml:4:3: gateway.api: upstream's gateway api lets callers outside Kubernetes RBAC create or change objects, which this runtime does not serve; create the objects with kubectl or your GitOps tool`},
		{"a remote cross source reads the other runtime's entry by crd:, not by kind", entrySpec("      operatorBox:\n        cross:\n          - apiVersion: demo.orkestra.io/v1\n            kind: Other\n            as: other\n            source: {endpoint: http://other:8080/katalog/db}\n"),
			`katalog.yaml:13:25: [site] operatorBox.cross[0]: a cross read with source: reads another runtime's entry, named by crd: (its name in that runtime's katalog); apiVersion and kind name a kind this operator reads itself — remove source:, or write crd:`},
		{"the source of a read of an entry of the katalog is not used", entrySpec("      operatorBox:\n        cross:\n          - crd: site\n            source: {endpoint: http://other:8080/katalog/db}\n"),
			`katalog.yaml:14:13: warning: [site] operatorBox.cross[0].source: source: is not used: "site" is an entry of this katalog, read from this operator's informer as upstream reads a sibling in the same binary; remove source:`},
		{"operator autoscaling is out of scope", entrySpec("      operatorBox:\n        autoscale: {}\n"),
			`katalog.yaml:12:9: [site] operatorBox.autoscale: "autoscale" is part of the original katalog format but not supported by this runtime: upstream's operator autoscaler resizes the operator's own reconcile workers, queue limit and resync period on a ticker from its queue metrics (.metrics.queueDepth); here workers and resync are fixed when the controllers start, and an autoscaler on the operator's Deployment would add replicas that wait for the leader lease, not workers: set workers and resync to the do: block's values (the peak) instead; to scale a workload's replicas from conditions, declare autoscale: on its deployments, statefulSets or replicaSets entry`},
		{"Go hooks are out of scope", entrySpec("      operatorBox:\n        reconciler:\n          hooks: {location: x, function: Y}\n"),
			`katalog.yaml:13:11: [site] operatorBox.reconciler.hooks: "hooks" is part of the original katalog format but not supported by this runtime: it runs compiled Go code, which this runtime does not load`},
		{"a custom reconciler is out of scope", entrySpec("      operatorBox:\n        reconciler:\n          default: false\n"),
			`katalog.yaml:13:20: [site] operatorBox.reconciler.default: default: false selects a custom Go reconciler upstream, which this runtime does not run; remove it to use the declarative reconciler`},
		{"typed Go apiTypes are out of scope", strings.Replace(entrySpec(""), "        kind: Website\n", "        kind: Website\n        location: github.com/x/api\n", 1),
			`katalog.yaml:11:9: [site] apiTypes.location: "location" is part of the original katalog format but not supported by this runtime: typed Go apiTypes`},
		{"HTTP calls in a gate are an error naming the hook form", entrySpec("      operatorBox:\n        preReconcile:\n          external:\n            - url: http://x\n"),
			`katalog.yaml:13:11: [site] operatorBox.preReconcile.external: "external" is part of the original katalog format but not supported by this runtime: external calls are declared in a hook here (onReconcile: {external: [...]}), where their results read as external.<name>; at this place they are not supported`},
		{"serve is an error", entrySpec("      serve: {enabled: true}\n"),
			`katalog.yaml:11:7: [site] serve: "serve" is part of the original katalog format but not supported by this runtime: upstream's gateway exposes a REST surface`},
		{"remote Komposer sources are refused", "imports:\n  registry:\n    - url: ghcr.io/x/y@v1\n" + entrySpec(""),
			`katalog.yaml:4:3: imports.registry: remote sources (registry) are not fetched by this runtime, which reads local files only; vendor the katalog into your repository and list it under imports.files`},
		{"a kind upstream declares but never builds is an error naming custom:", entrySpec("      operatorBox:\n        onCreate:\n          daemonSets:\n            - name: x\n"),
			`katalog.yaml:13:11: [site] operatorBox.onCreate.daemonSets: "daemonSets" is part of the original katalog format but not supported by this runtime: upstream declares this kind in its hook blocks but never creates it; declare the object under custom: with its apiVersion and kind`},
		{"a cluster-scoped kind takes no namespace", entrySpec("      operatorBox:\n        onCreate:\n          namespaces:\n            - name: x\n              namespace: y\n"),
			`katalog.yaml:15:15: [site] operatorBox.onCreate.namespaces[0].namespace: unknown field "namespace" for namespaces`},
		{"forceConflict takes a boolean", entrySpec("      forceConflict: maybe\n"),
			`katalog.yaml:11:22: [site] forceConflict:`},
		{"conversion.updateCRD is a warning", entrySpec("      conversion:\n        updateCRD: true\n"),
			`katalog.yaml:12:9: warning: [site] conversion.updateCRD: "updateCRD" is part of the original katalog format and changes nothing in this runtime (this runtime injects the CA bundle`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"katalog.yaml": "apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\n" + tc.body})
			_, diags := Load(filepath.Join(dir, "katalog.yaml"))
			got := diagLines(dir, diags)
			if !strings.Contains(got, tc.want) {
				t.Fatalf("want a diagnostic starting\n  %s\ngot\n  %s", tc.want, got)
			}
			isWarning := strings.Contains(tc.want, " warning: ")
			if isWarning && diags.HasErrors() {
				t.Fatalf("a warning-only key made the katalog fail:\n%s", got)
			}
			if !isWarning && !diags.HasErrors() {
				t.Fatalf("an error key let the katalog load:\n%s", got)
			}
		})
	}
}

// entrySpec is a spec with one entry (its name on line 5 after the two
// header lines and the caller's prefix lines) plus extra entry lines.
func entrySpec(extra string) string {
	return "spec:\n  crds:\n    site:\n      crdFile: ./crd.yaml\n      apiTypes:\n        group: demo.orkestra.io\n        version: v1\n        kind: Website\n" + extra
}

// The reconciler settings block of upstream's operatorBox (workers, resync,
// queue), in each layout upstream has used: on the entry, under
// operatorBox.reconciler, and the newest operatorBox.reconcile that also
// nests the hooks, with status under operatorBox.emit.
// (orkspace/orkestra pkg/types/types_operatorbox.go ReconcilerConfig;
// examples/intermediate/08-state-machine/katalog.yaml.)
func TestReconcilerSettings(t *testing.T) {
	t.Run("operatorBox.reconciler", func(t *testing.T) {
		e := loadOne(t, entrySpec("      operatorBox:\n        reconciler:\n          workers: 4\n          resync: 45s\n          queue:\n            maxQueueDepth: 200\n            failureThreshold: 0.25\n"))
		if e.Workers != 4 || e.Resync.String() != "45s" || e.Queue == nil || e.Queue.MaxDepth != 200 || e.Queue.FailureThreshold != 0.25 {
			t.Fatalf("workers %d resync %s queue %+v", e.Workers, e.Resync, e.Queue)
		}
	})
	t.Run("newest layout", func(t *testing.T) {
		e := loadOne(t, entrySpec(`      operatorBox:
        reconcile:
          workers: 2
          queue: {maxDepth: 1000}
          onReconcile:
            configMaps:
              - data: {a: b}
        emit:
          status:
            fields:
              - path: phase
                value: Running
`))
		if e.Workers != 2 || e.Queue.MaxDepth != 1000 {
			t.Fatalf("workers %d queue %+v", e.Workers, e.Queue)
		}
		if h := e.Box.Hooks[OnReconcile]; h == nil || len(h.Resources) != 1 || h.Resources[0].Kind != "configMaps" {
			t.Fatalf("onReconcile under reconcile: not decoded: %+v", e.Box.Hooks)
		}
		if e.Box.Status == nil || len(e.Box.Status.Fields) != 1 || e.Box.Status.Fields[0].Path != "phase" {
			t.Fatalf("emit.status not decoded: %+v", e.Box.Status)
		}
	})
	errCases := []struct{ name, extra, want string }{
		{"workers twice", "      workers: 2\n      operatorBox:\n        reconciler:\n          workers: 3\n",
			`katalog.yaml:14:20: [site] operatorBox.reconciler.workers: workers is already set to 2 at katalog.yaml:11:16; set it in one place`},
		{"hook twice", "      operatorBox:\n        onCreate: {}\n        reconcile:\n          onCreate: {}\n",
			`katalog.yaml:14:11: [site] operatorBox.reconcile.onCreate: onCreate is already declared at `},
		{"threshold out of range", "      queue:\n        failureThreshold: 2\n",
			`katalog.yaml:12:27: [site] queue.failureThreshold: failureThreshold is the share of failed reconciles (0 to 1) over which the entry reports degraded, got "2"`},
		{"both queue depth names", "      queue:\n        maxDepth: 5\n        maxQueueDepth: 6\n",
			`katalog.yaml:13:9: [site] queue.maxQueueDepth: both maxDepth and its older name maxQueueDepth are set; keep maxDepth`},
		{"typo in the settings block", "      operatorBox:\n        reconciler:\n          wrokers: 3\n",
			`katalog.yaml:13:11: [site] operatorBox.reconciler.wrokers: unknown key "wrokers"; did you mean "workers"?`},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"katalog.yaml": "apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\n" + entrySpec(tc.extra)})
			_, diags := Load(filepath.Join(dir, "katalog.yaml"))
			if got := diagLines(dir, diags.Errors()); !strings.HasPrefix(got, tc.want) {
				t.Fatalf("want\n  %s…\ngot\n  %s", tc.want, got)
			}
		})
	}
}

// loadOne loads a katalog of the header plus body and returns its only
// entry, failing on any error.
func loadOne(t *testing.T, body string) *CRDEntry {
	t.Helper()
	dir := writeFiles(t, map[string]string{"katalog.yaml": "apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\n" + body})
	k, diags := Load(filepath.Join(dir, "katalog.yaml"))
	if diags.HasErrors() {
		t.Fatalf("unexpected errors:\n%s", diagLines(dir, diags.Errors()))
	}
	if len(k.CRDs) != 1 {
		t.Fatalf("want one entry, got %d", len(k.CRDs))
	}
	return k.CRDs[0]
}

func TestSpecFinalizersAndStorageVersionDefault(t *testing.T) {
	dir := writeFiles(t, map[string]string{"katalog.yaml": `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
spec:
  finalizers: [example.com/cleanup]
  crds:
    site:
      crdFile: ./crd.yaml
      apiTypes: {version: v1}
      conversion:
        paths:
          - from: v1alpha1
            to: v1
`})
	k, diags := Load(filepath.Join(dir, "katalog.yaml"))
	if diags.HasErrors() {
		t.Fatal(diagLines(dir, diags))
	}
	if strings.Join(k.Finalizers, ",") != "example.com/cleanup" {
		t.Fatalf("spec.finalizers: %v", k.Finalizers)
	}
	if got := k.CRDs[0].Conversion.StorageVersion; got != "v1" {
		t.Fatalf("storageVersion defaults to the CRD's storage version v1, got %q", got)
	}
}

// An onDelete declaration of only a name asks upstream to delete that object
// with the custom resource (iAlexeze/orkestra examples/use-cases/temporal/
// 01-business-hours). A declared child goes anyway, by garbage collection:
// a warning and nothing to run. Another object would be left behind: an
// error.
func TestOnDeleteNameOnly(t *testing.T) {
	box := "spec:\n  crds:\n    site:\n      crdFile: ./crd.yaml\n      apiTypes: {version: v1}\n      operatorBox:\n        onCreate:\n          services:\n            - name: \"{{ .metadata.name }}-svc\"\n              port: 80\n        onDelete:\n          services:\n            - name: %s\n"
	dir := writeFiles(t, map[string]string{
		"declared.yaml": header2 + fmt.Sprintf(box, `"{{ .metadata.name }}-svc"`),
		"other.yaml":    header2 + fmt.Sprintf(box, "legacy-svc"),
	})
	k, diags := Load(filepath.Join(dir, "declared.yaml"))
	want := "declared.yaml:15:15: warning: [site] operatorBox.onDelete.services[0]: only names a child the entry declares; children are deleted with their custom resource (garbage collection through owner references), so this changes nothing; remove it"
	if diags.HasErrors() || diagLines(dir, diags) != want {
		t.Fatalf("want\n  %s\ngot\n  %s", want, diagLines(dir, diags))
	}
	if n := len(k.CRDs[0].Box.Hooks[OnDelete].Resources); n != 0 {
		t.Fatalf("%d onDelete declarations left", n)
	}
	_, diags = Load(filepath.Join(dir, "other.yaml"))
	want = "other.yaml:15:15: [site] operatorBox.onDelete.services[0]: only names an object (services) that the entry does not declare: upstream deletes that object when the custom resource is deleted, but this runtime deletes only its own children; declare it under onCreate or onReconcile with this name, or delete it from an onDelete Job"
	if got := diagLines(dir, diags.Errors()); got != want {
		t.Fatalf("want\n  %s\ngot\n  %s", want, got)
	}
}

// `include:` reads a status block's fields from a fragment file, before the
// block's own (orkspace/orkestra examples/intermediate/08-state-machine
// include-katalog.yaml).
func TestStatusInclude(t *testing.T) {
	body := "spec:\n  crds:\n    site:\n      crdFile: ./crd.yaml\n      apiTypes: {version: v1}\n      operatorBox:\n        emit:\n          status:\n            include: ./include/%s\n            fields:\n              - {path: endpoint, value: x}\n"
	dir := writeFiles(t, map[string]string{
		"k.yaml":              header2 + fmt.Sprintf(body, "status.yaml"),
		"bad.yaml":            header2 + fmt.Sprintf(body, "broken.yaml"),
		"include/status.yaml": "fields:\n  - path: phase\n    value: Ready\n",
		"include/broken.yaml": "- path: phase\n",
	})
	k, diags := Load(filepath.Join(dir, "k.yaml"))
	if diags.HasErrors() {
		t.Fatal(diagLines(dir, diags))
	}
	fields := k.CRDs[0].Box.Status.Fields
	if len(fields) != 2 || fields[0].Path != "phase" || fields[1].Path != "endpoint" || !strings.HasSuffix(fields[0].Pos.File, "include/status.yaml") || fields[0].Pos.Line != 2 {
		t.Fatalf("fields %+v %+v", fields[0], fields[len(fields)-1])
	}
	_, diags = Load(filepath.Join(dir, "bad.yaml"))
	if want := "include/broken.yaml:1:1: [site] fields: a status fragment needs `fields:`"; !strings.HasPrefix(diagLines(dir, diags.Errors()), want) {
		t.Fatalf("want %s…, got\n%s", want, diagLines(dir, diags.Errors()))
	}
}

// admission validation and mutation `include:` read their rules from a
// fragment file holding `rules:`, before the block's own (orkspace/orkestra
// examples/intermediate/08-state-machine include/admission.yaml; upstream
// pkg/types/includes.go); a rule's position is in the fragment.
func TestAdmissionInclude(t *testing.T) {
	body := "spec:\n  crds:\n    site:\n      crdFile: ./crd.yaml\n      apiTypes: {version: v1}\n      admission:\n        validation:\n          include: ./include/%s\n          rules:\n            - {field: spec.theme, operator: exists, message: theme}\n        mutation:\n          include: ./include/mutate.yaml\n"
	dir := writeFiles(t, map[string]string{
		"k.yaml":                 header2 + fmt.Sprintf(body, "admission.yaml"),
		"bad.yaml":               header2 + fmt.Sprintf(body, "broken.yaml"),
		"include/admission.yaml": "rules:\n  - field: spec.image\n    operator: exists\n    message: spec.image is required\n    action: deny\n",
		"include/mutate.yaml":    "rules:\n  - {field: spec.replicas, default: 2}\n",
		"include/broken.yaml":    "rulez: []\n",
	})
	k, diags := Load(filepath.Join(dir, "k.yaml"))
	if diags.HasErrors() {
		t.Fatal(diagLines(dir, diags))
	}
	a := k.CRDs[0].Admission
	if len(a.Validation) != 2 || a.Validation[0].Message != "spec.image is required" || a.Validation[1].Message != "theme" ||
		!strings.HasSuffix(a.Validation[0].Pos.File, "include/admission.yaml") || a.Validation[0].Pos.Line != 2 {
		t.Fatalf("validation %+v", a.Validation)
	}
	if len(a.Mutation) != 1 || a.Mutation[0].Field != "spec.replicas" {
		t.Fatalf("mutation %+v", a.Mutation)
	}
	if got := strings.Join(k.Included, ","); !strings.Contains(got, "include/admission.yaml") || !strings.Contains(got, "include/mutate.yaml") {
		t.Errorf("Included %s", got)
	}
	_, diags = Load(filepath.Join(dir, "bad.yaml"))
	got := diagLines(dir, diags.Errors())
	for _, want := range []string{
		`include/broken.yaml:1:1: [site] rulez: unknown key "rulez"`,
		"include/broken.yaml:1:1: [site] rules: a validation rules fragment needs `rules:`",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("want %s in\n%s", want, got)
		}
	}
}

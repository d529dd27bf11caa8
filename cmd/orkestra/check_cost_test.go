package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gridCRD: spec.items, at most 32 short strings, at v1alpha1 and v1.
const gridCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: grids.demo.example.io}
spec:
  group: demo.example.io
  scope: Namespaced
  names: {plural: grids, singular: grid, kind: Grid, listKind: GridList}
  versions:
%s`

const gridVersion = `    - name: %s
      served: true
      storage: %t
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                items: {type: array, maxItems: 32, items: {type: string, maxLength: 8}}
                summary: {type: string}
`

// gridKatalog converts v1alpha1 to v1 with a legacy summary of four nested
// ranges over spec.items; mayFail, when not "", is the path's.
func gridKatalog(mayFail string) string {
	k := `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: grid}
spec:
  crds:
    grid:
      crdFile: ./crd.yaml
      apiTypes: {group: demo.example.io, version: v1, kind: Grid, plural: grids}
      conversion:
        storageVersion: v1
        paths:
          - from: v1alpha1
            to: v1
`
	if mayFail != "" {
		k += "            mayFail: " + mayFail + "\n"
	}
	return k + `            spec:
              items: "${self.spec.?items.orValue([])}"
              summary: "{{ range .spec.items }}{{ range $.spec.items }}{{ range $.spec.items }}{{ range $.spec.items }}x{{ end }}{{ end }}{{ end }}{{ end }}"
          - from: v1
            to: v1alpha1
            spec:
              items: "${self.spec.?items.orValue([])}"
`
}

// Issue 28: check --strict accepted a legacy template of four nested ranges
// over a 32-item list in a conversion path, which then failed at run time on
// valid objects: its estimated cost (3.3e6) passed the static limit (1e7)
// but not the runtime budget (1e6). It is a totality finding now: a warning,
// an error with --strict, acknowledged by the path's mayFail.
func TestCheckStrictFindsLegacyRangesOverTheRuntimeBudget(t *testing.T) {
	dir := t.TempDir()
	crd := fmt.Sprintf(gridCRD, fmt.Sprintf(gridVersion, "v1alpha1", false)+fmt.Sprintf(gridVersion, "v1", true))
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("crd.yaml", crd)
	k := write("katalog.yaml", gridKatalog(""))
	finding := k + `:16:25: %s[grid] conversion.paths[0].spec.summary: the template can fail on objects v1alpha1 accepts: its estimated cost 3.3e+06 exceeds the runtime budget of 1e+06 one evaluation may spend: spec.items has up to 32 items (its maxItems), 4 ranges over it; lower the bounds in the schema (maxItems, maxProperties) or simplify the template; or declare that the path may fail: mayFail: "why" on conversion.paths[0]`

	out, errOut, code := run(t, "", "check", "-f", k)
	if code != 0 || !strings.HasPrefix(out, "ok: ") || strings.TrimSpace(errOut) != fmt.Sprintf(finding, "warning: ") {
		t.Fatalf("check: exit %d, stdout %q, stderr:\n%s\nwant:\n%s", code, out, errOut, fmt.Sprintf(finding, "warning: "))
	}
	out, errOut, code = run(t, "", "check", "--strict", "-f", k)
	if code != 1 || out != "" || strings.TrimSpace(errOut) != fmt.Sprintf(finding, "") {
		t.Fatalf("check --strict: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}

	// The finding is right: a Grid with 32 items fails to convert.
	items := make([]string, 32)
	for i := range items {
		items[i] = fmt.Sprintf("i%d", i)
	}
	obj := write("grid.yaml", fmt.Sprintf("apiVersion: demo.example.io/v1alpha1\nkind: Grid\nmetadata: {name: g, namespace: default}\nspec: {items: [%s]}\n", strings.Join(items, ", ")))
	if _, errOut, code = run(t, "", "convert", "-f", k, "--to", "v1", obj); code == 0 || !strings.Contains(errOut, "the template exceeded the runtime cost limit of 1000000 per evaluation") {
		t.Fatalf("convert: exit %d, stderr %s", code, errOut)
	}

	// Declared, the finding is acknowledged and --strict passes.
	write("katalog.yaml", gridKatalog(`"summaries of more than 15 items are too costly"`))
	if out, errOut, code = run(t, "", "check", "--strict", "-f", k); code != 0 || !strings.HasPrefix(out, "ok: ") {
		t.Fatalf("check --strict with mayFail: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
}

package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// render shows each child's reconcile and prune modes as loaded, and what
// decided them, in the report and in -o json.
func TestRenderShowsModes(t *testing.T) {
	_, write := websiteDir(t)
	k := write("k.yaml", `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
spec:
  crds:
    site:
      crdFile: ./crd.yaml
      apiTypes: {group: demo.orkestra.io, version: v1, kind: Website}
      operatorBox:
        onCreate:
          prune: true
          configMaps:
            - name: "${self.metadata.name}-plan"
              data: {a: b}
        onReconcile:
          jobs:
            - name: "${self.metadata.name}-build"
              image: busybox
              reconcile: false
          deployments:
            - name: "${self.metadata.name}"
              image: "${self.spec.image}"
`)
	cr := "../../examples/website/website-v1.yaml"
	out, errOut, code := run(t, "", "render", "-f", k, cr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"    reconcile: false\n    reconcileFrom: default of onCreate\n    prune: true\n    pruneFrom: 'operatorBox.onCreate.prune: true (" + k + ":10:18)'\n",
		"    reconcile: true\n    reconcileFrom: default of onReconcile\n    prune: true\n    pruneFrom: 'default: a drift-corrected child is deleted when its condition stops holding; the children of forEach items that are gone stay'\n",
		"    reconcile: false\n    reconcileFrom: 'operatorBox.onReconcile.jobs[0].reconcile: false (" + k + ":18:26)'\n    prune: false\n    pruneFrom: 'default: jobs are never deleted when their condition stops holding'\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no\n%s\nin:\n%s", want, out)
		}
	}

	out, errOut, code = run(t, "", "render", "-f", k, "-o", "json", cr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		OnReconcile []map[string]any `json:"onReconcile"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	job := doc.OnReconcile[1]
	if job["kind"] != "jobs" || job["reconcile"] != false || job["prune"] != false || !strings.HasPrefix(job["reconcileFrom"].(string), "operatorBox.onReconcile.jobs[0].reconcile: false (") || job["pruneFrom"] != "default: jobs are never deleted when their condition stops holding" {
		t.Errorf("json: %v", job)
	}
}

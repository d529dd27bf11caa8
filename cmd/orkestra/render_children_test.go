package main

import (
	"strings"
	"testing"
)

// render --children gives expressions the observed children of the files:
// those labelled as the resource's, and those without the label.
func TestRenderReadsChildrenFromFiles(t *testing.T) {
	_, write := websiteDir(t)
	k := write("k.yaml", `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
spec:
  crds:
    site:
      crdFile: ./crd.yaml
      apiTypes: {group: demo.orkestra.io, version: v1, kind: Website}
      operatorBox:
        onReconcile:
          deployments:
            - name: "${self.metadata.name}"
              image: "${self.spec.image}"
        status:
          fields:
            - path: readyReplicas
              value: "${children.deployments['shop'].status.readyReplicas}"
            - path: phase
              value: "${children.deployment.?status.?readyReplicas.orValue(0) > 0 ? 'Serving' : 'Starting'}"
`)
	cr := "../../examples/website/website-v1.yaml"
	kids := write("children.yaml", `apiVersion: apps/v1
kind: Deployment
metadata: {name: shop, namespace: default, labels: {orkestra-owner: shop}}
status: {readyReplicas: 3}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: other, namespace: default, labels: {orkestra-owner: blog}}
status: {readyReplicas: 9}
`)
	out, errOut, code := run(t, "", "render", "-f", k, cr, "--children", kids)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "status:\n  phase: Serving\n  readyReplicas: 3\n") {
		t.Errorf("with --children:\n%s", out)
	}
	out, errOut, code = run(t, "", "render", "-f", k, cr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "status:\n  phase: Starting\n") || strings.Contains(out, "readyReplicas") {
		t.Errorf("without --children:\n%s", out)
	}
}

package main

import (
	"strings"
	"testing"
)

// render shows each child's wave, dependsOn and readyWhen, the status
// conditions as they would be written, and the finalizer an ordered
// deletion needs; -o manifests lists the children wave by wave.
func TestRenderShowsReadinessAndConditions(t *testing.T) {
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
            - id: web
              name: "${self.metadata.name}"
              image: "${self.spec.image}"
              readyWhen: "self.status.?availableReplicas.orValue(0) > 0"
          configMaps:
            - name: "${self.metadata.name}-after"
              data: {a: b}
              dependsOn: {web: created}
        status:
          conditions:
            - type: Large
              status: "self.spec.replicas > 2"
              message: "${string(self.spec.replicas)} replicas"
`)
	cr := "../../examples/website/website-v1.yaml"
	out, errOut, code := run(t, "", "render", "-f", k, cr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"    readyWhen: self.status.?availableReplicas.orValue(0) > 0\n",
		"    wave: 1\n    dependsOn:\n      - web created\n",
		"conditions:\n  - type: Large\n    status: \"True\"\n    reason: ConditionMet\n    message: 3 replicas\n",
		"finalizers:\n  - orkestra.orkspace.io/finalizer\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no\n%s\nin:\n%s", want, out)
		}
	}
	out, errOut, code = run(t, "", "render", "-f", k, "-o", "manifests", cr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if d, c := strings.Index(out, "kind: Deployment"), strings.Index(out, "kind: ConfigMap"); d < 0 || c < d {
		t.Errorf("the ConfigMap waits for the Deployment, so comes after it:\n%s", out)
	}
}

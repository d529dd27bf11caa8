package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// run --deny-external refuses a katalog that declares external calls,
// naming each, before it reaches a cluster; --external-allow takes CIDR
// ranges only.
func TestRunDenyExternal(t *testing.T) {
	dir, write := websiteDir(t)
	k := `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: calls}
spec:
  crds:
    site:
      crdFile: ./crd.yaml
      apiTypes: {version: v1}
      operatorBox:
        onReconcile:
          external:
            - name: flags
              url: https://flags.example.com/x
`
	file := write("katalog.yaml", k)
	_, errOut, code := run(t, "", "run", "-f", file, "--deny-external", "--kubeconfig", filepath.Join(dir, "none"))
	want := "--deny-external: the katalog declares external calls (or cross reads with source:), which reach outside the cluster:\n  " + file + ":12:15: [site] operatorBox.onReconcile.external[0] (flags)"
	if code != 1 || !strings.Contains(errOut, want) {
		t.Fatalf("exit %d, stderr:\n%s\nwant it to contain\n%s", code, errOut, want)
	}
	_, errOut, code = run(t, "", "simulate", "--external-allow", "cluster", "-f", file)
	if code != 1 || !strings.Contains(errOut, `--external-allow "cluster" is not a CIDR range (10.96.0.0/12) or an address (127.0.0.1)`) {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
}

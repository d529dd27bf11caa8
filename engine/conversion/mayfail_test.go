package conversion_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/engine/conversion"
)

// A failed path says whether it declares mayFail: the failure an author
// expects for some valid objects, or one nobody acknowledged.
func TestPathFailureSaysWhetherAcknowledged(t *testing.T) {
	katalogWith := func(mayFail string) string {
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
`+mayFail+`            spec:
              host: "${self.spec.hostPort.split(':')[0]}"
          - from: v1
            to: v1alpha1
            spec:
              hostPort: "${self.spec.host}"
          - {from: v1beta1, to: v1, spec: {host: x}}
          - {from: v1, to: v1beta1, spec: {address: {host: x}}}
`), 0o644)
		return filepath.Join(dir, "k.yaml")
	}
	in := `{apiVersion: test.orkestra.io/v1alpha1, kind: Gadget, metadata: {name: g1, namespace: team-a}, spec: {size: 2}}`
	for _, tc := range []struct {
		mayFail, want string
		acked         bool
	}{
		{"            mayFail: v1alpha1 objects may have no hostPort\n",
			`converting Gadget team-a/g1 from v1alpha1 to v1: path v1alpha1→v1 failed (acknowledged: mayFail "v1alpha1 objects may have no hostPort"): conversion.paths[0].spec.host`, true},
		{"",
			`converting Gadget team-a/g1 from v1alpha1 to v1: path v1alpha1→v1 failed (not acknowledged: the path has no mayFail): conversion.paths[0].spec.host`, false},
	} {
		c := conversion.New(compile(t, katalogWith(tc.mayFail)), conversion.Options{})
		_, err := c.Convert(obj(t, in), "test.orkestra.io/v1")
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !strings.Contains(err.Error(), "no such key: hostPort") {
			t.Errorf("error %v\nwant %s…", err, tc.want)
			continue
		}
		var pe *conversion.PathError
		if !errors.As(err, &pe) || pe.Acknowledged() != tc.acked || pe.Path.From != "v1alpha1" || pe.Path.To != "v1" {
			t.Errorf("path error %+v, acknowledged %v", pe, tc.acked)
		}
	}
}

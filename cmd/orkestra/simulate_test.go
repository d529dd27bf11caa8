package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSimulateExitStatus(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	examples, err := filepath.Abs("../../examples/website")
	if err != nil {
		t.Fatal(err)
	}
	head := "apiVersion: orkestra.orkspace.io/v1\nkind: Simulate\nspec:\n  katalog: " + examples + "/katalog.yaml\n  cr: " + examples + "/website-v1.yaml\n  cycles: 3\n"
	failing := write("simulate-fail.yaml", head+"  expect:\n    ops:\n      - {cycle: 1, verb: delete, resource: deployments, name: shop}\n")
	invalid := write("simulate-invalid.yaml", head+"  expect:\n    ops:\n      - {cycle: 4, verb: create, resource: deployments}\n")
	cases := []struct {
		name string
		args []string
		code int
		says []string
	}{
		{"pass", []string{"simulate", "-f", "../../examples/website/simulate.yaml"}, 0, []string{"PASS", "1 passed, 0 failed, 0 invalid"}},
		{"an expectation fails", []string{"simulate", "-f", failing}, 1, []string{"✗ cycle 1: delete deployments/shop", "cycle 1: apply deployments/shop in default (created)", "0 passed, 1 failed, 0 invalid"}},
		{"invalid spec", []string{"simulate", "-f", invalid}, 2, []string{"simulate-invalid.yaml:9:17: spec.expect.ops[0].cycle: is 4", "0 passed, 0 failed, 1 invalid"}},
		{"invalid wins over failed", []string{"simulate", "-f", failing, "-f", invalid}, 2, []string{"0 passed, 1 failed, 1 invalid"}},
		{"discovery", []string{"simulate", "../../examples/..."}, 0, []string{"examples/website/simulate.yaml", "examples/legacy-website/simulate.yaml", "examples/state-machine/simulate.yaml", "3 passed"}},
		{"discovery of a directory with failing specs", []string{"simulate", dir + "/..."}, 2, []string{"0 passed, 1 failed, 1 invalid"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, "", tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			for _, s := range tc.says {
				if !strings.Contains(out, s) {
					t.Errorf("stdout does not say %q:\n%s", s, out)
				}
			}
		})
	}
	if _, errOut, code := run(t, "", "simulate"); code != 1 || !strings.Contains(errOut, "no spec given") {
		t.Errorf("without a spec: exit %d, stderr %q", code, errOut)
	}
}

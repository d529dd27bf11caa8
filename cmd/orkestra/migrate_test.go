package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// migrateDir copies the legacy example with katalog.yaml replaced by src.
func migrateDir(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"crd.yaml", "webapp.yaml", "katalog.yaml"} {
		b, err := os.ReadFile(filepath.Join("../../examples/legacy-website", f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "katalog.yaml" && src != "" {
			b = []byte(src)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runMigrate(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := newMigrateCmd()
	var o, e bytes.Buffer
	cmd.SetOut(&o)
	cmd.SetErr(&e)
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err = cmd.Execute()
	return o.String(), e.String(), err
}

func TestMigrateExampleToStdoutAndInPlace(t *testing.T) {
	dir := migrateDir(t, "")
	path := filepath.Join(dir, "katalog.yaml")
	orig, _ := os.ReadFile(path)
	out, errOut, err := runMigrate(t, "-f", path, "--count", "50", "--list")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	// spec is optional: the original fails on .spec.replicas without it,
	// and optional.of keeps that failure (a plain CEL reference would leave
	// the field unset instead).
	if !strings.Contains(out, `replicas: "${optional.of(self.spec.replicas)}"`) || !strings.Contains(out, "# A katalog in the original text/template style") {
		t.Errorf("stdout:\n%s", out)
	}
	if !strings.Contains(errOut, "translated 18, left 0, verified against") || !strings.Contains(errOut, "→ ${self.metadata.name}-svc") {
		t.Errorf("stderr:\n%s", errOut)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, orig) {
		t.Error("stdout mode changed the katalog")
	}
	if _, errOut, err = runMigrate(t, "-f", path, "--count", "20", "--in-place"); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	now, _ := os.ReadFile(path)
	if string(now) != out {
		t.Errorf("in place:\n%s\nwant the stdout output", now)
	}
	// Migrated, it checks clean and migrates to itself.
	if _, errOut, err = runMigrate(t, "-f", path, "--count", "20"); err != nil || !strings.Contains(errOut, "translated 0, left 0") {
		t.Errorf("second run: %v\n%s", err, errOut)
	}
}

// A translation that holds for every object the schema admits differs on
// a sample the API server would reject: refused, with the object and both
// outputs; --force writes anyway.
func TestMigrateRefusesThenForce(t *testing.T) {
	src := strings.Replace(mustRead(t, "../../examples/legacy-website/katalog.yaml"),
		`type: "{{ .spec.serviceType }}"`, `type: "{{ .spec.serviceType | default \"ClusterIP\" }}"`, 1)
	dir := migrateDir(t, src)
	path := filepath.Join(dir, "katalog.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: demo.orkestra.io/v1alpha1\nkind: WebApp\nmetadata: {name: bad, namespace: default}\nspec: {image: nginx, serviceType: \"\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outFile := filepath.Join(dir, "out.yaml")
	_, errOut, err := runMigrate(t, "-f", path, "--sample", bad, "--count", "30", "-o", outFile)
	var code exitCode
	if !errors.As(err, &code) || code != 1 {
		t.Fatalf("want exit 1, got %v\n%s", err, errOut)
	}
	for _, want := range []string{
		"operatorBox.onCreate.services[0].type: the translation is NOT equivalent",
		`legacy: {{ .spec.serviceType | default "ClusterIP" }}`,
		"cel:    ${string(self.spec.serviceType)}",
		"shrunk from " + bad,
		`legacy gives: "ClusterIP"`,
		`cel gives:    ""`,
		"the API server would reject this object",
		"refusing to write",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if _, err := os.Stat(outFile); err == nil {
		t.Error("refused, but wrote the output")
	}
	_, errOut, err = runMigrate(t, "-f", path, "--sample", bad, "--count", "30", "-o", outFile, "--force")
	if err != nil {
		t.Fatalf("--force: %v\n%s", err, errOut)
	}
	if b, _ := os.ReadFile(outFile); !strings.Contains(string(b), `type: "${string(self.spec.serviceType)}"`) {
		t.Errorf("--force output:\n%s", b)
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

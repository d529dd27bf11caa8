package migrate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// FuzzMigrate migrates arbitrary katalog text next to the legacy example's
// CRD and sample: the YAML editor rewrites what it translates in any layout (quoting,
// block scalars, flow collections, comments), and whatever it writes is
// YAML that `orkestra check` accepts; never a panic.
func FuzzMigrate(f *testing.F) {
	katalogText, err := os.ReadFile(filepath.Join(example, "katalog.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	files := map[string][]byte{}
	for _, name := range []string{"crd.yaml", "webapp.yaml"} {
		if files[name], err = os.ReadFile(filepath.Join(example, name)); err != nil {
			f.Fatal(err)
		}
	}
	if _, err := Run(Options{Files: []string{filepath.Join(example, "katalog.yaml")}, Count: -1}); err != nil {
		f.Fatalf("the seed does not migrate: %v", err)
	}
	body := string(katalogText)
	f.Add(body)
	for _, layout := range []string{
		"image: '{{ .spec.image }}'",
		"image: >-\n                {{ .spec.image }}",
		"image: |-\n                {{ .spec.image }}",
		"image: nginx-{{ .spec.image }} # a comment",
		"image: \"{{ .spec.image }}\" # a comment\n              # another",
	} {
		f.Add(strings.Replace(body, "image: \"{{ .spec.image }}\"", layout, 1))
	}
	f.Fuzz(func(t *testing.T, text string) {
		dir := t.TempDir()
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		p := filepath.Join(dir, "katalog.yaml")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := Run(Options{Files: []string{p}, Count: -1})
		if err != nil {
			return
		}
		if res.Check.HasErrors() {
			t.Fatalf("the migrated katalog does not check:\n%v\n%s", res.Check.Errors(), res.Files[0].Migrated)
		}
		for _, file := range res.Files {
			var n yaml.Node
			if err := yaml.Unmarshal(file.Migrated, &n); err != nil {
				t.Fatalf("%s is not YAML after migration: %v\n%s", file.Path, err, file.Migrated)
			}
		}
	})
}

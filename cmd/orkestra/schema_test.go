package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	yamlv3 "gopkg.in/yaml.v3"
	"sigs.k8s.io/yaml"
)

const schemaFile = "../../schema/katalog.schema.json"

// The committed schema is what the loader's tables generate.
func TestSchemaUpToDate(t *testing.T) {
	out, _, code := run(t, "", "schema")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	committed, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, []byte(out)) {
		t.Fatal("schema/katalog.schema.json is out of date: run `go run ./cmd/orkestra schema > schema/katalog.schema.json`")
	}
}

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	s, err := c.Compile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// validateYAML reads data as the loader and editors do (YAML 1.2, yaml.v3:
// a key `on:` is the string "on", where YAML 1.1 readers make it true).
func validateYAML(t *testing.T, s *jsonschema.Schema, data []byte) error {
	t.Helper()
	var v any
	if err := yamlv3.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(doc)
}

// Every katalog of the repository — examples and test fixtures — is valid
// against the schema.
func TestSchemaAcceptsEveryKatalog(t *testing.T) {
	s := compileSchema(t)
	n := 0
	err := filepath.WalkDir("../..", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "bin" || d.Name() == ".git" || d.Name() == "hack") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, doc := range bytes.Split(data, []byte("\n---\n")) {
			if !bytes.Contains(doc, []byte("kind: Katalog")) && !bytes.Contains(doc, []byte("kind: Komposer")) {
				continue
			}
			var head struct{ Kind string }
			if yaml.Unmarshal(doc, &head) != nil || head.Kind != "Katalog" && head.Kind != "Komposer" {
				continue
			}
			// Fixtures of deliberately broken katalogs say so in their path.
			if strings.Contains(p, "invalid") || strings.Contains(p, "broken") || strings.Contains(p, "/bad") {
				continue
			}
			n++
			if err := validateYAML(t, s, doc); err != nil {
				t.Errorf("%s: %v", p, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 3 {
		t.Fatalf("only %d katalogs found", n)
	}
	t.Logf("%d katalogs valid", n)
}

// Broken documents are rejected where check rejects them.
func TestSchemaRejects(t *testing.T) {
	s := compileSchema(t)
	head := "apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nspec:\n  crds:\n    site:\n"
	for _, bad := range []string{
		head + "      crdFiel: ./crd.yaml\n", // a typo of an entry key
		head + "      operatorBox:\n        onCreate:\n          deployments:\n            - imag: x\n", // a typo of a kind's field
		head + "      validation:\n        rules:\n          - field: spec.a\n            action: block\n",
		"apiVersion: orkestra.orkspace.io/v2\nkind: Katalog\n", // an unknown apiVersion
		"kind: Katalog\nspec: {}\n", // no apiVersion
	} {
		if err := validateYAML(t, s, []byte(bad)); err == nil {
			t.Errorf("accepted:\n%s", bad)
		}
	}
}

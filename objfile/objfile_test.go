package objfile

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Several documents, a List unpacked, empty and null documents skipped, a
// JSON document; numbers as the API server decodes them.
func TestRead(t *testing.T) {
	a := write(t, "a.yaml", `apiVersion: v1
kind: ConfigMap
metadata: {name: one}
data: {n: "1"}
---
---
null
---
apiVersion: v1
kind: List
items:
  - {apiVersion: example.io/v1, kind: Thing, metadata: {name: two}, spec: {replicas: 3, ratio: 1.5, big: 9007199254740993}}
  - {apiVersion: example.io/v1, kind: Thing, metadata: {name: three}}
`)
	b := write(t, "b.json", `{"apiVersion": "example.io/v1", "kind": "Thing", "metadata": {"name": "four"}}`)
	objs, err := Read([]string{a, b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.GetName())
	}
	if want := []string{"one", "two", "three", "four"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("names = %v, want %v", names, want)
	}
	spec := objs[1].Object["spec"].(map[string]any)
	if spec["replicas"] != int64(3) || spec["ratio"] != 1.5 || spec["big"] != int64(9007199254740993) {
		t.Errorf("numbers decoded as %#v", spec)
	}
	got, err := Read(nil, strings.NewReader("apiVersion: v1\nkind: Namespace\nmetadata: {name: five}\n"))
	if err != nil || len(got) != 1 || got[0].GetName() != "five" {
		t.Errorf("stdin: %v, %v", got, err)
	}
}

// Every bad input names the file and the document.
func TestReadErrors(t *testing.T) {
	for _, tc := range []struct{ name, content, want string }{
		{"noversion.yaml", "apiVersion: v1\nkind: ConfigMap\n---\nkind: ConfigMap\nmetadata: {name: x}\n", "noversion.yaml (document 2): an object needs apiVersion and kind"},
		{"nokind.yaml", "metadata: {name: x}\n", "nokind.yaml (document 1): Object 'Kind' is missing"},
		{"bad.yaml", "apiVersion: v1\nkind: [\n", "bad.yaml (document 1): "},
	} {
		p := write(t, tc.name, tc.content)
		_, err := Read([]string{p}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing.yaml")); !os.IsNotExist(err) {
		t.Errorf("a missing file: %v, want not-exist", err)
	}
}

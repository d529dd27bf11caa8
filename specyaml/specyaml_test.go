package specyaml

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/katalog"
)

func open(t *testing.T, text string) (*Reader, *katalog.Diagnostics, Fields) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var diags katalog.Diagnostics
	r, root := Open(f, &diags)
	if root == nil {
		t.Fatalf("not read: %v", diags)
	}
	return r, &diags, r.Mapping(root, "", []string{"a", "b", "c", "list", "n", "yes", "d"}, map[string]string{"old": "old changes nothing"})
}

// TestMergeKeys: the mapping's own keys win over merged ones, an earlier
// merged mapping over a later one; x- keys hold the anchors and are not
// read.
func TestMergeKeys(t *testing.T) {
	r, diags, f := open(t, "x-one: &one {a: one, b: one}\nx-two: &two {b: two, c: two}\n<<: [*one, *two]\na: own\n")
	if len(*diags) > 0 {
		t.Fatal(*diags)
	}
	got := r.Str(f.V("a"), "a") + " " + r.Str(f.V("b"), "b") + " " + r.Str(f.V("c"), "c")
	if got != "own one two" {
		t.Errorf("merged a b c = %q, want own one two", got)
	}
	if f.Has("x-one") {
		t.Error("an x- key was read")
	}
}

// TestScalars: the scalar forms each decoder takes, and what it reports.
func TestScalars(t *testing.T) {
	r, diags, f := open(t, "n: \"42\"\nyes: True\nd: 1m30s\nlist: [p, q]\n")
	if n, ok := r.Int(f.V("n"), "n"); !ok || n != 42 {
		t.Errorf("Int of a quoted number: %d %v", n, ok)
	}
	if !r.Bool(f.V("yes"), "yes") {
		t.Error("Bool of True")
	}
	if d := r.Duration(f.V("d"), "d"); d.String() != "1m30s" {
		t.Errorf("Duration %s", d)
	}
	if l := r.StrList(f.V("list"), "list"); strings.Join(l, ",") != "p,q" {
		t.Errorf("StrList %v", l)
	}
	if _, ok := r.Int(f.V("absent"), "absent"); ok || len(*diags) > 0 {
		t.Errorf("an absent integer is not an error and not set: %v", *diags)
	}
	r.Int(f.V("list"), "list")
	r.Bool(f.V("d"), "d")
	r.Str(f.V("list"), "list")
	want := []string{"spec.yaml:4:7: list: must be an integer, got a list", `spec.yaml:3:4: d: must be true or false, got str "1m30s"`, "spec.yaml:4:7: list: must be a string, got a list"}
	if len(*diags) != len(want) {
		t.Fatalf("got %v, want %d problems", *diags, len(want))
	}
	for i, w := range want {
		if !strings.HasSuffix((*diags)[i].Error(), w) && !strings.Contains((*diags)[i].Error(), w) {
			t.Errorf("problem %d: %q, want %q", i, (*diags)[i].Error(), w)
		}
	}
}

// TestMappingProblems: merges of non-maps (found first), unknown keys
// (did-you-mean) and duplicates are errors at their position; an ignored key is a warning;
// a null is an empty map.
func TestMappingProblems(t *testing.T) {
	_, diags, _ := open(t, "a: 1\nbb: 2\na: 3\nold: 4\n<<: 5\n")
	want := []string{
		"spec.yaml:5:5: a merge key (<<) takes an alias of a map",
		`spec.yaml:2:1: bb: unknown key "bb"; did you mean "b"?`,
		`spec.yaml:3:1: a: duplicate key "a" (first at line 1); remove one`,
		"spec.yaml:4:1: warning: old: old changes nothing",
	}
	got := []string{}
	for _, d := range *diags {
		got = append(got, d.Error())
	}
	if len(got) != len(want) {
		t.Fatalf("got %q", got)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("problem %d: %q, want %q", i, got[i], want[i])
		}
	}
	if (*diags)[3].Severity != katalog.Warning || (*diags)[1].Severity == katalog.Warning {
		t.Error("an ignored key is a warning, an unknown one an error")
	}
	r, diags2, _ := open(t, "a: 1\n")
	if f := r.Mapping(nil, "x", nil, nil); f == nil || len(*diags2) > 0 {
		t.Error("a null is an empty map")
	}
}

// TestOpenAndExisting: a file is one document of bounded size; a path is
// relative to the directory of the file that names it.
func TestOpenAndExisting(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := write("big.yaml", "a: "+strings.Repeat("x", MaxFileBytes)+"\n")
	two := write("two.yaml", "a: 1\n---\na: 2\n")
	spec := write("spec.yaml", "a: ./two.yaml\nb: ./gone.yaml\n")
	for file, want := range map[string]string{big: "larger than", two: "two.yaml:2:1: a second YAML document", filepath.Join(dir, "nope.yaml"): "no such file"} {
		var diags katalog.Diagnostics
		Open(file, &diags)
		if len(diags) != 1 || !strings.Contains(diags.Error(), want) {
			t.Errorf("%s: %v, want %q", filepath.Base(file), diags, want)
		}
	}
	var diags katalog.Diagnostics
	r, root := Open(spec, &diags)
	f := r.Mapping(root, "", []string{"a", "b"}, nil)
	if p := r.Existing(f.V("a"), "a", r.Dir); p != two || len(diags) > 0 {
		t.Errorf("Existing(a) = %s %v", p, diags)
	}
	r.Existing(f.V("b"), "b", r.Dir)
	if len(diags) != 1 || !strings.Contains(diags[0].Error(), "spec.yaml:2:4: b: ./gone.yaml: no such file") {
		t.Errorf("a missing file: %v", diags)
	}
}

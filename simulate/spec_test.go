package simulate

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// files writes name → content under a new directory and returns it. Every
// spec below names these, so that only the file under test is missing.
func files(t *testing.T, extra map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	base := map[string]string{"katalog.yaml": "kind: Katalog\n", "cr.yaml": "kind: X\n", "crd.yaml": "kind: CustomResourceDefinition\n"}
	for k, v := range extra {
		base[k] = v
	}
	for name, content := range base {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const head = "apiVersion: orkestra.orkspace.io/v1\nkind: Simulate\nmetadata:\n  name: t\n"

func TestReadEveryKey(t *testing.T) {
	dir := files(t, map[string]string{"simulate.yaml": head + `spec:
  katalog: ./katalog.yaml
  cr: ./cr.yaml
  crFiles: [./cr.yaml]
  crd: ./crd.yaml
  crdFiles: [./crd.yaml]
  cycles: 4
  skipExternal: true
  expect:
    steady: true
    steadyAt: 3
    noErrors: true
    ops:
      - {cycle: 1, verb: create, resource: deployments, name: web, count: 2}
      - {verb: get, resource: websites/status}
    absent:
      - {resource: services, name: web-lb}
      - {cycle: 2, verb: delete, resource: jobs}
    crds:
      web:
        steady: false
        ops:
          - {cycle: 4, verb: apply, resource: configmaps}
`})
	s, err := Read(filepath.Join(dir, "simulate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r := s.Run
	if r.Katalog != filepath.Join(dir, "katalog.yaml") || len(r.CRs) != 2 || len(r.CRDs) != 2 || r.Cycles != 4 || !r.SkipExternal {
		t.Errorf("run = %+v", r)
	}
	e := r.Expect
	if !*e.Steady || *e.SteadyAt != 3 || !e.NoErrors {
		t.Errorf("expect = %+v", e)
	}
	want := []Rule{
		{Cycle: 1, Verb: "create", Resource: "deployments", Name: "web", Count: 2},
		{Verb: "get", Resource: "websites/status"},
	}
	if got := bare(e.Ops); !reflect.DeepEqual(got, want) {
		t.Errorf("ops = %+v, want %+v", got, want)
	}
	wantAbsent := []Rule{{Resource: "services", Name: "web-lb"}, {Cycle: 2, Verb: "delete", Resource: "jobs"}}
	if got := bare(e.Absent); !reflect.DeepEqual(got, wantAbsent) {
		t.Errorf("absent = %+v, want %+v", got, wantAbsent)
	}
	web := e.For("web")
	if web == e || *web.Steady || len(web.Ops) != 1 || web.Ops[0].Verb != "apply" {
		t.Errorf("crds.web = %+v", web)
	}
	if e.For("other") != e {
		t.Error("an entry crds does not name is judged by the top-level block")
	}
	if got := e.Ops[0].Pos; got.Line != 18 || got.Col != 9 {
		t.Errorf("ops[0] at %s, want line 18 col 9", got)
	}
}

// bare drops what the test does not compare (positions, field names).
func bare(rules []Rule) []Rule {
	out := make([]Rule, len(rules))
	for i, r := range rules {
		r.Pos, r.Field = Rule{}.Pos, ""
		out[i] = r
	}
	return out
}

func TestReadDefaults(t *testing.T) {
	dir := files(t, map[string]string{"simulate-x.yaml": "apiVersion: orkestra.orkspace.io/v1\nkind: Simulate\nspec:\n  catalog: katalog.yaml\n  cr: cr.yaml\n"})
	s, err := Read(filepath.Join(dir, "simulate-x.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "simulate-x" || s.Run.Cycles != DefaultCycles || s.Run.Expect != nil || s.Run.Katalog != filepath.Join(dir, "katalog.yaml") {
		t.Errorf("spec = %+v, run = %+v", s, s.Run)
	}
}

// Includes: upstream's pkg/children/fixtures/ops files hold their rules'
// common keys in an anchor under an x- key and merge it into each rule.
func TestIncludeWithMergeKeys(t *testing.T) {
	dir := files(t, map[string]string{
		"ops/base.yaml": `x-base: &base
  cycle: 1
  verb: apply
x-named: &named
  name: shared
ops:
  - <<: *base
    resource: deployments
    name: api
  - <<: *base
    verb: create
    resource: jobs
    name: migrate
  - <<: [*named, *base]
    resource: services
  - include: more.yaml
`,
		"ops/more.yaml": "ops:\n  - {cycle: 2, verb: patch, resource: configmaps}\n",
		"simulate.yaml": head + `spec:
  katalog: katalog.yaml
  cr: cr.yaml
  expect:
    ops:
      - {cycle: 1, verb: get, resource: secrets}
      - include: ops/base.yaml
    absent:
      - include: ops/more.yaml
`})
	s, err := Read(filepath.Join(dir, "simulate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{
		{Cycle: 1, Verb: "get", Resource: "secrets"},
		{Cycle: 1, Verb: "apply", Resource: "deployments", Name: "api"},
		{Cycle: 1, Verb: "create", Resource: "jobs", Name: "migrate"},
		{Cycle: 1, Verb: "apply", Resource: "services", Name: "shared"},
		{Cycle: 2, Verb: "patch", Resource: "configmaps"},
	}
	if got := bare(s.Run.Expect.Ops); !reflect.DeepEqual(got, want) {
		t.Errorf("ops = %+v\nwant %+v", got, want)
	}
	if got := bare(s.Run.Expect.Absent); !reflect.DeepEqual(got, want[4:]) {
		t.Errorf("absent = %+v", got)
	}
	inc := s.Run.Expect.Ops[2]
	if inc.Pos.File != filepath.Join(dir, "ops/base.yaml") || inc.Pos.Line != 10 || !strings.Contains(inc.Field, "spec.expect.ops[1] → base.yaml ops[1]") {
		t.Errorf("an included rule is named by where it stands: %s %s", inc.Pos, inc.Field)
	}
}

func TestReadInvalid(t *testing.T) {
	spec := func(body string) map[string]string { return map[string]string{"simulate.yaml": head + body} }
	run := func(expect string) map[string]string {
		return spec("spec:\n  katalog: katalog.yaml\n  cr: cr.yaml\n  cycles: 3\n  expect:\n" + expect)
	}
	cases := []struct {
		name  string
		files map[string]string
		at    string // file:line:col suffix of the first problem
		says  string
	}{
		{"katalog missing", spec("spec:\n  katalog: gone.yaml\n  cr: cr.yaml\n"), "simulate.yaml:6:12", "gone.yaml: no such file"},
		{"cr missing", spec("spec:\n  katalog: katalog.yaml\n  cr: nope.yaml\n"), "simulate.yaml:7:7", "spec.cr: nope.yaml: no such file"},
		{"crFiles item missing", spec("spec:\n  katalog: katalog.yaml\n  crFiles: [cr.yaml, no.yaml]\n"), "simulate.yaml:7:22", "spec.crFiles[1]"},
		{"crd missing", spec("spec:\n  katalog: katalog.yaml\n  cr: cr.yaml\n  crd: no-crd.yaml\n"), "simulate.yaml:8:8", "no-crd.yaml: no such file"},
		{"import missing", map[string]string{"simulate.yaml": head + "imports:\n  - ./a/simulate.yaml\n"}, "simulate.yaml:6:5", "imports[0]"},
		{"include missing", run("    ops:\n      - include: ops.yaml\n"), "simulate.yaml:11:18", "ops.yaml: no such file"},
		{"no cr", spec("spec:\n  katalog: katalog.yaml\n"), "simulate.yaml:6:3", "give the custom resources"},
		{"no katalog", spec("spec:\n  cr: cr.yaml\n"), "simulate.yaml:6:3", "spec.katalog: missing"},
		{"unknown key", run("    opps: []\n"), "simulate.yaml:10:5", `unknown key "opps"; did you mean "ops"?`},
		{"unknown top key", spec("spek: {}\n"), "simulate.yaml:5:1", `did you mean "spec"?`},
		{"bad verb", run("    ops:\n      - {cycle: 1, verb: created, resource: deployments}\n"), "simulate.yaml:11:26", `unknown verb "created"; did you mean "create"?`},
		{"ops rule without verb", run("    ops:\n      - {cycle: 1, resource: deployments}\n"), "simulate.yaml:11:9", "verb: missing"},
		{"rule without resource", run("    absent:\n      - {verb: delete}\n"), "simulate.yaml:11:9", "resource: missing"},
		{"uppercase resource", run("    ops:\n      - {verb: create, resource: Deployment}\n"), "simulate.yaml:11:34", "lowercase plural"},
		{"cycle 0", run("    ops:\n      - {cycle: 0, verb: create, resource: jobs}\n"), "simulate.yaml:11:17", "cycles are numbered 1 to 3"},
		{"cycle past the run", run("    ops:\n      - {cycle: 4, verb: create, resource: jobs}\n"), "simulate.yaml:11:17", "is 4"},
		{"count in absent", run("    absent:\n      - {resource: jobs, count: 2}\n"), "simulate.yaml:11:26", "absent rule takes no count"},
		{"count 0", run("    ops:\n      - {verb: create, resource: jobs, count: 0}\n"), "simulate.yaml:11:47", "at least 1"},
		{"steadyAt 1", run("    steadyAt: 1\n"), "simulate.yaml:10:15", "cycle 2 or later"},
		{"steadyAt past the run", run("    steadyAt: 9\n"), "simulate.yaml:10:15", "runs 3 cycles"},
		{"steady not a bool", run("    steady: yes please\n"), "simulate.yaml:10:13", "true or false"},
		{"include with other keys", run("    ops:\n      - {include: ops.yaml, cycle: 1}\n"), "simulate.yaml:11:29", "include entry stands alone"},
		{"include without ops", map[string]string{"inc.yaml": "rules: []\n", "simulate.yaml": head + "spec:\n  katalog: katalog.yaml\n  cr: cr.yaml\n  expect:\n    ops:\n      - include: inc.yaml\n"}, "inc.yaml:1:1", `unknown key "rules"`},
		{"include cycle", map[string]string{
			"a.yaml":        "ops:\n  - include: b.yaml\n",
			"b.yaml":        "ops:\n  - include: a.yaml\n",
			"simulate.yaml": head + "spec:\n  katalog: katalog.yaml\n  cr: cr.yaml\n  expect:\n    ops:\n      - include: a.yaml\n"}, "b.yaml:2:14", "includes itself"},
		{"merge of a scalar", run("    ops:\n      - <<: 3\n        verb: create\n        resource: jobs\n"), "simulate.yaml:11:13", "merge key"},
		{"not a Simulate", map[string]string{"simulate.yaml": "apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nspec: {}\n"}, "simulate.yaml:2:7", "not Simulate"},
		{"wrong apiVersion", map[string]string{"simulate.yaml": "apiVersion: v1\nkind: Simulate\nimports: []\n"}, "simulate.yaml:1:13", "use orkestra.orkspace.io/v1"},
		{"nothing to run", map[string]string{"simulate.yaml": head}, "simulate.yaml:1:1", "neither spec: nor imports:"},
		{"serve target", spec("spec:\n  katalog: katalog.yaml\n  cr: cr.yaml\n  target: remote\n"), "simulate.yaml:8:3", "serve targets"},
		{"both spellings", spec("spec:\n  katalog: katalog.yaml\n  catalog: katalog.yaml\n  cr: cr.yaml\n"), "simulate.yaml:7:3", "older spelling"},
		{"cycles 0", spec("spec:\n  katalog: katalog.yaml\n  cr: cr.yaml\n  cycles: 0\n"), "simulate.yaml:8:11", "at least 1"},
		{"cycles not a number", spec("spec:\n  katalog: katalog.yaml\n  cr: cr.yaml\n  cycles: ten\n"), "simulate.yaml:8:11", "must be an integer"},
		{"crds not a mapping", run("    crds: [a]\n"), "simulate.yaml:10:11", "map of katalog entry names"},
		{"crds block with crds", run("    crds:\n      web:\n        crds: {}\n"), "simulate.yaml:12:9", `unknown key "crds"`},
		{"two documents", map[string]string{"simulate.yaml": head + "imports: []\n---\nkind: Simulate\n"}, "simulate.yaml:6:1", "second YAML document"},
		{"duplicate key", run("    steady: true\n    steady: false\n"), "simulate.yaml:11:5", "duplicate key \"steady\" (first at line 10)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := files(t, tc.files)
			_, err := Read(filepath.Join(dir, "simulate.yaml"))
			var ie *InvalidError
			if !errors.As(err, &ie) {
				t.Fatalf("Read = %v, want an InvalidError", err)
			}
			first := ie.Problems[0].Error()
			if !strings.Contains(first, tc.at+":") || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("problems:\n%v\nwant the first at %s, saying %q", err, tc.at, tc.says)
			}
		})
	}
}

func TestSuites(t *testing.T) {
	leaf := func(name string) string {
		return "apiVersion: orkestra.orkspace.io/v1\nkind: Simulate\nmetadata: {name: " + name + "}\nspec:\n  katalog: ../katalog.yaml\n  cr: ../cr.yaml\n"
	}
	dir := files(t, map[string]string{
		"a/simulate.yaml": leaf("a"),
		"b/simulate.yaml": leaf("b"),
		"simulate.yaml":   head + "imports:\n  - ./a/simulate.yaml\n  - b/simulate.yaml\n  - ./a/simulate.yaml\n",
		"both.yaml":       head + "imports: [./b/simulate.yaml]\nspec:\n  katalog: katalog.yaml\n  cr: cr.yaml\n",
		"loop.yaml":       head + "imports: [./loop2.yaml]\n",
		"loop2.yaml":      head + "imports: [./loop.yaml]\n",
	})
	names := func(ls []Loaded) []string {
		var out []string
		for _, l := range ls {
			if l.Err != nil {
				out = append(out, "error: "+l.Err.Error())
				continue
			}
			out = append(out, l.Spec.Name)
		}
		return out
	}
	if got := names(Load(filepath.Join(dir, "simulate.yaml"))); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("a suite runs its imports in order, each once: %v", got)
	}
	if got := names(Load(filepath.Join(dir, "both.yaml"), filepath.Join(dir, "b", "simulate.yaml"))); !reflect.DeepEqual(got, []string{"b", "t"}) {
		t.Errorf("imports first, then the spec's own run; a spec given twice runs once: %v", got)
	}
	got := names(Load(filepath.Join(dir, "loop.yaml")))
	if len(got) != 1 || !strings.Contains(got[0], "import cycle") {
		t.Errorf("an import cycle is an error: %v", got)
	}
}

func TestDiscover(t *testing.T) {
	dir := files(t, map[string]string{
		"a/simulate.yaml":          "x",
		"a/simulate-free.yml":      "x",
		"a/simulation.yaml":        "x",
		"b/testdata/simulate.yaml": "x",
		"b/.hidden/simulate.yaml":  "x",
		"vendor/simulate.yaml":     "x",
		"c/deep/simulate.yaml":     "x",
		"skipme/simulate.yaml":     "x",
	})
	got, err := Discover(dir, []string{"skipme"})
	if err != nil {
		t.Fatal(err)
	}
	var rel []string
	for _, p := range got {
		r, _ := filepath.Rel(dir, p)
		rel = append(rel, r)
	}
	want := []string{"a/simulate-free.yml", "a/simulate.yaml", "c/deep/simulate.yaml"}
	if !reflect.DeepEqual(rel, want) {
		t.Errorf("Discover = %v, want %v", rel, want)
	}
	if _, err := Discover(filepath.Join(dir, "nope"), nil); err == nil {
		t.Error("a directory that does not exist is an error")
	}
}

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestParseEveryKey reads a spec using every key of upstream's format
// (iAlexeze/orkestra pkg/types/e2e.go, documentation/reference/schema/04-e2e)
// and checks what each one decoded to.
func TestParseEveryKey(t *testing.T) {
	s, diags := Parse("testdata/full/e2e.yaml")
	if len(diags) != 0 {
		t.Fatalf("diagnostics on a valid spec:\n%v", diags)
	}
	abs := func(p string) string { a, _ := filepath.Abs(filepath.Join("testdata/full", p)); return a }
	switch {
	case s.Name != "full" || s.Description != "every key":
		t.Errorf("metadata: %q %q", s.Name, s.Description)
	case s.Katalog != abs("katalog.yaml"):
		t.Errorf("katalog %s", s.Katalog)
	case len(s.CRDs) != 2 || len(s.CRs) != 2 || s.CRs[1] != abs("cr2.yaml"):
		t.Errorf("crd+crdFiles %v, cr+crFiles %v", s.CRDs, s.CRs)
	case s.Cluster.Provider != "kind" || s.Cluster.Name != "ork-e2e-full" || !s.Cluster.Reuse:
		t.Errorf("cluster %+v", s.Cluster)
	case len(s.Setup.Apply) != 2 || len(s.Setup.Apply[1].Wait) != 1 || s.Setup.Apply[1].Wait[0].Timeout != 10*time.Second:
		t.Errorf("setup.apply %+v", s.Setup.Apply)
	case len(s.Setup.Wait) != 1 || s.Setup.Wait[0].Timeout != 30*time.Second:
		t.Errorf("setup.wait (default timeout 30s) %+v", s.Setup.Wait)
	case len(s.Notes) != 1 || s.Notes[0].Name != "always":
		t.Errorf("notes %+v", s.Notes)
	case s.OnFailure == nil || len(s.OnFailure.Commands) != 1 || len(s.OnFailure.Kubectl.Get) != 1:
		t.Errorf("spec.onFailure %+v", s.OnFailure)
	case len(s.Imports) != 2 || s.Imports[1].Wait != 2*time.Second || !s.Imports[1].FreshCluster || s.Imports[0].Spec == nil || !s.Imports[0].Spec.Custom:
		t.Errorf("imports %+v", s.Imports)
	}
	h := s.Setup.Helm[0]
	if h.Repo != "https://charts.example.com" || h.Chart != "prereq" || h.Release != "pre" || h.Namespace != "pre-system" ||
		h.Version != "1.2.3" || len(h.ValueFiles) != 1 || h.Values["replicas"] != 1 || !h.CreateNamespace || !h.Wait[0].Ready || h.Wait[0].Timeout != time.Minute {
		t.Errorf("setup.helm %+v", h)
	}

	names := []string{}
	for _, e := range s.Expect {
		names = append(names, e.Name)
	}
	if got := strings.Join(names, "|"); got != "included check|resources|merged from base|commands|gated|cleanup" {
		t.Fatalf("expectations in run order (include expanded in place): %s", got)
	}
	inc := s.Expect[0]
	if inc.Dir != abs("") || inc.Kubectl.Apply[0].File != abs("setup.yaml") {
		t.Errorf("an included entry resolves paths against its own file: dir %s, file %s", inc.Dir, inc.Kubectl.Apply[0].File)
	}
	base, merged := s.Expect[1], s.Expect[2]
	if base.Timeout != 30*time.Second || base.Wait != time.Second || base.After != AfterCRApplied {
		t.Errorf("timeout/wait/after %+v", base)
	}
	r := base.Resources[0]
	if r.Kind != "Widget" || r.Name != "small" || r.Namespace != "default" || r.Count == nil || *r.Count != 1 || !r.Ready {
		t.Errorf("resources %+v", r)
	}
	if merged.After != AfterCRApplied || merged.Timeout != 30*time.Second || len(merged.Resources) != 1 {
		t.Errorf("a YAML merge key (<<: *base) brings the anchor's keys: %+v", merged)
	}
	cmd := s.Expect[3]
	if cmd.After != AfterSetupComplete || cmd.Timeout != DefaultTimeout {
		t.Errorf("defaults: after %q timeout %s", cmd.After, cmd.Timeout)
	}
	if a := cmd.Commands[0].Assert; a.Equals == nil || a.NotEquals == nil || a.Contains == nil || a.NotContains == nil || a.Regex == nil ||
		a.GT == nil || a.LT == nil || a.GTE == nil || a.LTE == nil || a.Between == nil || a.NotBetween == nil || !a.Exists || len(a.OneOf) != 2 || len(a.NotOneOf) != 1 {
		t.Errorf("every assertion key: %+v", a)
	}
	if err := cmd.Commands[0].Assert.Check("5\n"); err != nil {
		t.Errorf("every assertion of the fixture holds on 5: %v", err)
	}
	g := s.Expect[4]
	if g.When.Empty() || g.Or.Empty() || g.OnFailure == nil {
		t.Errorf("when/or/onFailure %+v", g)
	}
	k := g.Kubectl
	counts := []int{len(k.Get), len(k.Logs), len(k.Describe), len(k.Exec), len(k.PortForward), len(k.Apply), len(k.Delete), len(k.Patch), len(k.Events), len(k.Auth), len(k.Cp), len(k.Top), len(k.Restart), len(k.Scale)}
	if got := strings.Trim(strings.Join(strings.Fields(strings.Trim(fmtInts(counts), "[]")), ","), ","); got != "3,3,2,1,3,2,3,2,1,1,1,2,1,1" {
		t.Errorf("kubectl subcommands decoded: %s", got)
	}
	pf := k.PortForward[0]
	if pf.Method != "POST" || pf.Headers["Authorization"] != "Bearer ${TOKEN}" || pf.Body != "{}" || pf.Wait != time.Second || pf.JQ != ".ok" {
		t.Errorf("port-forward %+v", pf)
	}
	if k.PortForward[1].StatusCode != 404 || k.PortForward[2].Target.Lease.Lease != "orkestra-konductor" {
		t.Errorf("statusCode / leaderElection: %+v %+v", k.PortForward[1], k.PortForward[2].Target)
	}
	if k.Apply[1].ExitCode != 1 || k.Delete[2].Target.Lease == nil || k.Patch[1].Type != "json" || k.Auth[0].As == "" ||
		k.Scale[0].Replicas == nil || *k.Scale[0].Replicas != 2 || !k.Scale[0].Ready || k.Restart[0].Ready || !k.Top[0].Containers || k.Logs[0].Since != time.Minute {
		t.Errorf("apply/delete/patch/auth/scale/restart/top/logs fields: %+v %+v %+v", k.Apply[1], k.Scale[0], k.Restart[0])
	}
}

func fmtInts(v []int) string {
	var b strings.Builder
	for _, i := range v {
		b.WriteString(" ")
		b.WriteString(string(rune('0' + i)))
	}
	return b.String()
}

// head is the start of a valid spec with one expectation; the table adds
// to it or replaces it.
const head = `apiVersion: orkestra.orkspace.io/v1
kind: E2E
metadata: {name: t}
spec:
  katalog: ./katalog.yaml
  cr: ./cr.yaml
`

// TestParseRejects: each spec must fail for the stated reason, at the
// stated position.
func TestParseRejects(t *testing.T) {
	cases := []struct {
		name, spec, at, want string
		files                map[string]string
	}{
		{"wrong kind", "apiVersion: orkestra.orkspace.io/v1\nkind: Simulate\n", "e2e.yaml:2:7", "kind must be E2E", nil},
		{"wrong apiVersion", "apiVersion: v1\nkind: E2E\nimports: [./c.yaml]\n", "e2e.yaml:1:13", `apiVersion "v1" is not an E2E spec's`, nil},
		{"nothing to run", "apiVersion: orkestra.orkspace.io/v1\nkind: E2E\nmetadata: {name: x}\n", "e2e.yaml:1:1", "needs spec:", nil},
		{"unknown top key", head + "  expect: [{name: a, commands: [{run: 'true'}]}]\nspecc: {}\n", "e2e.yaml:8:1", `unknown key "specc"; did you mean "spec"?`, nil},
		{"unknown spec key", head + "  expectt: []\n", "e2e.yaml:7:3", `unknown key "expectt"; did you mean "expect"?`, nil},
		{"missing katalog file", "apiVersion: orkestra.orkspace.io/v1\nkind: E2E\nspec:\n  katalog: ./nope.yaml\n  cr: ./cr.yaml\n  expect: [{name: a, commands: [{run: 'true'}]}]\n", "e2e.yaml:4:12", "./nope.yaml: no such file", nil},
		{"no expectations", head + "  expect: []\n", "e2e.yaml:7:11", "the spec has no expectations", nil},
		{"cr-applied without a cr", "apiVersion: orkestra.orkspace.io/v1\nkind: E2E\nspec:\n  katalog: ./katalog.yaml\n  expect: [{name: a, after: cr-applied, commands: [{run: 'true'}]}]\n", "e2e.yaml:5:3", "names no custom resource", nil},
		{"no katalog and no custom target", "apiVersion: orkestra.orkspace.io/v1\nkind: E2E\nspec:\n  expect: [{name: a, commands: [{run: 'true'}]}]\n", "e2e.yaml:4:3", "name the katalog under test", nil},
		{"custom target container", head + "  custom: {target: container}\n  expect: [{name: a, commands: [{run: 'true'}]}]\n", "e2e.yaml:7:20", "target container is reserved", nil},
		{"init", head + "  init: {pack: beginner}\n  expect: [{name: a, commands: [{run: 'true'}]}]\n", "e2e.yaml:7:3", "init: (upstream's example packs", nil},
		{"bad provider", head + "  cluster: {provider: gke}\n  expect: [{name: a, commands: [{run: 'true'}]}]\n", "e2e.yaml:7:23", `provider "gke" is not known`, nil},
		{"bad after", head + "  expect: [{name: a, after: cr-apply, commands: [{run: 'true'}]}]\n", "e2e.yaml:7:29", `after "cr-apply" is not a lifecycle event; write one of setup-complete, cr-applied, cr-deleted`, nil},
		{"bad timeout", head + "  expect: [{name: a, timeout: 60, commands: [{run: 'true'}]}]\n", "e2e.yaml:7:31", `"60" is not a duration`, nil},
		{"nameless expectation", head + "  expect: [{commands: [{run: 'true'}]}]\n", "e2e.yaml:7:12", "needs name:", nil},
		{"expectation checks nothing", head + "  expect: [{name: a}]\n", "e2e.yaml:7:12", `"a" checks nothing`, nil},
		{"command without run", head + "  expect: [{name: a, commands: [{equals: x}]}]\n", "e2e.yaml:7:33", "needs run:", nil},
		{"bad regex", head + "  expect: [{name: a, commands: [{run: x, regex: '('}]}]\n", "e2e.yaml:7:49", "not an RE2 regular expression", nil},
		{"non-numeric greaterThan", head + "  expect: [{name: a, commands: [{run: x, greaterThan: ten}]}]\n", "e2e.yaml:7:55", "greaterThan takes a number", nil},
		{"bad between", head + "  expect: [{name: a, commands: [{run: x, between: '9,1'}]}]\n", "e2e.yaml:7:51", `between takes "min,max"`, nil},
		{"exists and notExists", head + "  expect: [{name: a, commands: [{run: x, exists: true, notExists: true}]}]\n", "e2e.yaml:7:67", "exists and notExists cannot both hold", nil},
		{"unknown assertion", head + "  expect: [{name: a, commands: [{run: x, outputContain: y}]}]\n", "e2e.yaml:7:42", `did you mean "outputContains"?`, nil},
		{"resource without kind", head + "  expect: [{name: a, resources: [{name: x}]}]\n", "e2e.yaml:7:34", "needs kind:", nil},
		{"ready with count 0", head + "  expect: [{name: a, resources: [{kind: X, count: 0, ready: true}]}]\n", "e2e.yaml:7:61", "ready: true with count: 0", nil},
		{"get without assertion", head + "  expect: [{name: a, kubectl: {get: [{kind: X, name: y, field: .a}]}}]\n", "e2e.yaml:7:38", "at least one assertion is required", nil},
		{"get without field or format", head + "  expect: [{name: a, kubectl: {get: [{kind: X, name: y, exists: true}]}}]\n", "e2e.yaml:7:38", "give field:", nil},
		{"jq without format json", head + "  expect: [{name: a, kubectl: {get: [{kind: X, name: y, field: .a, jq: .b, exists: true}]}}]\n", "e2e.yaml:7:72", "jq needs format: json", nil},
		{"unknown kubectl subcommand", head + "  expect: [{name: a, kubectl: {rollout: []}}]\n", "e2e.yaml:7:32", `unknown key "rollout"`, nil},
		{"logs with two pod selectors", head + "  expect: [{name: a, kubectl: {logs: [{name: p, labelSelector: a=b, exists: true}]}}]\n", "e2e.yaml:7:39", "exactly one of name:, labelSelector: and leaderElection:", nil},
		{"port-forward without target", head + "  expect: [{name: a, kubectl: {port-forward: [{port: 80, path: /, exists: true}]}}]\n", "e2e.yaml:7:47", "name the target", nil},
		{"statusCode with jq", head + "  expect: [{name: a, kubectl: {port-forward: [{pod: p, port: 80, path: /, statusCode: 200, jq: .a}]}}]\n", "e2e.yaml:7:87", "statusCode asserts the status only", nil},
		{"apply file and inline", head + "  expect: [{name: a, kubectl: {apply: [{file: ./cr.yaml, inline: x}]}}]\n", "e2e.yaml:7:40", "exactly one of file: and inline:", nil},
		{"delete needs a target", head + "  expect: [{name: a, kubectl: {delete: [{kind: X}]}}]\n", "e2e.yaml:7:41", "give file:, or kind: and name:", nil},
		{"patch type", head + "  expect: [{name: a, kubectl: {patch: [{kind: X, name: y, patch: '{}', type: apply}]}}]\n", "e2e.yaml:7:78", "type must be merge, strategic or json", nil},
		{"top kind", head + "  expect: [{name: a, kubectl: {top: [{kind: deployment, exists: true}]}}]\n", "e2e.yaml:7:38", "kind must be pod or node", nil},
		{"scale without replicas", head + "  expect: [{name: a, kubectl: {scale: [{kind: Deployment, name: d}]}}]\n", "e2e.yaml:7:40", "scale needs replicas:", nil},
		{"when unknown operator", head + "  expect: [{name: a, when: [{field: x, equal: y}], commands: [{run: 'true'}]}]\n", "e2e.yaml:7:40", `unknown key "equal"`, nil},
		{"include with other keys", head + "  expect: [{include: ./inc.yaml, name: a}]\n", "e2e.yaml:7:12", "an include: entry takes no other keys",
			map[string]string{"inc.yaml": "expect: [{name: b, commands: [{run: 'true'}]}]\n"}},
		{"nested include", head + "  expect: [{include: ./inc.yaml}]\n", "inc.yaml:1:11", "includes do not nest",
			map[string]string{"inc.yaml": "expect: [{include: ./inc2.yaml}]\n"}},
		{"include without expect", head + "  expect: [{include: ./inc.yaml}]\n", "e2e.yaml:7:22", "has no expect:",
			map[string]string{"inc.yaml": "- name: b\n"}},
		{"merge key of a scalar", head + "  expect: [{<<: 3, name: a, commands: [{run: 'true'}]}]\n", "e2e.yaml:7:17", "a merge key (<<) takes an alias of a map", nil},
		{"duplicate key", head + "  expect: [{name: a, name: b, commands: [{run: 'true'}]}]\n", "e2e.yaml:7:22", `duplicate key "name"`, nil},
		{"two documents", head + "  expect: [{name: a, commands: [{run: 'true'}]}]\n---\nkind: E2E\n", "e2e.yaml:8:1", "a second YAML document", nil},
		{"import cycle", "apiVersion: orkestra.orkspace.io/v1\nkind: E2E\nimports: [./e2e.yaml]\n", "e2e.yaml:3:11", "imports itself", nil},
		{"import of another kind", "apiVersion: orkestra.orkspace.io/v1\nkind: E2E\nimports: [./k.yaml]\n", "k.yaml:1:7", "kind must be E2E",
			map[string]string{"k.yaml": "kind: Katalog\n"}},
		{"import with a bad wait", "apiVersion: orkestra.orkspace.io/v1\nkind: E2E\nimports: [{path: ./c.yaml, wait: soon}]\n", "e2e.yaml:3:34", `"soon" is not a duration`,
			map[string]string{"c.yaml": "apiVersion: orkestra.orkspace.io/v1\nkind: E2E\nimports: []\n"}},
		{"helm remote chart without repo", head + "  setup: {helm: [{chart: cert-manager}]}\n  expect: [{name: a, commands: [{run: 'true'}]}]\n", "e2e.yaml:7:18", "needs repo:", nil},
		{"wait without name", head + "  setup: {wait: [{kind: Deployment}]}\n  expect: [{name: a, commands: [{run: 'true'}]}]\n", "e2e.yaml:7:18", "a wait needs kind: and name:", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(name, text string) {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			write("katalog.yaml", "kind: Katalog\n")
			write("cr.yaml", "kind: X\n")
			for n, text := range c.files {
				write(n, text)
			}
			write("e2e.yaml", c.spec)
			_, diags := Parse(filepath.Join(dir, "e2e.yaml"))
			for _, d := range diags.Errors() {
				if strings.Contains(d.Error(), c.want) && strings.HasSuffix(d.Pos.File+":"+itoa(d.Pos.Line)+":"+itoa(d.Pos.Col), c.at) {
					return
				}
			}
			t.Errorf("want an error %q at %s, got:\n%v", c.want, c.at, diags)
		})
	}
}

func itoa(i int) string {
	s := ""
	for i >= 10 {
		s = string(rune('0'+i%10)) + s
		i /= 10
	}
	return string(rune('0'+i)) + s
}

// TestParseWarnsWhatChangesNothing: upstream keys that change nothing here
// are warnings, not errors; an empty assertion asserts nothing (as
// upstream) and says what to write.
func TestParseWarnsWhatChangesNothing(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "katalog.yaml"), []byte("kind: Katalog\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "cr.yaml"), []byte("kind: X\n"), 0o600)
	spec := head + "  valuesFiles: [./v.yaml]\n  expect: [{name: a, commands: [{run: 'true', outputContains: ''}]}]\n"
	os.WriteFile(filepath.Join(dir, "e2e.yaml"), []byte(spec), 0o600)
	s, diags := Parse(filepath.Join(dir, "e2e.yaml"))
	if diags.HasErrors() || len(diags.Warnings()) != 2 {
		t.Fatalf("want two warnings, got:\n%v", diags)
	}
	if !strings.Contains(diags[0].Error(), "valuesFiles configure upstream's Helm chart") || !strings.Contains(diags[1].Error(), `outputContains: "" asserts nothing`) {
		t.Errorf("warnings:\n%v", diags)
	}
	if s.Expect[0].Commands[0].Assert.Any() {
		t.Error("an empty outputContains asserted something")
	}
}

// TestDiscover: DIR/... finds every spec declaring kind: E2E, skipping
// testdata, vendor, hidden directories and included expectation files.
func TestDiscover(t *testing.T) {
	dir := t.TempDir()
	spec := "apiVersion: orkestra.orkspace.io/v1\nkind: E2E\n"
	for p, text := range map[string]string{
		"a/e2e.yaml":             spec,
		"a/e2e-custom.yaml":      spec,
		"a/e2e/checks.yaml":      "expect: []\n",
		"b/c/e2e.yml":            spec,
		"b/simulate.yaml":        "kind: Simulate\n",
		"b/e2e-notes.yaml":       "kind: Katalog\n",
		"testdata/e2e.yaml":      spec,
		"vendor/x/e2e.yaml":      spec,
		".hidden/e2e.yaml":       spec,
		"_skip/e2e.yaml":         spec,
		"d/nested-kind-e2e.yaml": "spec:\n  kind: E2E\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte(text), 0o600)
	}
	got, err := Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i], _ = filepath.Rel(dir, got[i])
	}
	if strings.Join(got, " ") != "a/e2e-custom.yaml a/e2e.yaml b/c/e2e.yml" {
		t.Errorf("discovered %v", got)
	}
}

// TestParseAnchorKeys: keys starting with x- hold anchors and are not
// read (as in Simulate specs: both formats share one reader).
func TestParseAnchorKeys(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"katalog.yaml": "kind: Katalog\n",
		"cr.yaml":      "kind: X\n",
		"e2e.yaml": head + "  x-later: &later {after: cr-applied, timeout: 7s}\n" +
			"  expect: [{<<: *later, name: a, commands: [{run: 'true'}]}]\nx-unused: {anything: 1}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, diags := Parse(filepath.Join(dir, "e2e.yaml"))
	if len(diags) > 0 {
		t.Fatalf("x-… keys are not read: %v", diags)
	}
	if e := s.Expect[0]; e.After != AfterCRApplied || e.Timeout != 7*time.Second {
		t.Errorf("the anchor an x- key holds merges: after %q timeout %s", e.After, e.Timeout)
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run executes the CLI as main does and returns its outputs and exit code.
func run(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	root := newRootCmd()
	var o, e bytes.Buffer
	root.SetOut(&o)
	root.SetErr(&e)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(args)
	err := root.Execute()
	var ec exitCode
	switch {
	case err == nil:
	case errors.As(err, &ec):
		code = int(ec)
	default:
		e.WriteString("error: " + err.Error() + "\n")
		code = 1
	}
	return o.String(), e.String(), code
}

const website = "../../examples/website/katalog.yaml"

// websiteDir makes a directory holding the website example's CRD as
// crd.yaml, and a function writing more files into it (subdirectories
// created) that returns each file's path.
func websiteDir(t *testing.T) (dir string, write func(name, body string) string) {
	t.Helper()
	dir = t.TempDir()
	write = func(name, body string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	crd, err := os.ReadFile("../../examples/website/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	write("crd.yaml", string(crd))
	return dir, write
}

func TestCheckCleanKatalog(t *testing.T) {
	out, errOut, code := run(t, "", "check", "-f", website)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want := "ok: " + website + " — 2 entries, 22 expressions, 2 conversion paths\n"
	if out != want {
		t.Fatalf("stdout %q, want %q", out, want)
	}
}

func TestCheckListsEveryProblemInPositionOrder(t *testing.T) {
	_, write := websiteDir(t)
	k := write("k.yaml", `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
spec:
  crds:
    site:
      crdFile: ./crd.yaml
      apiTypes: {group: demo.orkestra.io, version: v1, kind: Website}
      operatorBox:
        onReconcile:
          deployments:
            - image: "${self.spec.imag}"
              replicas: "${self.spec.image}"
          configMaps:
            - data: {a: "${self.metadata.name"}
              when: "self.spec.replicas"
`)
	out, errOut, code := run(t, "", "check", "-f", k)
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	want := []string{
		k + ":6:7: warning: [site] ", // a two-version CRD without conversion
		k + ":11:35: [site] operatorBox.onReconcile.deployments[0].image: expression ${self.spec.imag}: undefined field 'imag'; did you mean image?",
		k + ":12:26: [site] operatorBox.onReconcile.deployments[0].replicas: expression ${self.spec.image} yields string",
		k + ":14:26: [site] operatorBox.onReconcile.configMaps[0].data.a: unterminated ${",
		k + ":15:22: [site] operatorBox.onReconcile.configMaps[0].when: when must be a bool",
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), errOut)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) && !(i == 0 && strings.Contains(lines[i], "warning: [site]")) {
			t.Errorf("line %d:\n got %s\nwant %s…", i+1, lines[i], w)
		}
	}
}

// The e2e hostPort split on a loose schema: check warns at the field and
// the index that can fail, --strict makes them errors; on the e2e schema
// (hostPort required, with a pattern holding one ':') nothing is reported.
func TestCheckTotality(t *testing.T) {
	const loose = "../../conformance/testdata/loosehostport/katalog.yaml"
	out, errOut, code := run(t, "", "check", "-f", loose)
	if code != 0 || !strings.HasPrefix(out, "ok: ") {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	want := []string{
		loose + ":18:34: warning: [hostport-v1] conversion.paths[0].spec.host: expression ${self.spec.hostPort.split(':')[0]} can fail on objects v1 accepts: spec.hostPort is not required, so an object without it fails here (no such key); make it required or give it a default in the schema, or guard it: has(self.spec.hostPort) ? … : …, or self.spec.?hostPort.orValue(…); or declare that the path may fail: mayFail: \"why\" on conversion.paths[0]",
		loose + ":19:34: warning: [hostport-v1] conversion.paths[0].spec.port: expression ${self.spec.hostPort.split(':')[1]} can fail on objects v1 accepts: spec.hostPort is not required, so an object without it fails here (no such key); make it required or give it a default in the schema, or guard it: has(self.spec.hostPort) ? … : …, or self.spec.?hostPort.orValue(…); or declare that the path may fail: mayFail: \"why\" on conversion.paths[0]",
		loose + `:19:53: warning: [hostport-v1] conversion.paths[0].spec.port: expression ${self.spec.hostPort.split(':')[1]} can fail on objects v1 accepts: self.spec.hostPort.split(':') has fewer than 2 items for strings the schema allows (no pattern requires 1 ":"); add a pattern that does, or guard it: self.spec.hostPort.split(':').size() > 1 ? … : …; or declare that the path may fail: mayFail: "why" on conversion.paths[0]`,
	}
	if got := strings.Split(strings.TrimSpace(errOut), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("stderr:\n%s\nwant:\n%s", errOut, strings.Join(want, "\n"))
	}
	out, errOut, code = run(t, "", "check", "--strict", "-f", loose)
	if code != 1 || out != "" || strings.Count(errOut, "can fail on objects v1 accepts") != 3 || strings.Contains(errOut, "warning:") {
		t.Fatalf("--strict: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = run(t, "", "check", "--strict", "-f", "../../conformance/testdata/hostport/katalog.yaml")
	if code != 0 || errOut != "" || !strings.HasPrefix(out, "ok: ") {
		t.Fatalf("e2e schema: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestExplain(t *testing.T) {
	const k = "../../conformance/testdata/retention/katalog.yaml"
	out, errOut, code := run(t, "", "explain", "-f", k, "--crd", "backup-v1alpha1", "--from", "v1alpha1")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want := `backups.conformance.orkestra.io v1alpha1 → v1 (` + k + `:17:13)
  spec.retainDays  → spec.retention.days ${self.spec.?retainDays.orValue(30)}; exact through the stash; lossy after an edit (back: ${self.spec.retention.days})
  spec.schedule    → spec.schedule ${self.spec.schedule}; exact (back: ${self.spec.schedule})
  (v1) spec.suspend  ← literal false (` + k + `:23:24)
`
	if out != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", out, want)
	}
	out, _, code = run(t, "", "explain", "-f", k, "--from", "v1", "--to", "v1beta1", "-o", "json")
	var covs []struct {
		CRD, From, To string
		Fields        []struct {
			Field, Back string
			To          []struct{ Field, Expression string }
		}
	}
	if err := json.Unmarshal([]byte(out), &covs); code != 0 || err != nil || len(covs) != 1 {
		t.Fatalf("exit %d, %v:\n%s", code, err, out)
	}
	got := map[string]string{}
	for _, f := range covs[0].Fields {
		got[f.Field] = f.Back
	}
	if got["spec.retention.days"] != "exact through the stash; lossy after an edit" || got["spec.schedule"] != "exact" || got["spec.suspend"] != "exact through the stash; lossy after an edit" {
		t.Errorf("back: %v", got)
	}
	for _, tc := range []struct{ args, want string }{
		{"--crd nope", `no conversion path matches --crd "nope" --from "" --to "" (CRDs with conversion: backups.conformance.orkestra.io)`},
		{"-o yaml", `-o "yaml": use text or json`},
	} {
		_, errOut, code := run(t, "", append([]string{"explain", "-f", k}, strings.Fields(tc.args)...)...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, stderr %q", tc.args, code, errOut)
		}
	}
}

func TestCheckNeedsAKatalog(t *testing.T) {
	_, errOut, code := run(t, "", "check")
	if code != 1 || !strings.Contains(errOut, `required flag(s) "katalog" not set`) {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = run(t, "", "check", "-f", "does-not-exist.yaml")
	if code != 1 || !strings.Contains(errOut, "does-not-exist.yaml: cannot read katalog") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

func TestConvertStdinMultiDocumentAndList(t *testing.T) {
	in := `apiVersion: demo.orkestra.io/v1alpha1
kind: Website
metadata: {name: a, namespace: default}
spec: {image: nginx, replicas: 2, theme: dark}
---
apiVersion: v1
kind: List
items:
  - apiVersion: demo.orkestra.io/v1alpha1
    kind: Website
    metadata: {name: b, namespace: default}
    spec: {image: httpd}
`
	out, errOut, code := run(t, in, "convert", "-f", website, "--to", "v1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	docs := strings.Split(out, "---\n")
	if len(docs) != 2 {
		t.Fatalf("want 2 documents, got %d:\n%s", len(docs), out)
	}
	for _, want := range []string{"apiVersion: demo.orkestra.io/v1\n", "name: a\n", "replicas: 2\n", "enabled: false\n", `{"v1alpha1":{"set":{"spec":{"theme":"dark"}}}}`} {
		if !strings.Contains(docs[0], want) {
			t.Errorf("first document lacks %q:\n%s", want, docs[0])
		}
	}
	// The schema's defaults apply, as the API server would apply them.
	if !strings.Contains(docs[1], "name: b\n") || !strings.Contains(docs[1], "image: httpd\n") || !strings.Contains(docs[1], "replicas: 1\n") {
		t.Errorf("second document (from the List):\n%s", docs[1])
	}
	// group/version works too, and a round trip gives the input back.
	back, errOut, code := run(t, out, "convert", "-f", website, "--to", "demo.orkestra.io/v1alpha1")
	if code != 0 || !strings.Contains(back, "theme: dark\n") || strings.Contains(back, "seo") || strings.Contains(back, "stash") {
		t.Fatalf("round trip: exit %d %s\n%s", code, errOut, back)
	}
}

func TestConvertFailures(t *testing.T) {
	cases := []struct{ in, to, want string }{
		{"apiVersion: demo.orkestra.io/v1alpha1\nkind: Gizmo\nmetadata: {name: g}\n", "v1", "declares no conversion for Gizmo.demo.orkestra.io"},
		{"apiVersion: demo.orkestra.io/v1alpha1\nkind: Website\nmetadata: {name: w, namespace: ns}\nspec: {image: x}\n", "v9", `converting Website ns/w from v1alpha1 to v9: version "v9" is not served by CRD websites.demo.orkestra.io (served: v1alpha1, v1)`},
		{"kind: Website\nmetadata: {name: w}\n", "v1", "<stdin> (document 1): an object needs apiVersion and kind"},
		{"apiVersion: [\n", "v1", "<stdin>"},
	}
	for _, tc := range cases {
		out, errOut, code := run(t, tc.in, "convert", "-f", website, "--to", tc.to)
		if code == 0 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("convert --to %s of %q: exit %d, stdout %q, stderr %q; want an error with %q", tc.to, tc.in, code, out, errOut, tc.want)
		}
	}
	if _, errOut, code := run(t, "", "convert", "-f", website); code == 0 || !strings.Contains(errOut, "--to VERSION is required") {
		t.Errorf("missing --to: exit %d, %q", code, errOut)
	}
}

func TestVersionAndHelp(t *testing.T) {
	out, _, code := run(t, "", "version")
	if code != 0 || !strings.Contains(out, "CEL compatibility version: Kubernetes 1.37") {
		t.Fatalf("version: %d %q", code, out)
	}
	out, _, _ = run(t, "", "--help")
	for _, c := range []string{"check", "render", "convert", "migrate", "serve", "run", "conformance", "manifests", "dev", "version"} {
		if !strings.Contains(out, "\n  "+c+" ") {
			t.Errorf("--help does not list %s", c)
		}
	}
}

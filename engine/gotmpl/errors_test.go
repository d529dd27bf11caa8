package gotmpl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// Load errors point inside the string: testCtx puts the template's first
// character at k.yaml:10:20. Columns were counted by hand.
func TestLoadErrors(t *testing.T) {
	cases := []struct {
		src  string
		want string // "" : compiles
	}{
		{`{{ toUper .metadata.name }}`, `k.yaml:10:23: [things] spec.x: unknown function "toUper"; did you mean "toUpper"?`},
		{`{{ frobnicate .metadata.name }}`, `k.yaml:10:23: [things] spec.x: unknown function "frobnicate": the legacy adapter knows only the functions listed in its README section; write this value in CEL (${…}) to do more`},
		{`{{ .metadata.name }}-{{ .spec.imagee }}`, `k.yaml:10:50: [things] spec.x: unknown field .spec.imagee: spec has no field "imagee" in version v1; did you mean "image"?`},
		{`{{ .spec.image`, `k.yaml:10:20: [things] spec.x: template syntax error: unclosed action; close it with }}`},
		{`{{ .spec.image }`, `k.yaml:10:35: [things] spec.x: template syntax error: unexpected "}" in operand`},
		{`{{ if .spec.enabled }}on`, `k.yaml:10:20: [things] spec.x: template syntax error: {{ if }} has no matching {{ end }}`},
		{`x {{ end }}`, `k.yaml:10:22: [things] spec.x: template syntax error: unexpected {{end}}`},
		{`{{ .spec.image | }}`, ``},
		{`{{ printf "%s" "a }}`, `k.yaml:10:35: [things] spec.x: template syntax error: unterminated quoted string`},
		{`line1
{{ .spec.image ) }}`, `k.yaml:11:16: [things] spec.x: template syntax error: unexpected right paren`},
		{`{{ .spec.image # }}`, `k.yaml:10:35: [things] spec.x: template syntax error: unexpected "#" in operand`},
		{`{{ randomHex 16 }}`, `k.yaml:10:23: [things] spec.x: randomHex makes a new value at every evaluation, so the object would change on every reconcile (drift); use it only in the data of a secret with once: true`},
		{`{{ toUpper "a" "b" }}`, `k.yaml:10:23: [things] spec.x: toUpper takes 1 argument, got 2`},
		{`{{ "a" | toUpper "b" }}`, `k.yaml:10:29: [things] spec.x: toUpper takes 1 argument, got 2 (counting the piped value, which is passed last)`},
		{`{{ toUpper 5 }}`, `k.yaml:10:31: [things] spec.x: toUpper takes a string here, got the number 5`},
		{`{{ toUpper .spec.port }}`, `k.yaml:10:31: [things] spec.x: toUpper takes a string, but spec.port is an integer; convert it with (toString .spec.port)`},
		{`{{ repeat "x" .spec.replicas }}`, `k.yaml:10:34: [things] spec.x: repeat takes a literal number here; .spec.replicas is a value of the object (int64), which text/template cannot pass to it`},
		{`{{ default .spec.tier .spec.image }}`, "k.yaml:10:23: [things] spec.x: default .spec.tier .spec.image: with two computed values the argument order is ambiguous (the original engine changed it between releases); write `.spec.tier | default .spec.image` (.spec.tier, else .spec.image) or `coalesce .spec.tier .spec.image`"},
		{`{{ default "a" "b" }}`, "k.yaml:10:23: [things] spec.x: default \"a\" \"b\": with two literals the argument order is ambiguous (the original engine changed it between releases); write `\"a\" | default \"b\"` (\"a\", else \"b\") or `coalesce \"a\" \"b\"`"},
		{`{{ .spec.environment | contains "prod" }}`, `k.yaml:10:43: [things] spec.x: contains takes the value it works on first; in the pipe form the piped value is passed last, which changes the meaning; write the call form, e.g. {{ contains .spec.x … }}`},
		{`{{ .spec.enabled | ternary "a" "b" }}`, `k.yaml:10:39: [things] spec.x: ternary takes the condition first (ternary COND A B); in the pipe form the piped value would become the false value; write {{ ternary COND A B }}`},
		{`x{{ cronToMap .spec.schedule }}`, `k.yaml:10:24: [things] spec.x: cronToMap makes a map, so it must be the whole value: "{{ cronToMap .spec.schedule }}"`},
		{`{{ .spec.tags }}`, `k.yaml:10:23: [things] spec.x: spec.tags is a list; printing it gives Go syntax such as map[a:1] or [a b]; render it with toJson ({{ toJson .spec.tags }}) or print one of its fields`},
		{`{{ .metadata.labels }}`, `k.yaml:10:23: [things] spec.x: metadata.labels is an object; printing it gives Go syntax such as map[a:1] or [a b]; render it with toJson ({{ toJson .metadata.labels }}) or print one of its fields`},
		{`{{ . }}`, `k.yaml:10:23: [things] spec.x: the whole object is an object; printing it gives Go syntax such as map[a:1] or [a b]; render it with toJson ({{ toJson . }}) or print one of its fields`},
		{`{{ .spec.image.tag }}`, `k.yaml:10:35: [things] spec.x: .spec.image.tag: spec.image is a string in version v1, which has no fields`},
		{`{{ .spec.items.name }}`, `k.yaml:10:35: [things] spec.x: .spec.items.name: spec.items is a list in version v1; reach an item with index or range over it`},
		{`{{ range .spec.items }}{{ .nme }}{{ end }}`, `k.yaml:10:47: [things] spec.x: unknown field .nme: spec.items[*] has no field "nme" in version v1; did you mean "name"?`},
		{`{{ with .spec.nested }}{{ .innr.value }}{{ end }}`, `k.yaml:10:47: [things] spec.x: unknown field .innr: spec.nested has no field "innr" in version v1; did you mean "inner"?`},
		{`{{ $n := .spec.nested }}{{ $n.inner.valu }}`, `k.yaml:10:56: [things] spec.x: unknown field $n.inner.valu: spec.nested.inner has no field "valu" in version v1; did you mean "value"?`},
		// .children holds the CR's children by kind (upstream
		// pkg/children/children.go: "deployments"/"deployment", …); below a
		// kind key anything goes, as it did in the original engine.
		{`{{ .children.deployment.status.readyReplicas }}`, ``},
		{`{{ .children.deploymnet.status }}`, `k.yaml:10:33: [things] spec.x: .children has no key "deploymnet"; did you mean "deployment"?`},
		{`{{ .item.name }}`, `k.yaml:10:24: [things] spec.x: .item is not available in this runtime: templates see the custom resource itself (.metadata, .spec, .status)`},
		{`{{ .spc.image }}`, `k.yaml:10:24: [things] spec.x: unknown field .spc: the object has no field "spc" in version v1; did you mean "spec"?`},
		{`{{ call .spec.image }}`, `k.yaml:10:23: [things] spec.x: call is not supported: templates call only the listed functions`},
		{`{{ define "x" }}a{{ end }}`, `k.yaml:10:23: [things] spec.x: {{ define "x" }} and {{ block }} are not supported: a value is a single template`},
		{`{{ template "x" }}`, `k.yaml:10:23: [things] spec.x: {{ template "x" }} is not supported: a value is a single template`},
		{`{{ .spec.image "x" }}`, `k.yaml:10:23: [things] spec.x: .spec.image is not a function; it takes no arguments`},
		{`{{ toUpper }}`, `k.yaml:10:23: [things] spec.x: toUpper takes 1 argument, got 0`},
		{`{{ toUpper uuidv4 }}`, `k.yaml:10:31: [things] spec.x: uuidv4 makes a new value at every evaluation, so the object would change on every reconcile (drift); use it only in the data of a secret with once: true`},
		{`{{ (get . "spec").imagee }}`, ``},
		{`{{ (.spec.nested).innr }}`, `k.yaml:10:38: [things] spec.x: unknown field (.spec.nested).innr: spec.nested has no field "innr" in version v1; did you mean "inner"?`},
		{`{{ nil }}`, `k.yaml:10:23: [things] spec.x: nil is not a value a template can print`},
		{`{{ $x := 1 }}{{ $y }}`, `k.yaml:10:36: [things] spec.x: template syntax error: undefined variable "$y"`},
		{`{{ index .metadata.labels "app.kubernetes.io/name" }}`, ``},
		{`{{ .spec.config.anything.deep }}{{ .spec.labels.k }}{{ .metadata.annotations.x }}{{ .metadata.uid }}{{ .status.phase }}{{ .apiVersion }}`, ``},
	}
	for _, tc := range cases {
		if got := compileErrs(t, tc.src, testCtx(t)); got != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.src, got, tc.want)
		}
	}
}

func TestLoadErrorsMore(t *testing.T) {
	// Several problems are reported at once.
	got := compileErrs(t, `{{ toUper .spec.imagee }} {{ randomHex 4 }}`, testCtx(t))
	want := strings.Join([]string{
		`k.yaml:10:23: [things] spec.x: unknown function "toUper"; did you mean "toUpper"?`,
		`k.yaml:10:36: [things] spec.x: unknown field .spec.imagee: spec has no field "imagee" in version v1; did you mean "image"?`,
		`k.yaml:10:49: [things] spec.x: randomHex makes a new value at every evaluation, so the object would change on every reconcile (drift); use it only in the data of a secret with once: true`,
	}, "\n")
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Random functions are fine where allowed, and only in values.
	ctx := testCtx(t)
	ctx.AllowRandom = true
	if got := compileErrs(t, `{{ randomHex 16 }}-{{ uuidv4 }}`, ctx); got != "" {
		t.Errorf("random in a once secret: %s", got)
	}
	if _, diags := New(nil).CompileCondition(`{{ eq (randomHex 1) "00" }}`, ctx); !diags.HasErrors() {
		t.Errorf("a condition may not be random")
	}
	// Without a schema nothing is known about fields.
	ctx = testCtx(t)
	ctx.Self = nil
	if got := compileErrs(t, `{{ .spec.anything.goes }}`, ctx); got != "" {
		t.Errorf("no schema: %s", got)
	}
	// A template on several lines (a block scalar) is placed by line.
	if got := compileErrs(t, "{{ .metadata.name }}\n  {{ .spec.imagee }}", testCtx(t)); !strings.HasPrefix(got, "k.yaml:11:12: ") {
		t.Errorf("multi-line: %s", got)
	}
}

// TestLoadErrorsInKatalog compiles a broken katalog through the real loader
// and the plan compiler: positions are file:line:col of the katalog
// (columns counted by hand).
func TestLoadErrorsInKatalog(t *testing.T) {
	dir := t.TempDir()
	crd, err := os.ReadFile("testdata/legacy-website/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), crd, 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "katalog.yaml")
	src := `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata:
  name: broken
spec:
  crds:
    webapp:
      crdFile: ./crd.yaml
      apiTypes:
        group: demo.orkestra.io
        version: v1alpha1
        kind: WebApp
        plural: webapps
      operatorBox:
        onCreate:
          deployments:
            - name: "{{ .metadata.name }}"
              image: "{{ .spec.imagee }}"
              replicas: "{{ toInteger .spec.replicas }}"
          secrets:
            - name: "{{ .metadata.name }}-key"
              data:
                key: "{{ randomHex 16 }}"
          configMaps:
            - name: cm
              when:
                - field: spec.monitorin
                  equals: "true"
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	k, diags := katalog.Load(path)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	_, diags = engine.Compile(k, engine.Backends{CEL: kubeCEL{}, Legacy: New(kubeCEL{})}, engine.CompileOptions{})
	want := []string{
		path + `:18:32: [webapp] operatorBox.onCreate.deployments[0].image: unknown field .spec.imagee: spec has no field "imagee" in version v1alpha1; did you mean "image"?`,
		path + `:19:29: [webapp] operatorBox.onCreate.deployments[0].replicas: unknown function "toInteger"; did you mean "toInt"?`,
		path + `:23:26: [webapp] operatorBox.onCreate.secrets[0].data.key: randomHex makes a new value at every evaluation, so the object would change on every reconcile (drift); use it only in the data of a secret with once: true`,
		path + `:27:31: [webapp] operatorBox.onCreate.configMaps[0].when.field: unknown field spec.monitorin: spec has no field "monitorin" in version v1alpha1; did you mean "monitoring"?`,
	}
	for _, w := range want {
		if !strings.Contains(diags.Error(), w) {
			t.Errorf("missing diagnostic\n%s\nin\n%s", w, diags.Error())
		}
	}
}

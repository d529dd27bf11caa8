package katalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeKatalog writes body as katalog.yaml next to a copy of the website CRD
// and returns its path.
func writeKatalog(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	crd, err := os.ReadFile("testdata/website-crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), crd, 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "katalog.yaml")
	if err := os.WriteFile(p, []byte(strings.TrimLeft(body, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const header = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata:
  name: t
spec:
  crds:
`

// entry is a minimal valid entry at v1 (line 7 of the katalog is its name).
const entry = `
    site:
      crdFile: ./crd.yaml
      apiTypes:
        group: demo.orkestra.io
        version: v1
        kind: Website
`

func TestLoadErrors(t *testing.T) {
	cases := []struct {
		name string
		body string
		// want is "line:col: message fragment" of the expected first error.
		want string
	}{
		{"syntax error", header + entry + "      workers: [1\n", "14:1: YAML syntax error"},
		{"unknown entry key with suggestion", header + entry + "      operatorbox:\n        default: true\n", `14:7: [site] operatorbox: unknown key "operatorbox"; did you mean "operatorBox"?`},
		{"typo in hook name", header + entry + "      operatorBox:\n        onReconcle:\n          configMaps: []\n", `15:9: [site] operatorBox.onReconcle: unknown key "onReconcle"; did you mean "onReconcile"?`},
		{"unknown resource kind", header + entry + "      operatorBox:\n        onCreate:\n          deployment:\n            - image: x\n", `16:11: [site] operatorBox.onCreate.deployment: unknown key "deployment"; did you mean "deployments"?`},
		{"unknown resource field", header + entry + "      operatorBox:\n        onCreate:\n          deployments:\n            - image: x\n              replica: 2\n", `18:15: [site] operatorBox.onCreate.deployments[0].replica: unknown field "replica" for deployments; did you mean "replicas"?`},
		{"missing required resource field", header + entry + "      operatorBox:\n        onCreate:\n          deployments:\n            - name: x\n", `17:15: [site] operatorBox.onCreate.deployments[0]: deployments needs "image"`},
		{"unknown version", strings.Replace(header+entry, "version: v1\n", "version: v2\n", 1), `12:18: [site] apiTypes.version: the CRD websites.demo.orkestra.io has no served version "v2"; it serves v1alpha1, v1`},
		{"no crdFile and no apiTypes", header + "    site:\n      workers: 1\n", `7:5: [site] apiTypes: the entry names no CRD: add crdFile: ./crd.yaml (apiTypes are then read from it), or apiTypes with group, version and kind`},
		{"crdFile not found", strings.Replace(header+entry, "./crd.yaml", "./nope.yaml", 1), `9:16: [site] crdFile: CRD manifest`},
		{"duplicate entries in map form", header + entry + entry, `15:5: [site] duplicate CRD entry "site" (first declared at`},
		{"duplicate entry in list form", `
apiVersion: orkestra.konductor.io/v1Alpha
kind: Katalog
spec:
  crds:
    - name: a
      crdFile: ./crd.yaml
      apiTypes: {group: demo.orkestra.io, version: v1, kind: Website}
    - name: a
      crdFile: ./crd.yaml
      apiTypes: {group: demo.orkestra.io, version: v1, kind: Website}
`, `8:13: [a] duplicate CRD entry "a"`},
		{"path to unserved version", header + entry + `      conversion:
        storageVersion: v1
        paths:
          - from: v1alpha1
            to: v3
            spec: {}
`, `18:17: [site] conversion.paths[0].to: version "v3" is not served by CRD websites.demo.orkestra.io (served: v1alpha1, v1)`},
		{"duplicate path", header + entry + `      conversion:
        storageVersion: v1
        paths:
          - from: v1alpha1
            to: v1
          - from: v1alpha1
            to: v1
`, `19:13: [site] conversion.paths[1]: a second path from v1alpha1 to v1`},
		{"wrong storage version", header + entry + `      conversion:
        storageVersion: v1alpha1
        paths: []
`, `15:25: [site] conversion.storageVersion: storageVersion "v1alpha1" is not the storage version`},
		{"bad apiVersion", strings.Replace(header+entry, "orkestra.orkspace.io/v1", "orkestra.io/v9", 1), `1:13: apiVersion: unsupported apiVersion "orkestra.io/v9"`},
		{"bad condition operator", header + entry + "      operatorBox:\n        onCreate:\n          configMaps:\n            - data: {a: b}\n              when:\n                - field: spec.tier\n                  equal: pro\n", `20:19: [site] operatorBox.onCreate.configMaps[0].when[0].equal: unknown key "equal"; did you mean "equals"?`},
		{"condition on a field and the clock", header + entry + "      operatorBox:\n        onCreate:\n          configMaps:\n            - data: {a: b}\n              when:\n                - field: spec.tier\n                  time: {after: \"09:00\"}\n", `19:19: [site] operatorBox.onCreate.configMaps[0].when[0]: a condition is one test: time and a field condition are in one entry`},
		{"once on a deployment", header + entry + "      operatorBox:\n        onCreate:\n          deployments:\n            - image: x\n              once: true\n", `18:15: [site] operatorBox.onCreate.deployments[0].once: once: true applies to secrets only`},
		{"bad rotateAfter", header + entry + "      operatorBox:\n        onCreate:\n          secrets:\n            - once: true\n              rotateAfter: soon\n", `18:28: [site] operatorBox.onCreate.secrets[0].rotateAfter: "soon" is not a duration`},
		{"zero workers", header + entry + "      workers: 0\n", `14:16: [site] workers: workers must be at least 1, got 0`},
		{"duplicate key", header + entry + "      workers: 1\n      workers: 2\n", `15:7: [site] workers: duplicate key "workers" (first at line 14)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := writeKatalog(t, tc.body)
			_, diags := Load(p)
			errs := diags.Errors()
			if len(errs) == 0 {
				t.Fatalf("no error; want %q", tc.want)
			}
			got := errs[0].Error()
			want := p + ":" + tc.want
			if !strings.HasPrefix(got, want) && !strings.Contains(got, tc.want) {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
			if !strings.HasPrefix(got, p+":"+strings.SplitN(tc.want, ":", 3)[0]+":"+strings.SplitN(tc.want, ":", 3)[1]+":") {
				t.Fatalf("wrong position: got %s, want line:col %s", got, tc.want)
			}
		})
	}
}

func TestLoadListFormLegacyShapes(t *testing.T) {
	p := writeKatalog(t, `
apiVersion: orkestra.konductor.io/v1Alpha
kind: Katalog
metadata: {name: legacy}
spec:
  crds:
    - name: site
      crdFile: ./crd.yaml
      workers: 2
      apiTypes: {group: demo.orkestra.io, version: v1alpha1, kind: Website, plural: websites}
      reconciler:
        default: true
        onCreate:
          deployments:
            - image: "{{ .spec.image }}"
              labels:
                - key: app
                  value: web
                - key: tier
                  value: "{{ .spec.tier }}"
              when:
                - field: spec.tier
                  in: [pro, enterprise]
                - "self.spec.replicas > 0"
              or:
                - field: spec.port
                  operator: greaterThan
                  value: 80
                  negate: true
`)
	k, diags := Load(p)
	if diags.HasErrors() {
		t.Fatalf("errors: %v", diags)
	}
	e := k.Entry("site")
	if e == nil || e.Workers != 2 || e.Box == nil || !e.Box.Default {
		t.Fatalf("entry not loaded as declared: %+v", e)
	}
	r := e.Box.Hooks[OnCreate].Resources[0]
	labels := r.Fields.Get("labels")
	if labels.Kind != MapValue || labels.Get("app").Str != "web" || labels.Get("tier").Str != "{{ .spec.tier }}" {
		t.Fatalf("key/value labels not normalised to a map: %+v", labels.Plain())
	}
	if len(r.When.Conditions) != 1 || r.When.Conditions[0].Operator != "in" || r.When.Conditions[0].Value != "pro,enterprise" {
		t.Fatalf("structured when: %+v", r.When.Conditions)
	}
	if len(r.When.Exprs) != 1 || r.When.Exprs[0].Str != "self.spec.replicas > 0" {
		t.Fatalf("CEL when: %+v", r.When.Exprs)
	}
	c := r.Or.Conditions[0]
	if c.Operator != "gt" || c.Value != "80" || !c.Negate {
		t.Fatalf("long-form condition: %+v", c)
	}
	if got := r.Fields.Get("image").Pos; got.Line != 14 || got.Col != 22 {
		t.Fatalf("image position = %v, want 14:22", got)
	}
}

func TestLoadMultiFileAndDirectory(t *testing.T) {
	p := writeKatalog(t, header+entry)
	dir := filepath.Dir(p)
	second := strings.Replace(header+entry, "site:", "other:", 1)
	second = strings.Replace(second, "version: v1\n", "version: v1alpha1\n", 1)
	if err := os.WriteFile(filepath.Join(dir, "more.yaml"), []byte(strings.TrimLeft(second, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	k, diags := Load(dir)
	if diags.HasErrors() {
		t.Fatalf("errors: %v", diags)
	}
	if len(k.CRDs) != 2 || k.CRDs[0].Name != "site" || k.CRDs[1].Name != "other" {
		t.Fatalf("entries = %v", names(k))
	}
	if k.CRDs[0].CRD != k.CRDs[1].CRD {
		t.Fatal("entries naming the same crdFile must share one loaded CRD")
	}
	if got := k.CRDs[0].CRD.StorageVersion; got != "v1" {
		t.Fatalf("storage version = %q", got)
	}
}

func names(k *Katalog) []string {
	var out []string
	for _, e := range k.CRDs {
		out = append(out, e.Name)
	}
	return out
}

func TestLoadExamples(t *testing.T) {
	for _, p := range []string{"../examples/website/katalog.yaml", "../examples/legacy-website/katalog.yaml"} {
		k, diags := Load(p)
		if diags.HasErrors() {
			t.Fatalf("%s: %v", p, diags)
		}
		if len(k.Warnings) != 0 {
			t.Errorf("%s: unexpected warnings %v", p, k.Warnings)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]string{"90s": "1m30s", "7d": "168h0m0s", "2w": "336h0m0s", "1mo": "720h0m0s", "1y": "8760h0m0s"} {
		d, err := ParseDuration(in)
		if err != nil || d.String() != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %s", in, d, err, want)
		}
	}
	if _, err := ParseDuration("-5m"); err == nil {
		t.Error("negative durations must fail")
	}
	// never is a lifetime (rotateAfter), not a duration.
	if d, err := ParseLifetime("never"); err != nil || d != 0 {
		t.Errorf("ParseLifetime(never) = %v, %v; want 0", d, err)
	}
	if _, err := ParseDuration("never"); err == nil || !strings.Contains(err.Error(), "never is not a duration here") {
		t.Errorf("ParseDuration(never): %v", err)
	}
}

// Where a duration is required, never is an error naming the key; where
// it is a lifetime (rotateAfter) it keeps its meaning.
func TestNeverWhereADurationIsRequired(t *testing.T) {
	p := writeKatalog(t, header+entry+"      resync: never\n")
	_, diags := Load(p)
	if errs := diags.Errors(); len(errs) == 0 || !strings.Contains(errs[0].Error(), "14:15: [site] resync: never is not a duration here: this key needs one") {
		t.Errorf("resync: never: %v", errs)
	}
	k, diags := Load(writeKatalog(t, header+entry+"      operatorBox:\n        onCreate:\n          secrets:\n            - name: s\n              once: true\n              rotateAfter: never\n              data: {k: v}\n"))
	if diags.HasErrors() || k.CRDs[0].Box.Hooks[OnCreate].Resources[0].RotateAfter != 0 {
		t.Errorf("rotateAfter: never: %v", diags)
	}
}

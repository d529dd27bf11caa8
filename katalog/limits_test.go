package katalog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// aliasBomb is a "billion laughs" katalog: each level's list holds the
// previous one nine times, 9^8 values in under 1 KB.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString(header + entry + "      operatorBox:\n        onCreate:\n          configMaps:\n            - name: x\n              data:\n")
	b.WriteString(`                a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	prev := "a"
	for _, c := range "bcdefgh" {
		fmt.Fprintf(&b, "                %c: &%c [%s]\n", c, c, strings.TrimSuffix(strings.Repeat("*"+prev+",", 9), ","))
		prev = string(c)
	}
	return b.String()
}

// Issue 15 item 2: a 1 KB katalog of nested aliases made check take 3 GB in
// 13 s. The expansion is counted and stops at MaxAliasNodes with an error at
// the alias that crossed it.
func TestAliasBombIsRefused(t *testing.T) {
	body := aliasBomb()
	if len(body) > 1024 {
		t.Fatalf("the bomb is %d bytes, want under 1 KB", len(body))
	}
	p := writeKatalog(t, body)
	_, diags := Load(p)
	want := p + ":24:24: [site] operatorBox.onCreate.configMaps[0].data.f[0]: YAML alias *e expands to more than 100000 values (the limit on alias expansion in one katalog load); write the values out or use fewer nested aliases"
	var found bool
	for _, e := range diags.Errors() {
		found = found || e.Error() == want
	}
	if !found {
		t.Fatalf("errors:\n%v\nwant %s", diags.Errors(), want)
	}
}

// The bomb's work is bounded: the decoder visits MaxAliasNodes values and,
// past the limit, only the aliases it still meets (each returns at once),
// not the 9^8 values the aliases stand for. BenchmarkAliasBomb times it.
func TestAliasBombWorkIsBounded(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(aliasBomb()), &doc); err != nil {
		t.Fatal(err)
	}
	var diags Diagnostics
	l := &loader{}
	d := &decoder{file: "bomb.yaml", diags: &diags, loader: l}
	d.value(&doc, "")
	if len(diags) != 1 || !strings.Contains(diags[0].Message, "YAML alias *e expands to more than 100000 values") {
		t.Fatalf("diagnostics:\n%v\nwant one, at the alias that crossed the limit", diags)
	}
	// At most the limit, plus one visit per alias left in the lists being
	// expanded when it was crossed: 9 per level of the 8 levels.
	if bound := MaxAliasNodes + 9*8; l.aliasNodes > bound {
		t.Errorf("the decoder visited %d aliased values, want at most %d", l.aliasNodes, bound)
	}
	t.Logf("visited %d aliased values (limit %d)", l.aliasNodes, MaxAliasNodes)
}

// BenchmarkAliasBomb loads the bomb beside a baseline, the same katalog
// without the aliased data, and reports x-baseline, the bomb's time over
// the baseline's: the cost of refusing the bomb.
func BenchmarkAliasBomb(b *testing.B) {
	crd, err := os.ReadFile("testdata/website-crd.yaml")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), crd, 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.TrimLeft(body, "\n")), 0o644); err != nil {
			b.Fatal(err)
		}
		return p
	}
	base := write("base.yaml", header+entry)
	bomb := write("bomb.yaml", aliasBomb())
	var baseNs float64
	for _, c := range []struct{ name, path string }{{"baseline", base}, {"bomb", bomb}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				Load(c.path)
			}
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if c.name == "baseline" {
				baseNs = ns
			} else if baseNs > 0 {
				b.ReportMetric(ns/baseNs, "x-baseline")
			}
		})
	}
}

// Aliases within the limit keep working.
func TestAliasesWithinLimit(t *testing.T) {
	p := writeKatalog(t, header+entry+`      operatorBox:
        onCreate:
          configMaps:
            - name: a
              data: &d {k: v}
            - name: b
              data: *d
`)
	k, diags := Load(p)
	if diags.HasErrors() {
		t.Fatal(diags.Errors())
	}
	cms := k.CRDs[0].Box.Hooks["onCreate"].Resources
	if len(cms) != 2 {
		t.Fatalf("%d resources, want 2", len(cms))
	}
}

// firstError loads the katalog and returns its first error, or fails.
func firstError(t *testing.T, opts Options, paths ...string) string {
	t.Helper()
	_, diags := LoadWith(opts, paths...)
	errs := diags.Errors()
	if len(errs) == 0 {
		t.Fatalf("loading %v: no error", paths)
	}
	return errs[0].Error()
}

func expectError(t *testing.T, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// Issue 15 item 4: crdFile: /dev/zero grew without bound and a FIFO hung
// forever. Every file the loader reads must be a regular file under its cap;
// the check comes before the read, so nothing blocks.
func TestFilesMustBeRegularAndBounded(t *testing.T) {
	p := writeKatalog(t, header+entry)
	dir := filepath.Dir(p)
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxFileBytes+1); err != nil {
		t.Fatal(err)
	}
	withCRD := func(crdFile string) string {
		return writeKatalogAt(t, p, strings.Replace(header+entry, "./crd.yaml", crdFile, 1))
	}
	allow := Options{AllowOutsidePaths: true}
	done := make(chan struct{})
	go func() {
		defer close(done)
		expectError(t, firstError(t, allow, withCRD("/dev/zero")),
			p+":9:16: [site] crdFile: CRD manifest /dev/zero is a character device; a CRD manifest must be a regular file")
		expectError(t, firstError(t, Options{}, withCRD("./fifo.yaml")),
			p+":9:16: [site] crdFile: CRD manifest "+fifo+" is a named pipe (FIFO); a CRD manifest must be a regular file")
		expectError(t, firstError(t, Options{}, withCRD("./big.yaml")),
			fmt.Sprintf("%s:9:16: [site] crdFile: CRD manifest %s holds %d bytes, over the limit of %d bytes for a CRD manifest", p, big, MaxFileBytes+1, MaxFileBytes))
		expectError(t, firstError(t, Options{}, fifo),
			fifo+": katalog "+fifo+" is a named pipe (FIFO); a katalog must be a regular file")
		expectError(t, firstError(t, Options{CRDs: []string{"/dev/zero"}}, withCRD("./crd.yaml")),
			"/dev/zero: --crd: CRD manifest /dev/zero is a character device; a CRD manifest must be a regular file")
		expectError(t, firstError(t, Options{}, writeKatalogAt(t, p, header+entry+"      crFiles: [./fifo.yaml]\n")),
			p+":14:17: [site] crFiles[0]: sample object file "+fifo+" is a named pipe (FIFO); a sample object file must be a regular file")
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("loading blocked: a FIFO was opened")
	}
}

// The katalog's documents together, imports included, are bounded.
func TestKatalogSizeBounded(t *testing.T) {
	p := writeKatalog(t, header+entry)
	dir := filepath.Dir(p)
	big := header + entry + "      description: \"" + strings.Repeat("x", MaxKatalogBytes/2) + "\"\n"
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.yaml"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	k := writeKatalogAt(t, p, "apiVersion: orkestra.orkspace.io/v1\nkind: Komposer\nmetadata: {name: k}\nimports:\n  files: [./a.yaml, ./b.yaml]\n")
	expectError(t, firstError(t, Options{}, k),
		fmt.Sprintf("%s:5:21: the katalog's documents hold more than %d bytes together with %s (imports included); split the operator into several katalogs", k, MaxKatalogBytes, filepath.Join(dir, "b.yaml")))
}

// Issue 15 item 5: crdFile and crFiles could name any file (crFiles:
// [/etc/passwd] passed check). crdFile, crFiles and imports must resolve,
// symbolic links followed, inside the katalog's directory unless
// AllowOutsidePaths; check reads every crFile.
func TestPathsConfinedToTheKatalog(t *testing.T) {
	p := writeKatalog(t, header+entry)
	dir, _ := filepath.EvalSymlinks(filepath.Dir(p))
	outsideDir := t.TempDir()
	secret := filepath.Join(outsideDir, "secret.yaml")
	if err := os.WriteFile(secret, []byte("root:x:0:0:root:/root:/bin/bash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	realSecret, _ := filepath.EvalSymlinks(secret)
	outside := "is outside the katalog's directory " + dir + " (it is in no git repository); move it under that directory, or pass --allow-outside-paths to read files anywhere"

	crFiles := func() string { return writeKatalogAt(t, p, header+entry+"      crFiles: ["+secret+"]\n") }
	expectError(t, firstError(t, Options{}, crFiles()), p+":14:17: [site] crFiles[0]: sample object file "+secret+" "+outside)
	viaLink := writeKatalogAt(t, p, header+entry+"      crFiles: [./link.yaml]\n")
	expectError(t, firstError(t, Options{}, viaLink), p+":14:17: [site] crFiles[0]: sample object file "+link+" ("+realSecret+") "+outside)
	crdFile := writeKatalogAt(t, p, strings.Replace(header+entry, "./crd.yaml", "../"+filepath.Base(outsideDir)+"/secret.yaml", 1))
	expectError(t, firstError(t, Options{}, crdFile), p+":9:16: [site] crdFile: CRD manifest "+filepath.Join(filepath.Dir(dir), filepath.Base(outsideDir), "secret.yaml")+" "+outside)
	imports := writeKatalogAt(t, p, "apiVersion: orkestra.orkspace.io/v1\nkind: Komposer\nmetadata: {name: k}\nimports:\n  files: ["+secret+"]\n")
	expectError(t, firstError(t, Options{}, imports), p+":5:11: imports.files[0]: imported katalog "+secret+" "+outside)

	// Allowed, the file is read: /etc/passwd-like content is no sample.
	expectError(t, firstError(t, Options{AllowOutsidePaths: true}, crFiles()),
		p+":14:17: [site] crFiles[0]: sample object file "+secret+": document 1 is not a Kubernetes object (it needs apiVersion and kind)")

	// A sample inside the directory that is a Kubernetes object loads.
	sample := filepath.Join(dir, "sample.yaml")
	if err := os.WriteFile(sample, []byte("apiVersion: demo.orkestra.io/v1\nkind: Website\nmetadata: {name: a}\nspec: {image: nginx}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	k, diags := Load(writeKatalogAt(t, p, header+entry+"      crFiles: [./sample.yaml]\n"))
	if diags.HasErrors() {
		t.Fatal(diags.Errors())
	}
	if got := k.CRDs[0].CRFiles; len(got) != 1 || got[0] != filepath.Join(filepath.Dir(p), "sample.yaml") {
		t.Errorf("crFiles %v", got)
	}
}

// writeKatalogAt overwrites the katalog at p with body and returns p.
func writeKatalogAt(t *testing.T, p, body string) string {
	t.Helper()
	if err := os.WriteFile(p, []byte(strings.TrimLeft(body, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Issue 15 item 6: a literal custom child `apiVersion: "*/v1"` loaded, and
// manifests then granted apiGroups: ["*"]. Literal group, version and kind
// must be valid; computed ones are left to the API server.
func TestCustomChildTypeLiterals(t *testing.T) {
	child := func(apiVersion, kind string) string {
		return header + entry + "      operatorBox:\n        onCreate:\n          custom:\n            - apiVersion: \"" + apiVersion + "\"\n              kind: \"" + kind + "\"\n              name: x\n"
	}
	const at = ":17:28: [site] operatorBox.onCreate.custom[0].apiVersion: apiVersion "
	wild := " (a wildcard names no kind: a child is one object of one kind, and RBAC would grant every group)"
	for _, tc := range []struct{ apiVersion, kind, want string }{
		{"*/v1", "Widget", at + `"*/v1" has an invalid group "*": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')` + wild},
		{"example.com/*", "Widget", at + `"example.com/*" has an invalid version "*": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')` + wild},
		{"a/b/c", "Widget", at + `"a/b/c" is not GROUP/VERSION (or VERSION for the core group), e.g. example.com/v1`},
		{"example.com/v1", "*", ":18:22: [site] operatorBox.onCreate.custom[0].kind: kind \"*\" is not a Kubernetes kind: write one kind, letters and digits starting with a letter, e.g. Widget" + wild},
	} {
		p := writeKatalog(t, child(tc.apiVersion, tc.kind))
		expectError(t, firstError(t, Options{}, p), p+tc.want)
	}
	for _, ok := range [][2]string{{"example.com/v1", "Widget"}, {"v1", "ConfigMap"}, {"${self.spec.image}/v1", "${self.spec.image}"}} {
		if _, diags := Load(writeKatalog(t, child(ok[0], ok[1]))); diags.HasErrors() {
			t.Errorf("%s %s: %v", ok[0], ok[1], diags.Errors())
		}
	}
}

package katalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A repository laid out as upstream's examples are (use-cases/profiles):
// one CRD shared by sibling folders, motifs and status fragments in a
// folder of their own.
//
//	repo/.git
//	repo/crd.yaml
//	repo/samples/cr.yaml
//	repo/shared/motif.yaml
//	repo/shared/status.yaml
//	repo/app/katalog.yaml   (crdFile: ../crd.yaml, …)
func writeRepo(t *testing.T, gitFile bool) (repo, katalog string) {
	t.Helper()
	repo, _ = filepath.EvalSymlinks(t.TempDir())
	mustWrite := func(rel, body string) string {
		p := filepath.Join(repo, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.TrimLeft(body, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if gitFile {
		// A git worktree has a .git file naming its git directory.
		mustWrite(".git", "gitdir: /elsewhere/.git/worktrees/app\n")
	} else if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	crd, err := os.ReadFile("testdata/website-crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	mustWrite("crd.yaml", string(crd))
	mustWrite("samples/cr.yaml", "apiVersion: demo.orkestra.io/v1\nkind: Website\nmetadata: {name: a}\nspec: {image: nginx}\n")
	mustWrite("shared/motif.yaml", `
apiVersion: orkestra.orkspace.io/v1
kind: Motif
metadata: {name: m}
resources:
  configMaps:
    - name: from-motif
      data: {a: b}
`)
	mustWrite("shared/status.yaml", "fields:\n  - path: phase\n    value: Ready\n")
	katalog = mustWrite("app/katalog.yaml", `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: t}
spec:
  crds:
    site:
      crdFile: ../crd.yaml
      crFiles: [../samples/cr.yaml]
      apiTypes: {group: demo.orkestra.io, version: v1, kind: Website}
      operatorBox:
        imports:
          - motif: ../shared/motif.yaml
        status:
          include: ../shared/status.yaml
`)
	return repo, katalog
}

// Issue 25: crdFile, crFiles, motifs and include: fragments may name any
// file of the katalog's repository (upstream's examples name ../crd.yaml),
// whether .git is a directory or a worktree's file; the files read besides
// the documents are recorded for `orkestra manifests`.
func TestFilesAnywhereInTheRepository(t *testing.T) {
	for _, gitFile := range []bool{false, true} {
		repo, p := writeRepo(t, gitFile)
		k, diags := Load(p)
		if diags.HasErrors() {
			t.Fatalf(".git file %v: %v", gitFile, diags.Errors())
		}
		e := k.CRDs[0]
		if e.CRD.Path != filepath.Join(repo, "crd.yaml") || len(e.CRFiles) != 1 {
			t.Errorf("crdFile %s, crFiles %v", e.CRD.Path, e.CRFiles)
		}
		want := []string{filepath.Join(repo, "shared/motif.yaml"), filepath.Join(repo, "shared/status.yaml")}
		if strings.Join(k.Included, ",") != strings.Join(want, ",") {
			t.Errorf("Included %v, want %v", k.Included, want)
		}
		if r := e.Box.Hooks[OnReconcile].Resources; len(r) != 1 || e.Box.Status == nil || len(e.Box.Status.Fields) != 1 {
			t.Errorf("motif resources %d, status %+v", len(r), e.Box.Status)
		}
	}
}

// Outside a git repository the boundary stays the katalog's own directory,
// and the message says why.
func TestNoRepositoryBoundaryIsTheDirectory(t *testing.T) {
	repo, p := writeRepo(t, false)
	if err := os.RemoveAll(filepath.Join(repo, ".git")); err != nil {
		t.Fatal(err)
	}
	expectError(t, firstError(t, Options{}, p),
		p+":8:17: [site] crFiles[0]: sample object file "+filepath.Join(repo, "samples/cr.yaml")+" is outside the katalog's directory "+filepath.Join(repo, "app")+" (it is in no git repository); move it under that directory, or pass --allow-outside-paths to read files anywhere")
	if _, diags := LoadWith(Options{AllowOutsidePaths: true}, p); diags.HasErrors() {
		t.Errorf("--allow-outside-paths: %v", diags.Errors())
	}
}

// A file outside the repository, named directly or reached through a
// symbolic link inside it, is refused with the repository named; motifs and
// include: fragments are checked like crdFile.
func TestRepositoryBoundaryRefusesEscapes(t *testing.T) {
	repo, p := writeRepo(t, false)
	outsideDir, _ := filepath.EvalSymlinks(t.TempDir())
	secret := filepath.Join(outsideDir, "secret.yaml")
	if err := os.WriteFile(secret, []byte("fields: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(repo, "shared", "link.yaml")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	body, _ := os.ReadFile(p)
	rewrite := func(old, new string) string {
		return writeKatalogAt(t, p, strings.Replace(string(body), old, new, 1))
	}
	outside := " is outside the katalog's repository " + repo + "; move it under that directory, or pass --allow-outside-paths to read files anywhere"

	expectError(t, firstError(t, Options{}, rewrite("../crd.yaml", secret)),
		p+":7:16: [site] crdFile: CRD manifest "+secret+outside)
	expectError(t, firstError(t, Options{}, rewrite("../samples/cr.yaml", "../shared/link.yaml")),
		p+":8:17: [site] crFiles[0]: sample object file "+link+" ("+secret+")"+outside)
	expectError(t, firstError(t, Options{}, rewrite("../shared/motif.yaml", "../shared/link.yaml")),
		p+":12:20: [site] operatorBox.imports[0].motif: motif "+link+" ("+secret+")"+outside)
	expectError(t, firstError(t, Options{}, rewrite("../shared/status.yaml", secret)),
		p+":14:20: [site] operatorBox.status.include: status fragment "+secret+outside)
}

// A katalog given through a symbolic link gets the boundary of where it
// really is: the link's own location does not widen or narrow it.
func TestBoundaryFollowsTheKatalogsRealPlace(t *testing.T) {
	repo, _ := writeRepo(t, false)
	elsewhere, _ := filepath.EvalSymlinks(t.TempDir())
	linkDir := filepath.Join(elsewhere, "app")
	if err := os.Symlink(filepath.Join(repo, "app"), linkDir); err != nil {
		t.Fatal(err)
	}
	bounds := Boundaries([]string{filepath.Join(linkDir, "katalog.yaml")})
	if len(bounds) != 1 || bounds[0] != (Boundary{Dir: repo, Repository: true}) {
		t.Fatalf("boundaries %+v, want the repository %s", bounds, repo)
	}
}

package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/engine/gotmpl/migrate"
)

const layoutDir = "testdata/layout"

// withoutPositions drops file:line:col, which moving keys shifts.
func withoutPositions(s string) string {
	return regexp.MustCompile(`[^\s"()]*:\d+:\d+`).ReplaceAllString(s, "")
}

// flat → newest → render identical: the golden file is what migrate
// writes, it renders the samples as the original does, and it goes back.
func TestMigrateLayoutGolden(t *testing.T) {
	flat := filepath.Join(layoutDir, "katalog.yaml")
	golden := filepath.Join(layoutDir, "newest.golden.yaml")
	out, errOut, code := run(t, "", "migrate", "-f", flat, "--layout", "newest", "--count", "20")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Fatalf("migrate --layout newest:\n%s\nwant %s:\n%s", out, golden, want)
	}
	for _, line := range []string{
		"katalog.yaml:18: entry bucket-v1: allowedNamespaces → operatorBox.runtime.allowedNamespaces",
		"katalog.yaml:21: entry bucket-v1: validation → admission.validation",
		"katalog.yaml:30: entry bucket-v1: conversion → admission.conversion",
		"katalog.yaml:45: entry bucket-v1: operatorBox.finalizers → operatorBox.runtime.finalizers",
		"katalog.yaml:53: entry bucket-v1: operatorBox.status → operatorBox.emit.status",
		"moved 6 keys into the newest layout; the moved katalog checks and renders alike on 42 objects",
	} {
		if !strings.Contains(errOut, line) {
			t.Errorf("report lacks %q:\n%s", line, errOut)
		}
	}
	samples := filepath.Join(layoutDir, "buckets.yaml")
	for _, args := range [][]string{{"-o", "json", samples}, {"-o", "manifests", samples}, {"--admission"}} {
		a, _, ca := run(t, "", append([]string{"render", "-f", flat}, args...)...)
		b, _, cb := run(t, "", append([]string{"render", "-f", golden}, args...)...)
		if ca != 0 || cb != 0 || withoutPositions(a) != withoutPositions(b) || len(a) < 200 {
			t.Errorf("render %v differs (exit %d, %d):\n%s\n---\n%s", args, ca, cb, a, b)
		}
	}
	// Newest again moves nothing; back to flat checks and renders alike.
	if again, _, code := run(t, "", "migrate", "-f", golden, "--layout", "newest", "--count", "5"); code != 0 || again != string(want) {
		t.Errorf("newest again (exit %d) changed the file", code)
	}
	back, errOut, code := run(t, "", "migrate", "-f", golden, "--layout", "flat", "--count", "5")
	if code != 0 || !strings.Contains(errOut, "moved 6 keys into the flat layout") || !strings.Contains(back, "\n      conversion:\n        storageVersion: v1\n") {
		t.Errorf("flat (exit %d): %s\n%s", code, errOut, back)
	}
}

// Every katalog of this repository moves into the newest layout and back
// with the same meaning, or is refused with the reason.
func TestMigrateLayoutOverTheRepository(t *testing.T) {
	var files []string
	err := filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && d.Name() == ".git" {
			return fs.SkipDir
		}
		if b, _ := os.ReadFile(p); !d.IsDir() && strings.HasSuffix(p, ".yaml") && strings.Contains(string(b), "\nkind: Katalog\n") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil || len(files) < 50 {
		t.Fatalf("%d katalogs: %v", len(files), err)
	}
	moved, refused := 0, 0
	for _, f := range files {
		kf := &katalogFlags{files: []string{f}}
		r, err := relayout(kf, migrate.LayoutNewest, nil, 5, 1)
		var pe *migrate.ProblemsError
		switch {
		case errors.As(err, &pe) && strings.HasPrefix(pe.What, "the katalog does not check"):
			refused++ // a fixture of a broken katalog
			continue
		case err != nil && strings.Contains(err.Error(), "cannot move allowedNamespaces of entry") && strings.Contains(err.Error(), "has no operatorBox"):
			refused++
			continue
		case err != nil:
			t.Errorf("%s: %v", f, err)
			continue
		}
		moved += len(r.moved)
		// and back, from the moved text
		kf.overlay = map[string][]byte{}
		for _, mf := range r.res.Files {
			abs, _ := filepath.Abs(mf.Path)
			kf.overlay[abs] = mf.Migrated
		}
		back, err := relayout(kf, migrate.LayoutFlat, nil, 5, 1)
		if err != nil {
			t.Errorf("%s, back to flat: %v", f, err)
			continue
		}
		if len(back.moved) < len(r.moved) {
			t.Errorf("%s: %d keys moved to newest, %d back", f, len(r.moved), len(back.moved))
		}
	}
	t.Logf("%d katalogs: %d keys moved and back, %d refused", len(files), moved, refused)
	if moved < len(files)/2 || refused > 5 {
		t.Errorf("%d keys moved, %d katalogs refused", moved, refused)
	}
}

// The proof sees a difference in what is rendered, in the admission rules
// and in the namespace rules.
func TestLayoutProofSeesDifferences(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(layoutDir, "katalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	plan := func(text string) *engine.Plan {
		abs, _ := filepath.Abs(filepath.Join(layoutDir, "katalog.yaml"))
		kf := &katalogFlags{files: []string{filepath.Join(layoutDir, "katalog.yaml")}, overlay: map[string][]byte{abs: []byte(text)}}
		p, diags, err := kf.build()
		if err != nil || diags.HasErrors() {
			t.Fatalf("%v %v", err, diags)
		}
		return p
	}
	orig := plan(string(src))
	objs, err := layoutSamples(orig, nil, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameMeaning(orig, plan(string(src)), objs); err != nil {
		t.Fatalf("the same katalog: %v", err)
	}
	for _, tc := range []struct{ old, new, want string }{
		{`value: "${self.spec.scale.tier}"`, `value: "${self.spec.scale.tier + 'x'}"`, "renders differently"},
		{`message: cold buckets run at most 10 replicas`, `message: cold buckets run at most ten replicas`, "the admission rules differ"},
		{`allowedNamespaces: ["team-*", default]`, `allowedNamespaces: ["team-*"]`, "entry bucket-v1: namespace rules differ"},
	} {
		changed := strings.Replace(string(src), tc.old, tc.new, 1)
		if changed == string(src) {
			t.Fatalf("%q not in the fixture", tc.old)
		}
		if err := sameMeaning(orig, plan(changed), objs); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v", tc.want, err)
		}
	}
}

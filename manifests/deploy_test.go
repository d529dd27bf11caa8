package manifests_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/orkspace/orkestra-cel/envassets/envtesting"
	"github.com/orkspace/orkestra-cel/manifests"
)

var update = flag.Bool("update", false, "rewrite deploy/ from `orkestra manifests` (go generate ./manifests/)")

// deployLayout is what deploy/ must hold: the base is
// `orkestra manifests -f examples/website/katalog.yaml -o deploy/base`, the
// cert-manager overlay turns it into the --cert-manager output.
func deployLayout(t *testing.T) (files map[string][]byte, base, certManager *manifests.Install) {
	t.Helper()
	root := envtesting.RepoRoot(t)
	plan := websitePlan(t)
	paths := []string{filepath.Join(root, "examples", "website", "katalog.yaml")}
	var err error
	if base, err = manifests.Generate(plan, manifests.Options{KatalogPaths: paths}); err != nil {
		t.Fatal(err)
	}
	if certManager, err = manifests.Generate(plan, manifests.Options{KatalogPaths: paths, CertManager: true}); err != nil {
		t.Fatal(err)
	}
	files = map[string][]byte{}
	bf, err := base.Files()
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range bf {
		files[filepath.Join("base", name)] = b
	}
	of, err := manifests.Overlay(base, certManager, "../../base")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range of {
		files[filepath.Join("overlays", "cert-manager", filepath.FromSlash(name))] = b
	}
	return files, base, certManager
}

// TestDeployUpToDate: deploy/ is exactly what the generator produces (run
// `go generate ./manifests/` after changing the generator or the
// example katalog).
func TestDeployUpToDate(t *testing.T) {
	files, _, _ := deployLayout(t)
	dir := filepath.Join(envtesting.RepoRoot(t), "deploy")
	if *update {
		for name, b := range files {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var onDisk []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		onDisk = append(onDisk, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range onDisk {
		if _, ok := files[rel]; !ok {
			t.Errorf("deploy/%s is not generated any more: delete it", rel)
		}
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("deploy/%s is out of date: run `go generate ./manifests/`", name)
		}
	}
}

// TestKustomizeBuild builds deploy/ with kustomize: the base gives exactly
// the objects `orkestra manifests` prints, the cert-manager overlay exactly
// those of `orkestra manifests --cert-manager`.
func TestKustomizeBuild(t *testing.T) {
	_, base, certManager := deployLayout(t)
	dir := filepath.Join(envtesting.RepoRoot(t), "deploy")
	for _, c := range []struct {
		path string
		want *manifests.Install
	}{
		{"base", base},
		{filepath.Join("overlays", "cert-manager"), certManager},
	} {
		t.Run(c.path, func(t *testing.T) {
			k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
			res, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(dir, c.path))
			if err != nil {
				t.Fatalf("kustomize build deploy/%s: %v", c.path, err)
			}
			out, err := res.AsYaml()
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, doc := range strings.Split(string(out), "\n---\n") {
				var m map[string]any
				if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
					t.Fatal(err)
				}
				got[objectKey(m)] = canonical(t, m)
			}
			us, err := c.want.Unstructured()
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{}
			for _, u := range us {
				want[objectKey(u.Object)] = canonical(t, u.Object)
			}
			for k, w := range want {
				if g, ok := got[k]; !ok {
					t.Errorf("kustomize build lacks %s", k)
				} else if g != w {
					t.Errorf("%s differs:\nkustomize: %s\nmanifests: %s", k, g, w)
				}
			}
			for k := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("kustomize build has %s, manifests does not", k)
				}
			}
		})
	}
}

func objectKey(m map[string]any) string {
	md, _ := m["metadata"].(map[string]any)
	return strings.Join([]string{str(m["apiVersion"]), str(m["kind"]), str(md["namespace"]), str(md["name"])}, "/")
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// canonical is m as JSON with sorted keys and JSON number types.
func canonical(t *testing.T, m map[string]any) string {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(v)
	return string(b)
}

func TestOverlayRefusesRemovals(t *testing.T) {
	plan := websitePlan(t)
	cm, err := manifests.Generate(plan, manifests.Options{CertManager: true})
	if err != nil {
		t.Fatal(err)
	}
	base, err := manifests.Generate(plan, manifests.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The reverse direction would have to remove the Issuer and Certificate.
	if _, err := manifests.Overlay(cm, base, "../base"); err == nil || !(strings.Contains(err.Error(), "cannot remove") || strings.Contains(err.Error(), "cannot express")) {
		t.Fatalf("Overlay(cert-manager → built-in) = %v, want an error", err)
	}
	keys := func(m map[string][]byte) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	of, err := manifests.Overlay(base, cm, "../../base")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"certificate.yaml", "kustomization.yaml",
		"patches/customresourcedefinition-websites.demo.orkestra.io.yaml", "patches/deployment-orkestra.yaml", "patches/role-orkestra.yaml"}
	if got := keys(of); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("overlay files %v, want %v", got, want)
	}
}

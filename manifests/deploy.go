package manifests

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// Overlay returns a kustomize overlay (file name → content) that turns
// base's layout, found at basePath relative to the overlay, into target: the
// objects target adds as resources, and a strategic-merge patch for each
// object that differs, holding only what differs. It serves deploy/: the
// base in the built-in certificate mode, the overlay for cert-manager.
func Overlay(base, target *Install, basePath string) (map[string][]byte, error) {
	bs, err := base.Unstructured()
	if err != nil {
		return nil, err
	}
	ts, err := target.Unstructured()
	if err != nil {
		return nil, err
	}
	key := func(m map[string]any) string {
		md, _ := m["metadata"].(map[string]any)
		return fmt.Sprintf("%v/%v/%v/%v", m["apiVersion"], m["kind"], md["namespace"], md["name"])
	}
	inBase := map[string]map[string]any{}
	for _, u := range bs {
		inBase[key(u.Object)] = u.Object
	}
	inTarget := map[string]bool{}
	out := map[string][]byte{}
	var resources, patches []string
	added := map[string][]byte{}
	for i, u := range ts {
		obj := u.Object
		k := key(obj)
		inTarget[k] = true
		b, ok := inBase[k]
		if !ok {
			y, err := yaml.Marshal(obj)
			if err != nil {
				return nil, err
			}
			file := target.Objects[i].File
			if _, seen := added[file]; !seen {
				resources = append(resources, file)
				added[file] = []byte(header)
			}
			added[file] = append(append(added[file], "---\n"...), y...)
			continue
		}
		p, changed, err := diffValue(stripIdentity(b), stripIdentity(obj), "")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		if !changed {
			continue
		}
		pm := p.(map[string]any)
		md, _ := pm["metadata"].(map[string]any)
		if md == nil {
			md = map[string]any{}
		}
		omd := obj["metadata"].(map[string]any)
		md["name"] = omd["name"]
		if ns, ok := omd["namespace"]; ok {
			md["namespace"] = ns
		}
		pm["metadata"] = md
		pm["apiVersion"], pm["kind"] = obj["apiVersion"], obj["kind"]
		y, err := yaml.Marshal(pm)
		if err != nil {
			return nil, err
		}
		file := "patches/" + fileName(fmt.Sprintf("%v-%v", obj["kind"], omd["name"])) + ".yaml"
		out[file] = append([]byte(header), y...)
		patches = append(patches, file)
	}
	for k := range inBase {
		if !inTarget[k] {
			return nil, fmt.Errorf("%s is in the base and not in the target: an overlay cannot remove it", k)
		}
	}
	for f, b := range added {
		out[f] = b
	}
	var k strings.Builder
	k.WriteString(header)
	k.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n")
	fmt.Fprintf(&k, "  - %s\n", path.Clean(basePath))
	for _, r := range resources {
		fmt.Fprintf(&k, "  - %s\n", r)
	}
	if len(patches) > 0 {
		k.WriteString("patches:\n")
		for _, p := range patches {
			fmt.Fprintf(&k, "  - path: %s\n", p)
		}
	}
	out["kustomization.yaml"] = []byte(k.String())
	return out, nil
}

var nonFile = regexp.MustCompile(`[^a-z0-9.-]+`)

func fileName(s string) string {
	return strings.Trim(nonFile.ReplaceAllString(strings.ToLower(s), "-"), "-")
}

func stripIdentity(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k == "apiVersion" || k == "kind" {
			continue
		}
		out[k] = v
	}
	return out
}

// identityKeys are the strategic-merge keys of the lists an install holds
// (containers, volumes, env: name; volumeMounts: mountPath; ports:
// containerPort).
var identityKeys = []string{"name", "mountPath", "containerPort"}

// diffValue returns a strategic-merge patch that turns base into want.
func diffValue(base, want any, at string) (any, bool, error) {
	switch w := want.(type) {
	case map[string]any:
		b, ok := base.(map[string]any)
		if !ok {
			return w, true, nil
		}
		p := map[string]any{}
		for k, wv := range w {
			bv, ok := b[k]
			if !ok {
				p[k] = wv
				continue
			}
			d, changed, err := diffValue(bv, wv, at+"."+k)
			if err != nil {
				return nil, false, err
			}
			if changed {
				p[k] = d
			}
		}
		for k := range b {
			if _, ok := w[k]; !ok {
				p[k] = nil
			}
		}
		return p, len(p) > 0, nil
	case []any:
		b, ok := base.([]any)
		if !ok {
			return w, true, nil
		}
		if jsonval.Equal(b, w) {
			return nil, false, nil
		}
		if !keyed(w) || !keyed(b) {
			return w, true, nil
		}
		var p []any
		for _, wi := range w {
			wm := wi.(map[string]any)
			bm := findKeyed(b, wm)
			if bm == nil {
				p = append(p, wm)
				continue
			}
			d, changed, err := diffValue(bm, wm, at+"[]")
			if err != nil {
				return nil, false, err
			}
			if changed {
				dm := d.(map[string]any)
				for _, k := range identityKeys {
					if v, ok := wm[k]; ok {
						dm[k] = v
					}
				}
				p = append(p, dm)
			}
		}
		for _, bi := range b {
			if findKeyed(w, bi.(map[string]any)) == nil {
				return nil, false, fmt.Errorf("%s: an item of the base is not in the target; a patch cannot express that", at)
			}
		}
		return p, len(p) > 0, nil
	default:
		if jsonval.Equal(base, want) {
			return nil, false, nil
		}
		return want, true, nil
	}
}

func keyed(list []any) bool {
	for _, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			return false
		}
		found := false
		for _, k := range identityKeys {
			if _, ok := m[k]; ok {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func findKeyed(list []any, item map[string]any) map[string]any {
	for _, it := range list {
		m := it.(map[string]any)
		same := true
		for _, k := range identityKeys {
			if !jsonval.Equal(m[k], item[k]) {
				same = false
			}
		}
		if same {
			return m
		}
	}
	return nil
}

// Command gen writes openapi.json.gz: the OpenAPI v3 definitions Kubernetes
// publishes (api/openapi-spec/v3 of the k8s.io/kubernetes module, at the
// release matching the pinned k8s.io/api) for every built-in resource kind a
// katalog may declare (katalog.ResourceKinds), with what they reference and
// without descriptions. Run it with `go generate ./engine/kubeschema/`.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/katalog"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// out is the file's content.
type out struct {
	Release     string                    `json:"release"`
	Kinds       map[string]string         `json:"kinds"` // "apps/v1, Kind=Deployment" → definition name
	Definitions map[string]map[string]any `json:"definitions"`
}

func run() error {
	dir, release, err := specDir()
	if err != nil {
		return err
	}
	o := out{Release: release, Kinds: map[string]string{}, Definitions: map[string]map[string]any{}}
	specs := map[string]map[string]any{}
	for _, k := range katalog.ResourceKinds {
		if k.Open {
			continue
		}
		gvk := schema.FromAPIVersionAndKind(k.APIVersion, k.Kind)
		defs, err := definitions(dir, gvk, specs)
		if err != nil {
			return err
		}
		name, err := kindDefinition(defs, gvk)
		if err != nil {
			return err
		}
		o.Kinds[gvk.String()] = name
		if err := collect(defs, name, o.Definitions); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	enc := json.NewEncoder(zw)
	if err := enc.Encode(o); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile("openapi.json.gz", buf.Bytes(), 0o644)
}

// specDir finds api/openapi-spec/v3 of the Kubernetes release whose staging
// modules the project pins (k8s.io/api v0.X.Y is Kubernetes v1.X.Y).
func specDir() (string, string, error) {
	v, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "k8s.io/api").Output()
	if err != nil {
		return "", "", fmt.Errorf("go list -m k8s.io/api: %w", err)
	}
	release := "v1" + strings.TrimPrefix(strings.TrimSpace(string(v)), "v0")
	j, err := exec.Command("go", "mod", "download", "-json", "k8s.io/kubernetes@"+release).Output()
	if err != nil {
		return "", "", fmt.Errorf("go mod download k8s.io/kubernetes@%s: %w", release, err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(j, &m); err != nil {
		return "", "", err
	}
	return filepath.Join(m.Dir, "api", "openapi-spec", "v3"), release, nil
}

// definitions reads the spec file of gvk's group version.
func definitions(dir string, gvk schema.GroupVersionKind, cache map[string]map[string]any) (map[string]any, error) {
	file := "api__" + gvk.Version + "_openapi.json"
	if gvk.Group != "" {
		file = "apis__" + gvk.Group + "__" + gvk.Version + "_openapi.json"
	}
	if d, ok := cache[file]; ok {
		return d, nil
	}
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return nil, err
	}
	var doc struct {
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	cache[file] = doc.Components.Schemas
	return doc.Components.Schemas, nil
}

// kindDefinition finds the definition carrying gvk's
// x-kubernetes-group-version-kind.
func kindDefinition(defs map[string]any, gvk schema.GroupVersionKind) (string, error) {
	names := make([]string, 0, len(defs))
	for n := range defs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		d, _ := defs[n].(map[string]any)
		gvks, _ := d["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			m, _ := g.(map[string]any)
			if m["group"] == gvk.Group && m["version"] == gvk.Version && m["kind"] == gvk.Kind {
				return n, nil
			}
		}
	}
	return "", fmt.Errorf("no definition of %s in the published OpenAPI", gvk)
}

// collect copies definition name and everything it references into into,
// keeping only what types a value.
func collect(defs map[string]any, name string, into map[string]map[string]any) error {
	if _, done := into[name]; done {
		return nil
	}
	d, ok := defs[name].(map[string]any)
	if !ok {
		return fmt.Errorf("definition %s is referenced but missing", name)
	}
	trimmed, refs := trim(d)
	into[name] = trimmed.(map[string]any)
	for _, r := range refs {
		if err := collect(defs, r, into); err != nil {
			return err
		}
	}
	return nil
}

// kept are the schema keywords that type a value.
var kept = map[string]bool{
	"type": true, "format": true, "properties": true, "additionalProperties": true, "items": true,
	"required": true, "enum": true, "nullable": true, "$ref": true, "allOf": true, "oneOf": true,
	"x-kubernetes-int-or-string": true, "x-kubernetes-preserve-unknown-fields": true, "x-kubernetes-embedded-resource": true,
}

// trim drops what does not type a value (descriptions, defaults, patch
// strategies) and returns the definitions referenced.
func trim(v any) (any, []string) {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		var refs []string
		for k, val := range x {
			if k == "properties" {
				props := map[string]any{}
				for p, ps := range val.(map[string]any) {
					t, r := trim(ps)
					props[p] = t
					refs = append(refs, r...)
				}
				out[k] = props
				continue
			}
			if !kept[k] {
				continue
			}
			if k == "$ref" {
				name := strings.TrimPrefix(val.(string), "#/components/schemas/")
				out[k] = name
				refs = append(refs, name)
				continue
			}
			t, r := trim(val)
			out[k] = t
			refs = append(refs, r...)
		}
		return out, refs
	case []any:
		out := make([]any, len(x))
		var refs []string
		for i, item := range x {
			t, r := trim(item)
			out[i] = t
			refs = append(refs, r...)
		}
		return out, refs
	}
	return v, nil
}

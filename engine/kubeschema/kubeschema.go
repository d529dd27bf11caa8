// Package kubeschema types the built-in resource kinds a katalog's children
// can be (Deployment, Service, …) with the OpenAPI v3 definitions Kubernetes
// publishes for its release (k8s.io/kubernetes api/openapi-spec/v3, the
// release of the pinned k8s.io/api), so that expressions reading children
// back (`children.deployments['web'].status.readyReplicas`) are checked at
// load. openapi.json.gz holds the definitions of every built-in kind of
// katalog.ResourceKinds and what they reference; `go generate` rewrites it.
package kubeschema

//go:generate go run ./gen

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

//go:embed openapi.json.gz
var data []byte

type file struct {
	Release     string                    `json:"release"`
	Kinds       map[string]string         `json:"kinds"`
	Definitions map[string]map[string]any `json:"definitions"`
}

var load = sync.OnceValues(func() (*file, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var f file
	if err := json.NewDecoder(zr).Decode(&f); err != nil {
		return nil, err
	}
	return &f, nil
})

var (
	mu    sync.Mutex
	built = map[schema.GroupVersionKind]*structuralschema.Structural{}
)

// Schema returns the structural schema of a built-in kind, nil when the
// published definitions do not hold it. Each is built once.
func Schema(gvk schema.GroupVersionKind) *structuralschema.Structural {
	mu.Lock()
	defer mu.Unlock()
	if s, ok := built[gvk]; ok {
		return s
	}
	f, err := load()
	if err != nil {
		panic(fmt.Sprintf("kubeschema: the embedded definitions are corrupt: %v", err))
	}
	name, ok := f.Kinds[gvk.String()]
	if !ok {
		return nil
	}
	s := f.structural(name, map[string]bool{})
	built[gvk] = s
	return s
}

// Release is the Kubernetes release the definitions come from.
func Release() string {
	f, err := load()
	if err != nil {
		return ""
	}
	return f.Release
}

// structural resolves a definition into a structural schema. A definition
// that refers to itself (none of the built-in kinds do) preserves unknown
// fields below the cycle.
func (f *file) structural(name string, stack map[string]bool) *structuralschema.Structural {
	if stack[name] {
		return &structuralschema.Structural{Extensions: structuralschema.Extensions{XPreserveUnknownFields: true}}
	}
	stack[name] = true
	defer delete(stack, name)
	s := f.convert(f.Definitions[name], stack)
	return &s
}

func (f *file) convert(d map[string]any, stack map[string]bool) structuralschema.Structural {
	if ref, ok := d["$ref"].(string); ok {
		return *f.structural(ref, stack)
	}
	if all, ok := d["allOf"].([]any); ok && len(all) == 1 {
		if m, ok := all[0].(map[string]any); ok {
			return f.convert(m, stack)
		}
	}
	var s structuralschema.Structural
	if _, ok := d["oneOf"]; ok || d["format"] == "int-or-string" {
		// IntOrString and Quantity: an integer or a string, as the API
		// server types them for CEL.
		s.XIntOrString = true
		return s
	}
	s.Type, _ = d["type"].(string)
	s.Nullable, _ = d["nullable"].(bool)
	s.XPreserveUnknownFields, _ = d["x-kubernetes-preserve-unknown-fields"].(bool)
	s.XEmbeddedResource, _ = d["x-kubernetes-embedded-resource"].(bool)
	if s.Type == "object" && d["properties"] == nil && d["additionalProperties"] == nil {
		// RawExtension, FieldsV1: any object.
		s.XPreserveUnknownFields = true
	}
	vv := &structuralschema.ValueValidation{}
	vv.Format, _ = d["format"].(string)
	for _, r := range asList(d["required"]) {
		if r, ok := r.(string); ok {
			vv.Required = append(vv.Required, r)
		}
	}
	for _, e := range asList(d["enum"]) {
		vv.Enum = append(vv.Enum, structuralschema.JSON{Object: e})
	}
	if vv.Format != "" || len(vv.Required) > 0 || len(vv.Enum) > 0 {
		s.ValueValidation = vv
	}
	if props, ok := d["properties"].(map[string]any); ok {
		s.Properties = make(map[string]structuralschema.Structural, len(props))
		for k, p := range props {
			pm, _ := p.(map[string]any)
			s.Properties[k] = f.convert(pm, stack)
		}
	}
	if items, ok := d["items"].(map[string]any); ok {
		it := f.convert(items, stack)
		s.Items = &it
	}
	if ap, ok := d["additionalProperties"].(map[string]any); ok {
		v := f.convert(ap, stack)
		s.AdditionalProperties = &structuralschema.StructuralOrBool{Bool: true, Structural: &v}
	}
	return s
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// ObjectMeta returns the published schema of ObjectMeta (the metadata of
// every object), built once.
func ObjectMeta() *structuralschema.Structural {
	return objectMeta()
}

var objectMeta = sync.OnceValue(func() *structuralschema.Structural {
	f, err := load()
	if err != nil {
		panic(fmt.Sprintf("kubeschema: the embedded definitions are corrupt: %v", err))
	}
	return f.structural("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", map[string]bool{})
})

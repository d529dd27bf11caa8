package katalog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// errNoCRD: a manifest file holds no CustomResourceDefinition.
var errNoCRD = errors.New("holds no CustomResourceDefinition")

// ReadCRDs returns the CustomResourceDefinitions in the manifest at path
// (crdFile, --crd, a Simulate spec's crd files).
func ReadCRDs(path string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := readFile(path, "CRD manifest", MaxFileBytes)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("CRD manifest %s not found (crdFile is relative to the katalog's directory)", path)
		}
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			return nil, fmt.Errorf("cannot read CRD manifest: %w", err)
		}
		return nil, err
	}
	var found []*apiextensionsv1.CustomResourceDefinition
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(doc, &crd); err != nil {
			return nil, fmt.Errorf("%s is not a valid CRD manifest: %w", path, err)
		}
		if crd.Kind != "CustomResourceDefinition" {
			continue
		}
		found = append(found, &crd)
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("%s %w", path, errNoCRD)
	}
	return found, nil
}

// loadCRD reads the CRD manifest at path (cached per path and CRD name).
// A file may hold several documents; the CRD whose group and kind match the
// entry's apiTypes is chosen, or the only one.
func loadCRD(path string, at APITypes, cache map[string]*CRD) (*CRD, error) {
	found, err := ReadCRDs(path)
	if err != nil {
		return nil, err
	}
	var crd *apiextensionsv1.CustomResourceDefinition
	if len(found) == 1 {
		crd = found[0]
	} else {
		var kinds []string
		for _, c := range found {
			kinds = append(kinds, c.Spec.Names.Kind+"."+c.Spec.Group)
			if c.Spec.Names.Kind == at.Kind && (at.Group == "" || c.Spec.Group == at.Group) {
				crd = c
			}
		}
		if crd == nil {
			return nil, fmt.Errorf("%s holds %d CRDs (%s) and none has group %q and kind %q; set apiTypes.group and apiTypes.kind to one of them", path, len(found), strings.Join(kinds, ", "), at.Group, at.Kind)
		}
	}
	key := path + "#" + crd.Name
	if c, ok := cache[key]; ok {
		return c, nil
	}
	c, err := newCRD(path, crd)
	if err != nil {
		return nil, err
	}
	cache[key] = c
	return c, nil
}

func newCRD(path string, obj *apiextensionsv1.CustomResourceDefinition) (*CRD, error) {
	c := &CRD{Path: path, Object: obj, Schemas: map[string]*structuralschema.Structural{}}
	var problems []string
	for _, v := range obj.Spec.Versions {
		if v.Served {
			c.Served = append(c.Served, v.Name)
		}
		if v.Storage {
			c.StorageVersion = v.Name
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		s, err := StructuralSchema(v.Schema.OpenAPIV3Schema)
		if err != nil {
			problems = append(problems, fmt.Sprintf("version %s: %v", v.Name, err))
			continue
		}
		c.Schemas[v.Name] = s
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("CRD %s in %s has a schema that is not structural: %s", obj.Name, path, strings.Join(problems, "; "))
	}
	if c.StorageVersion == "" {
		return nil, fmt.Errorf("CRD %s in %s marks no version storage: true", obj.Name, path)
	}
	return c, nil
}

// StructuralSchema converts a v1 OpenAPI schema into a structural schema.
func StructuralSchema(props *apiextensionsv1.JSONSchemaProps) (*structuralschema.Structural, error) {
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(props, internal, nil); err != nil {
		return nil, err
	}
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, err
	}
	if errs := structuralschema.ValidateStructural(nil, s); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return s, nil
}

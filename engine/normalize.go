package engine

import (
	"fmt"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orkspace/orkestra-cel/engine/jsonval"
	"github.com/orkspace/orkestra-cel/katalog"
)

// Normalize is an entry's compiled normalize block: spec fields rewritten
// on a copy of the custom resource before the entry's children, status and
// gates read it (upstream's normalize; never written back to the cluster).
type Normalize struct {
	// Audit adds katalog.NormalizeChangesRoot to the copy when a field
	// changed, for legacy templates to read.
	Audit  bool
	Fields []*NormalizeField
}

// NormalizeField is one rewritten field.
type NormalizeField struct {
	Source *katalog.NormalizeField
	// Path from the object's root (spec, …).
	Path  []string
	Value *Node
}

// normalize compiles an entry's normalize block in sc, which reads the
// custom resource as stored; view is the schema the entry's other
// expressions read: sc.self with the fields normalize adds.
func (c *compiler) normalize(sc compileScope) (out *Normalize, view *schema.Structural) {
	e := sc.entry
	src := e.Normalize
	out, view = &Normalize{Audit: src.Audit}, sc.self
	for _, f := range src.Fields {
		field := "normalize.spec." + f.Path
		path := append([]string{"spec"}, strings.Split(f.Path, ".")...)
		declared := normalizeTypeHint(f.Type)
		expected, added, ok := c.normalizedSchema(sc, f, path, field)
		if !ok {
			continue
		}
		t := target{field: field, coerce: CoerceTyped}
		switch {
		case expected != nil && declared != nil && !typeAgrees(typeName(declared), expected):
			c.warnf(sc, f.Pos, field, "types.%s is %s, but the schema types spec.%s as %s; the value is read as %s", f.Path, f.Type, f.Path, DescribeSchema(expected), DescribeSchema(expected))
		case expected != nil:
		case declared != nil:
			expected = declared
		default:
			// Untyped: upstream parses the rendered text as a YAML scalar.
			t.coerce = CoerceAuto
		}
		if added {
			// A field the CRD does not declare exists on the copy only; the
			// entry's expressions may read it (typed by types:, else dyn).
			leaf := schema.Structural{Extensions: schema.Extensions{XPreserveUnknownFields: true}}
			if declared != nil {
				leaf = *declared
			}
			view = withField(view, path, leaf)
		}
		out.Fields = append(out.Fields, &NormalizeField{Source: f, Path: path, Value: c.value(sc, f.Value, expected, t)})
	}
	return out, view
}

// normalizedSchema is the schema of the field a normalize value rewrites
// (nil: untyped); added when the CRD does not declare it (upstream sets it
// on the copy all the same); false when the field cannot exist.
func (c *compiler) normalizedSchema(sc compileScope, f *katalog.NormalizeField, path []string, field string) (s *schema.Structural, added, ok bool) {
	s = sc.self
	for i, seg := range path {
		if s == nil || s.XPreserveUnknownFields {
			return nil, false, true
		}
		next := property(s, seg)
		if next == nil {
			if s.Type != "object" && s.Type != "" {
				c.errorf(sc, f.Pos, field, "%s is %s, which has no field %q; normalize a field of an object", strings.Join(path[:i], "."), DescribeSchema(s), seg)
				return nil, false, false
			}
			return nil, true, true
		}
		s = next
	}
	return s, false, true
}

// withField is s with a field at path (object parents made as needed); s
// itself is left alone.
func withField(s *schema.Structural, path []string, leaf schema.Structural) *schema.Structural {
	cp := *s
	cp.Properties = make(map[string]schema.Structural, len(s.Properties)+1)
	for k, v := range s.Properties {
		cp.Properties[k] = v
	}
	if len(path) == 1 {
		cp.Properties[path[0]] = leaf
		return &cp
	}
	child, ok := s.Properties[path[0]]
	if !ok {
		child = schema.Structural{Generic: schema.Generic{Type: "object"}}
	}
	cp.Properties[path[0]] = *withField(&child, path[1:], leaf)
	return &cp
}

// auditRoot is the legacy root of an entry whose normalize block audits:
// self with ._normalizeChanges, a list of {field, from, to}; nil otherwise.
func auditRoot(e *katalog.CRDEntry, self *schema.Structural) *schema.Structural {
	if e.Normalize == nil || !e.Normalize.Audit || self == nil {
		return nil
	}
	change := schema.Structural{Generic: schema.Generic{Type: "object"}, Extensions: schema.Extensions{XPreserveUnknownFields: true}}
	return withField(self, []string{katalog.NormalizeChangesRoot}, schema.Structural{Generic: schema.Generic{Type: "array"}, Items: &change})
}

func normalizeTypeHint(t string) *schema.Structural {
	switch t {
	case "":
		return nil
	case "integer":
		t = "int"
	case "number":
		t = "float"
	case "boolean":
		t = "bool"
	}
	return typeHint(t)
}

func typeName(s *schema.Structural) string {
	return map[string]string{"string": "string", "integer": "int", "number": "float", "boolean": "bool"}[s.Type]
}

// Apply returns the custom resource as the entry's expressions read it:
// obj itself without a normalize block, else a copy with every field
// rewritten. Each value reads obj as stored, as upstream evaluates them.
func (n *Normalize) Apply(obj map[string]any) (map[string]any, error) {
	if n == nil {
		return obj, nil
	}
	s := NewScope(obj)
	out := runtime.DeepCopyJSON(obj)
	var changes []any
	for _, f := range n.Fields {
		v, present, err := f.Value.Eval(s)
		if err != nil {
			return nil, fmt.Errorf("normalize: %w", err)
		}
		if !present {
			continue
		}
		before, had, _ := unstructured.NestedFieldNoCopy(out, f.Path...)
		if err := unstructured.SetNestedField(out, v, f.Path...); err != nil {
			return nil, fmt.Errorf("normalize.spec.%s: %w", f.Source.Path, err)
		}
		if n.Audit && (!had || !jsonval.Equal(before, v)) {
			changes = append(changes, map[string]any{"field": f.Source.Path, "from": before, "to": v})
		}
	}
	if len(changes) > 0 {
		out[katalog.NormalizeChangesRoot] = changes
	}
	return out, nil
}

package engine

import (
	"fmt"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/katalog"
)

func (c *compiler) statusField(sc compileScope, i int, f *katalog.StatusField) *StatusField {
	field := fmt.Sprintf("operatorBox.status.fields[%d]", i)
	e := sc.entry
	path := strings.Split(f.Path, ".")
	statusSchema := property(e.Schema(), "status")
	var expected *structuralschema.Structural
	switch {
	case statusSchema == nil && e.Schema().XPreserveUnknownFields:
		// An untyped entry: the status is whatever the value is.
	case statusSchema == nil:
		// The API server drops a status its schema does not declare; upstream
		// wrote it anyway and lost it, so this is a warning, not an error.
		c.warnf(sc, f.Pos, field+".path", "the CRD version %s has no status schema, so the API server drops status.%s; the field is not written — add it to the CRD's schema", e.APITypes.Version, f.Path)
		return nil
	default:
		s := statusSchema
		for j, seg := range path {
			next := property(s, seg)
			if next == nil {
				if s.XPreserveUnknownFields {
					s = nil
					break
				}
				if hint := katalog.DidYouMean(seg, PropertyNames(s)); hint != "" {
					c.errorf(sc, f.Pos, field+".path", "status.%s is not in the status schema of %s%s", strings.Join(path[:j+1], "."), e.APITypes.Version, hint)
				} else {
					c.warnf(sc, f.Pos, field+".path", "status.%s is not in the status schema of %s, so the API server drops it; the field is not written — add it to the CRD's schema", strings.Join(path[:j+1], "."), e.APITypes.Version)
				}
				return nil
			}
			s = next
		}
		expected = s
	}
	var inputs *Inputs
	if f.Motif != nil {
		inputs = c.inputs(sc, f.Motif)
		sc = sc.withInputs(inputs)
	}
	// Upstream skipped a status field whose template failed and wrote the
	// others (orkspace/orkestra pkg/template/resolver_status.go), unless
	// clearOnFalse would have written "" when its condition failed.
	t := target{field: field + ".value", coerce: CoerceTyped, skipsFailure: f.Value.Kind == katalog.StringValue && !f.ClearOnFalse}
	switch {
	case expected != nil && f.Type != "" && f.Type != "auto" && !typeAgrees(f.Type, expected):
		// The schema wins: the API server would refuse the other type.
		c.warnf(sc, f.Pos, field+".type", "type: %s, but the status schema types status.%s as %s; the value is written as %s (the API server would refuse %s)", f.Type, f.Path, DescribeSchema(expected), DescribeSchema(expected), DescribeSchema(typeHint(f.Type)))
	case expected != nil:
	case f.Type == "auto":
		t.coerce = CoerceAuto
	case f.Type == "" || f.Type == "string":
		// The original wrote an untyped status field as the rendered string.
		t.coerce = CoerceString
	default:
		expected = typeHint(f.Type)
	}
	sf := &StatusField{Source: f, Path: path, Value: c.value(sc, f.Value, expected, t), ClearOnFalse: f.ClearOnFalse, Inputs: inputs}
	if _, failing := sf.Value.Expr.(*FailingExpr); failing {
		return nil
	}
	sf.ClearsToEmpty = expected == nil || expected.Type == "string" || expected.Type == ""
	if f.When != nil {
		sf.When = c.when(sc, f.When, true, field+".when")
	}
	return sf
}

// typeAgrees: a status field's `type:` names the schema's type.
func typeAgrees(t string, s *structuralschema.Structural) bool {
	h := typeHint(t)
	return s.Type == h.Type || s.XIntOrString && (t == "int" || t == "string")
}

func typeHint(t string) *structuralschema.Structural {
	m := map[string]string{"string": "string", "int": "integer", "float": "number", "bool": "boolean"}
	return &structuralschema.Structural{Generic: structuralschema.Generic{Type: m[t]}}
}

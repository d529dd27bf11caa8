package engine

import (
	"fmt"
	"regexp"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/katalog"
)

// value compiles a katalog value into a node, checking it against expected
// (nil: anything).
func (c *compiler) value(sc compileScope, v *katalog.Value, expected *structuralschema.Structural, t target) *Node {
	switch v.Kind {
	case katalog.StringValue:
		return c.stringValue(sc, v, expected, t)
	case katalog.MapValue:
		return c.mapValue(sc, v, expected, t)
	case katalog.SelectValue:
		return c.selectValue(sc, v, expected, t)
	case katalog.ListValue:
		var items []*Node
		var itemSchema *structuralschema.Structural
		if expected != nil {
			if expected.Type != "" && expected.Type != "array" {
				c.errorf(sc, v.Pos, t.field, "%s expects %s, got a list", t.field, DescribeSchema(expected))
				return NewLiteral(t.field, v.Pos, nil)
			}
			itemSchema = expected.Items
		}
		for i, item := range v.List {
			it := t
			it.field = fmt.Sprintf("%s[%d]", t.field, i)
			items = append(items, c.value(sc, item, itemSchema, it))
		}
		return NewList(t.field, v.Pos, items)
	case katalog.NullValue:
		return NewLiteral(t.field, v.Pos, nil)
	}
	// int, float, bool literals
	lit, err := literalFor(v.Scalar, v.Str, expected)
	if err != "" {
		c.errorf(sc, v.Pos, t.field, "%s", err)
	}
	return NewLiteral(t.field, v.Pos, lit)
}

// plainLegacyRef matches a legacy template that is one field reference.
var plainLegacyRef = regexp.MustCompile(`^\{\{\s*\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\}\}$`)

// rawRef is a plain legacy field reference read as its value: the CEL
// reference to the same field, keeping the source as written.
type rawRef struct {
	Expr
	src string
}

func (r *rawRef) Source() string { return r.src }

func (r *rawRef) Engine() string { return "legacy" }

func (c *compiler) stringValue(sc compileScope, v *katalog.Value, expected *structuralschema.Structural, t target) *Node {
	pos := v.ContentPos()
	lang := Classify(v.Str)
	if lang == Literal {
		lit, err := literalFor(v.Str, v.Str, expected)
		if err != "" {
			c.errorf(sc, v.Pos, t.field, "%s", err)
		}
		return NewLiteral(t.field, v.Pos, lit)
	}
	ctx := sc.context(lang, t.field, pos, c.opts.CostLimit)
	ctx.Expected, ctx.Coerce = expected, t.coerce
	ctx.AllowRandom = t.allowRandom != nil && t.allowRandom(t.field)
	ctx.Total = t.total
	ctx.LabelValue = t.labels && expected != nil && expected.Type == "string"
	ctx.SkipsFailure = t.skipsFailure
	if t.total {
		// Findings come back acknowledged; pathFindings classifies them
		// by the path's mayFail.
		ctx.TotalSeverity = katalog.Acknowledged
	}
	if lang == Legacy && t.rawRefs != nil && t.rawRefs(t.field) {
		if m := plainLegacyRef.FindStringSubmatch(v.Str); m != nil {
			lang, ctx.Coerce = CEL, CoerceTyped
			expr, diags := c.b.CEL.CompileValue("${self."+m[1]+"}", ctx)
			c.diags = append(c.diags, diags...)
			c.exprs++
			if expr == nil {
				return NewLiteral(t.field, v.Pos, nil)
			}
			return NewExpr(t.field, &rawRef{Expr: expr, src: v.Str})
		}
	}
	var backend Backend
	switch lang {
	case Mixed:
		c.errorf(sc, pos, t.field, "a string may not mix ${…} (CEL) and {{…}} (legacy template); write it in one language, e.g. run `orkestra migrate` to move it to CEL")
		return NewLiteral(t.field, v.Pos, nil)
	case CEL:
		backend = c.b.CEL
	case Legacy:
		if c.b.Legacy == nil {
			c.errorf(sc, pos, t.field, "legacy templates are not enabled in this build")
			return NewLiteral(t.field, v.Pos, nil)
		}
		backend = c.b.Legacy
	}
	expr, diags := backend.CompileValue(v.Str, ctx)
	c.diags = append(c.diags, diags...)
	c.exprs++
	if expr == nil {
		return NewLiteral(t.field, v.Pos, nil)
	}
	sc.noteTimed(expr)
	return NewExpr(t.field, expr)
}

func (c *compiler) mapValue(sc compileScope, v *katalog.Value, expected *structuralschema.Structural, t target) *Node {
	if expected != nil && expected.Type != "" && expected.Type != "object" {
		c.errorf(sc, v.Pos, t.field, "%s expects %s, got a map", t.field, DescribeSchema(expected))
		return NewLiteral(t.field, v.Pos, nil)
	}
	var fields []NodeField
	set := map[string]bool{}
	for _, f := range v.Map {
		ft := t
		ft.field = t.field + "." + f.Key
		var fs *structuralschema.Structural
		if expected != nil {
			switch {
			case expected.Properties != nil:
				p, ok := expected.Properties[f.Key]
				if !ok {
					if !expected.XPreserveUnknownFields {
						c.errorf(sc, f.KeyPos, ft.field, "%s has no field %q%s", t.field, f.Key, didYouMeanFields(f.Key, expected))
						continue
					}
				} else {
					fs = &p
				}
			case expected.AdditionalProperties != nil && expected.AdditionalProperties.Structural != nil:
				fs = expected.AdditionalProperties.Structural
			case !expected.XPreserveUnknownFields && expected.Type == "object":
				c.errorf(sc, f.KeyPos, ft.field, "%s is an object without declared fields; the API server would prune %q", t.field, f.Key)
				continue
			}
		}
		set[f.Key] = true
		fields = append(fields, NodeField{Key: f.Key, Value: c.value(sc, f.Value, fs, ft)})
	}
	if t.checkRequired && expected != nil && expected.ValueValidation != nil {
		for _, req := range expected.ValueValidation.Required {
			if !set[req] {
				c.errorf(sc, v.Pos, t.field, "required field %s.%s is not set; map it from the source (e.g. %s: \"${self.%s}\") or give a literal", t.field, req, req, strings.TrimPrefix(fieldAfterPath(t.field)+"."+req, "."))
			}
		}
	}
	return NewMap(t.field, v.Pos, fields)
}

// fieldAfterPath strips the conversion.paths[i] prefix from a field path.
func fieldAfterPath(field string) string {
	if i := strings.Index(field, "]."); i >= 0 {
		return field[i+2:]
	}
	return field
}

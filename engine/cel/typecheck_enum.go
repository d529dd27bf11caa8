package cel

import (
	"fmt"
	"strings"

	"github.com/google/cel-go/common/ast"

	"github.com/orkspace/orkestra-cel/engine/jsonval"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// checkEnum: a string that lands in an enum field must be one of its values:
// a constant must be listed; a field with an enum of its own must have only
// listed values.
func (c *outCheck) checkEnum(e ast.Expr, exp *structuralschema.Structural, where, subject string) {
	if exp.ValueValidation == nil || len(exp.ValueValidation.Enum) == 0 || e == nil {
		return
	}
	if s, ok := literalString(e); ok {
		if !enumContains(exp, s) {
			c.add(e, "%s yields %q, which %s does not allow (allowed: %s)", subject, s, where, enumList(exp))
		}
		return
	}
	if src := resolveChain(c.tree, e); src != nil && len(src.enum) > 0 {
		c.checkEnumSubset(e, src, exp, where, subject)
	}
}

func (c *outCheck) checkEnumSubset(e ast.Expr, src *node, exp *structuralschema.Structural, where, subject string) {
	if exp.ValueValidation == nil || len(exp.ValueValidation.Enum) == 0 {
		return
	}
	var missing []string
	for _, v := range src.enum {
		if !enumContains(exp, v) {
			missing = append(missing, formatEnumValue(v))
		}
	}
	if len(missing) == 0 {
		return
	}
	example := ""
	if len(missing) > 0 && len(exp.ValueValidation.Enum) > 0 {
		for _, v := range src.enum {
			if !enumContains(exp, v) {
				if str, ok := v.(string); ok {
					if to, ok := exp.ValueValidation.Enum[0].Object.(string); ok {
						example = fmt.Sprintf(", e.g. ${%s == '%s' ? '%s' : %s}", src.selfPath(), str, to, src.selfPath())
					}
				}
				break
			}
		}
	}
	c.add(e, "%s can yield %s, which %s does not allow (%s allows %s; %s allows %s); map those values%s",
		subject, strings.Join(missing, ", "), where, src.selfPath(), enumValues(src.enum), where, enumList(exp), example)
}

func enumContains(exp *structuralschema.Structural, v any) bool {
	for _, e := range exp.ValueValidation.Enum {
		if jsonval.Equal(e.Object, v) {
			return true
		}
	}
	return false
}

func formatEnumValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

func enumValues(vs []any) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = formatEnumValue(v)
	}
	return strings.Join(out, ", ")
}

func enumList(exp *structuralschema.Structural) string {
	vs := make([]any, len(exp.ValueValidation.Enum))
	for i, e := range exp.ValueValidation.Enum {
		vs[i] = e.Object
	}
	return enumValues(vs)
}

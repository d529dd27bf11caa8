package engine

import (
	"fmt"
	"strconv"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/kube-openapi/pkg/validation/strfmt"

	"github.com/orkspace/orkestra-cel/katalog"
)

func formatOf(s *structuralschema.Structural) string {
	if s.ValueValidation == nil || s.Type != "string" {
		return ""
	}
	return s.ValueValidation.Format
}

// DescribeSchema names the type a schema expects, for messages: "an
// integer", "a list", … ("anything" for nil or untyped).
func DescribeSchema(s *structuralschema.Structural) string {
	switch {
	case s == nil:
		return "anything"
	case s.XIntOrString:
		return "an integer or a string"
	case s.Type == "integer":
		return "an integer"
	case s.Type == "number":
		return "a number"
	case s.Type == "boolean":
		return "a boolean"
	case s.Type == "string":
		return "a string"
	case s.Type == "array":
		return "a list"
	case s.Type == "object":
		return "an object"
	}
	return "anything"
}

// literalFor types a literal scalar for its target: YAML scalars become the
// target's type when they can (a quoted "80" into an integer field is 80, as
// the original katalogs wrote them; `true` into a string field is "true").
// It returns an error message when the literal cannot fit, breaks an enum, or
// is not valid for the target's format (date-time, email, uuid, …).
func literalFor(scalar any, text string, s *structuralschema.Structural) (any, string) {
	if s == nil || s.XPreserveUnknownFields && s.Type == "" {
		return scalar, ""
	}
	var out any
	switch {
	case s.XIntOrString:
		if i, ok := scalar.(int64); ok {
			return i, ""
		}
		return text, ""
	case s.Type == "string":
		out = text
		if f, ok := scalar.(float64); ok {
			out = strconv.FormatFloat(f, 'f', -1, 64)
		}
	case s.Type == "integer":
		switch x := scalar.(type) {
		case int64:
			out = x
		case float64:
			if x != float64(int64(x)) {
				return nil, fmt.Sprintf("expects an integer, got %v", x)
			}
			out = int64(x)
		case string:
			i, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
			if err != nil {
				return nil, fmt.Sprintf("expects an integer, got the string %q", x)
			}
			out = i
		default:
			return nil, fmt.Sprintf("expects an integer, got %v", scalar)
		}
	case s.Type == "number":
		switch x := scalar.(type) {
		case int64, float64:
			out = x
		case string:
			f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if err != nil {
				return nil, fmt.Sprintf("expects a number, got the string %q", x)
			}
			out = f
		default:
			return nil, fmt.Sprintf("expects a number, got %v", scalar)
		}
	case s.Type == "boolean":
		switch x := scalar.(type) {
		case bool:
			out = x
		case string:
			b, err := strconv.ParseBool(strings.TrimSpace(x))
			if err != nil {
				return nil, fmt.Sprintf("expects true or false, got the string %q", x)
			}
			out = b
		default:
			return nil, fmt.Sprintf("expects true or false, got %v", scalar)
		}
	case s.Type == "object":
		return nil, fmt.Sprintf("expects an object, got %q", text)
	case s.Type == "array":
		return nil, fmt.Sprintf("expects a list, got %q", text)
	default:
		return scalar, ""
	}
	if f := formatOf(s); f != "" && strfmt.Default.ContainsName(f) {
		if str, ok := out.(string); ok && !strfmt.Default.Validates(f, str) {
			return out, fmt.Sprintf("%q is not a valid %s (the schema's format)", str, f)
		}
	}
	if s.ValueValidation != nil && len(s.ValueValidation.Enum) > 0 {
		allowed := make([]string, 0, len(s.ValueValidation.Enum))
		for _, e := range s.ValueValidation.Enum {
			if fmt.Sprint(e.Object) == fmt.Sprint(out) {
				return out, ""
			}
			allowed = append(allowed, fmt.Sprint(e.Object))
		}
		return out, fmt.Sprintf("%v is not one of the allowed values %s%s", out, strings.Join(allowed, ", "), katalog.DidYouMean(fmt.Sprint(out), allowed))
	}
	return out, ""
}

package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/itchyny/gojq"
	sigsyaml "sigs.k8s.io/yaml"
)

// apply runs jq or yq over out, as upstream pipes an output through
// `jq -r EXPR` or `yq e EXPR -` (pkg/e2e/verify.go applyExtract): a jq
// expression that starts with a bare name gets a leading dot (state is
// .state), every JSON value of the input
// stream is queried, strings print raw and other values as JSON (jq) or YAML
// (yq). The query language is gojq's, for both.
func (x Extract) apply(out string) (string, error) {
	switch {
	case x.JQ != "":
		return runJQ(x.JQ, out)
	case x.YQ != "":
		return runYQ(x.YQ, out)
	}
	return out, nil
}

func compileQuery(expr string) (*gojq.Code, error) {
	q, err := gojq.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("%q is not a jq expression: %w", expr, err)
	}
	return gojq.Compile(q)
}

func runJQ(expr, input string) (string, error) {
	if expr = strings.TrimSpace(expr); bareField(expr) {
		expr = "." + expr
	}
	code, err := compileQuery(expr)
	if err != nil {
		return "", err
	}
	dec := json.NewDecoder(strings.NewReader(input))
	dec.UseNumber()
	var lines []string
	for {
		var v any
		if err := dec.Decode(&v); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return "", fmt.Errorf("jq %s: the input is not JSON: %w\ninput: %s", expr, err, input)
		}
		res, err := query(code, normalizeNumbers(v), func(v any) (string, error) {
			b, err := json.MarshalIndent(v, "", "  ")
			return string(b), err
		})
		if err != nil {
			return "", fmt.Errorf("jq %s: %w", expr, err)
		}
		lines = append(lines, res...)
	}
	return strings.Join(lines, "\n"), nil
}

func runYQ(expr, input string) (string, error) {
	code, err := compileQuery(expr)
	if err != nil {
		return "", err
	}
	js, err := sigsyaml.YAMLToJSON([]byte(input))
	if err != nil {
		return "", fmt.Errorf("yq %s: the input is not YAML: %w", expr, err)
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("yq %s: %w", expr, err)
	}
	res, err := query(code, normalizeNumbers(v), func(v any) (string, error) {
		b, err := sigsyaml.Marshal(v)
		return strings.TrimSuffix(string(b), "\n"), err
	})
	if err != nil {
		return "", fmt.Errorf("yq %s: %w", expr, err)
	}
	return strings.Join(res, "\n"), nil
}

// bareField: an expression that starts with a name (`state`), which
// upstream reads as the field `.state`.
func bareField(expr string) bool {
	if expr == "" {
		return false
	}
	c := expr[0]
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// query runs code on v; strings are printed raw, null as "null", anything
// else by format.
func query(code *gojq.Code, v any, format func(any) (string, error)) ([]string, error) {
	var out []string
	iter := code.Run(v)
	for {
		r, ok := iter.Next()
		if !ok {
			return out, nil
		}
		switch x := r.(type) {
		case error:
			return nil, x
		case string:
			out = append(out, x)
		case nil:
			out = append(out, "null")
		default:
			s, err := format(x)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
	}
}

// normalizeNumbers turns json.Numbers into the int or float64 gojq takes.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return int(i)
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
	}
	return v
}

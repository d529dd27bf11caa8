package conversion

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/orkspace/orkestra-cel/engine"
)

type metaNode struct {
	key  string
	node *engine.Node
}

func metaNodes(p *engine.Path) [2]metaNode {
	return [2]metaNode{{"labels", p.Labels}, {"annotations", p.Annotations}}
}

// mappedMetadata is src's metadata with the labels and annotations the path
// maps merged in.
func mappedMetadata(p *engine.Path, src map[string]any, scope *engine.Scope) (map[string]any, error) {
	meta, _ := src["metadata"].(map[string]any)
	out := make(map[string]any, len(meta))
	for k, v := range meta {
		out[k] = v
	}
	for _, m := range metaNodes(p) {
		if m.node == nil {
			continue
		}
		merged, err := mergeMeta(m.key, out[m.key], m.node, scope)
		if err != nil {
			return nil, err
		}
		if len(merged) == 0 {
			delete(out, m.key) // never an empty map the object did not have
		} else {
			out[m.key] = merged
		}
	}
	return out, nil
}

// mergeMeta merges what a path maps into existing labels or annotations
// (key "labels" or "annotations"): a key mapped to null is removed, a key
// whose value is absent is left as it is. Label values are checked as the
// API server checks them, so a conversion never returns an object the API
// server rejects.
func mergeMeta(key string, old any, n *engine.Node, scope *engine.Scope) (map[string]any, error) {
	v, _, err := n.Eval(scope)
	if err != nil {
		return nil, err
	}
	merged := map[string]any{}
	if old, ok := old.(map[string]any); ok {
		for k, x := range old {
			merged[k] = x
		}
	}
	set, _ := v.(map[string]any)
	for k, x := range set {
		if x == nil {
			delete(merged, k)
			continue
		}
		if key == "labels" {
			if err := checkLabel(n, k, x); err != nil {
				return nil, err
			}
		}
		merged[k] = x
	}
	return merged, nil
}

// checkLabel validates one label a path writes.
func checkLabel(n *engine.Node, k string, v any) error {
	field, where := n.Field, n
	if f := n.Get(k); f != nil {
		field, where = f.Field, f
	}
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("%s: label %q must be a string, got %T", field, k, v)
	}
	problems := validation.IsQualifiedName(k)
	for _, msg := range validation.IsValidLabelValue(s) {
		problems = append(problems, fmt.Sprintf("value %q: %s", s, msg))
	}
	if len(problems) == 0 {
		return nil
	}
	sort.Strings(problems)
	src := ""
	if where.Expr != nil {
		src = fmt.Sprintf(" (%s at %s)", where.Expr.Source(), where.Expr.Pos())
	}
	return fmt.Errorf("%s%s: label %q is not valid: %s; make the value match the schema's pattern (a label value is at most 63 characters of [A-Za-z0-9_.-], beginning and ending with an alphanumeric), or test it with format.labelValue().validate(…)", field, src, k, strings.Join(problems, "; "))
}

package render

import (
	"fmt"
	"strings"

	"github.com/orkspace/orkestra-cel/engine"
)

// status evaluates the status fields in order: a path declared several
// times takes the value of the last declaration whose condition holds (or
// that clears it: clearOnFalse). A cleared field is "" or, for a field that
// does not hold strings, nil: the operator removes it. A field that fails is
// left out and reported; the others are kept (upstream
// pkg/template/resolver_status.go ResolveStatusFields collects the errors and
// returns the rest).
func (r *renderer) status() (map[string]any, []error) {
	out := map[string]any{}
	var errs []error
	for _, sf := range r.entry.Status {
		if err := r.statusField(out, sf); err != nil {
			errs = append(errs, err)
		}
	}
	return out, errs
}

func (r *renderer) statusField(out map[string]any, sf *engine.StatusField) error {
	field := sf.Value.Field
	scope := r.scope
	if sf.Inputs != nil {
		s, err := sf.Inputs.Scope(r.scope)
		if err != nil {
			return r.errorf(field, err)
		}
		scope = s
	}
	if sf.When != nil {
		ok, err := sf.When.Eval(scope)
		if err != nil {
			return r.errorf(field, fmt.Errorf("evaluating when %s: %w", sf.When.Source(), err))
		}
		if !ok {
			if !sf.ClearOnFalse {
				return nil
			}
			var cleared any
			if sf.ClearsToEmpty {
				cleared = ""
			}
			if err := setPath(out, sf.Path, cleared); err != nil {
				return r.errorf(field, err)
			}
			return nil
		}
	}
	v, ok, err := sf.Value.Eval(scope)
	if err != nil {
		return r.errorf(field, err)
	}
	if !ok {
		return nil
	}
	if err := setPath(out, sf.Path, v); err != nil {
		return r.errorf(field, err)
	}
	return nil
}

func setPath(m map[string]any, path []string, v any) error {
	for i, seg := range path[:len(path)-1] {
		next, ok := m[seg].(map[string]any)
		if !ok {
			if _, taken := m[seg]; taken {
				return fmt.Errorf("status.%s is already set to a value that is not an object", strings.Join(path[:i+1], "."))
			}
			next = map[string]any{}
			m[seg] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
	return nil
}

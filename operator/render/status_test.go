package render

import (
	"reflect"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
)

// A path declared several times takes the value of the last declaration
// whose condition holds; clearOnFalse clears it while its condition fails:
// "" for a field of strings (upstream writes ""), removed (nil) otherwise.
// Upstream: pkg/resources/template/resolver_status.go.
func TestStatusLastMatchWinsAndClearOnFalse(t *testing.T) {
	clears := func(f *engine.StatusField, toEmpty bool) *engine.StatusField {
		f.ClearOnFalse, f.ClearsToEmpty = true, toEmpty
		return f
	}
	e := entry()
	e.Status = []*engine.StatusField{
		sf("phase", lit("Pending"), nil),
		sf("phase", lit("Running"), cond("spec.ready", true)),
		sf("phase", lit("Degraded"), cond("spec.degraded", true)),
		clears(sf("message", lit("all good"), cond("spec.ready", true)), true),
		clears(sf("readyReplicas", ref("spec.replicas"), cond("spec.ready", true)), false),
	}
	for _, tc := range []struct {
		spec map[string]any
		want map[string]any
	}{
		{map[string]any{"ready": false, "replicas": int64(2)},
			map[string]any{"phase": "Pending", "message": "", "readyReplicas": nil}},
		{map[string]any{"ready": true, "replicas": int64(2)},
			map[string]any{"phase": "Running", "message": "all good", "readyReplicas": int64(2)}},
		{map[string]any{"ready": true, "degraded": true, "replicas": int64(2)},
			map[string]any{"phase": "Degraded", "message": "all good", "readyReplicas": int64(2)}},
	} {
		res := renderOne(t, e, widget(tc.spec))
		if !reflect.DeepEqual(res.Status, tc.want) {
			t.Errorf("spec %v: status = %#v, want %#v", tc.spec, res.Status, tc.want)
		}
	}
}

package render

import (
	"encoding/json"
	"reflect"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// Comparison helpers of the drift rules. Sub-objects written in full
// (probes, resources, volumes, env, …) are compared as a subset: every field
// the katalog sets must have the same value live, while fields the API server
// defaults (a probe's timeoutSeconds, a volume's defaultMode) are not drift.

// mergePlain sets every field of want into got (maps merged recursively,
// lists and scalars replaced).
func mergePlain(got, want any) any {
	wm, ok := want.(map[string]any)
	if !ok {
		return want
	}
	gm, ok := got.(map[string]any)
	if !ok {
		return want
	}
	for k, v := range wm {
		gm[k] = mergePlain(gm[k], v)
	}
	return gm
}

// subset reports whether every field set in want has the same value in got,
// comparing their JSON forms (lists item by item, same length).
func subset(want, got any) bool {
	return subsetPlain(plain(want), plain(got))
}

// contains reports whether every item of the list want is a subset of some
// item of the list got.
func contains(want, got any) bool {
	wl, _ := plain(want).([]any)
	gl, _ := plain(got).([]any)
	for _, w := range wl {
		found := false
		for _, g := range gl {
			if subsetPlain(w, g) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func plain(v any) any {
	if rv := reflect.ValueOf(v); !rv.IsValid() || (rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Slice || rv.Kind() == reflect.Map) && rv.IsNil() {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	return out
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

func subsetPlain(want, got any) bool {
	if isEmpty(want) {
		// Nothing set is nothing to compare; but an explicitly empty list
		// or map must be empty live too.
		return want == nil || isEmpty(got)
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			if !subsetPlain(wv, g[k]) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !subsetPlain(w[i], g[i]) {
				return false
			}
		}
		return true
	}
	return jsonval.Equal(want, got)
}

func subsetMap(want, got map[string]string) bool {
	for k, v := range want {
		if gv, ok := got[k]; !ok || gv != v {
			return false
		}
	}
	return true
}

func mergeMap(got, want map[string]string) map[string]string {
	out := make(map[string]string, len(got)+len(want))
	for k, v := range got {
		out[k] = v
	}
	for k, v := range want {
		out[k] = v
	}
	return out
}

func eqStringMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

func eqBytesMap(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		bv, ok := b[k]
		if !ok || string(bv) != string(v) {
			return false
		}
	}
	return true
}

func eqStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func eqInt32(a, b *int32) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func eqInt64(a, b *int64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func eqBool(a, b *bool) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// eqPlain reports whether a and b have the same JSON form (an absent list
// or map equals an empty one).
func eqPlain(a, b any) bool {
	pa, pb := plain(a), plain(b)
	if isEmpty(pa) && isEmpty(pb) {
		return true
	}
	return jsonval.Equal(pa, pb)
}

// specOf is the Spec field of a typed object (a pointer to a struct with
// one), settable.
func specOf(o client.Object) reflect.Value {
	return reflect.ValueOf(o).Elem().FieldByName("Spec")
}

package conversion

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// The stash encoder must write what encoding/json writes (without HTML
// escaping), so that the annotation decodes back to the same stash.
func TestEncodeStashMatchesEncodingJSON(t *testing.T) {
	values := []any{
		"plain", "", "quote\" back\\slash", "<html>&amp;", "tab\tnl\ncr\r\x01\x1f", "ünïcödé 日本", "bad\xffutf8", "line\u2028sep\u2029",
		int64(0), int64(-42), int64(math.MaxInt64), 0.5, 1e6, 1e21, 1.5e-7, -2.25, 123456789.125, 1e-6, true, false, nil,
		[]any{"a", int64(1), []any{}, map[string]any{}}, map[string]any{"z": int64(1), "a": map[string]any{"m": []any{nil, true}}},
	}
	for _, v := range values {
		stash := map[string]*stashEntry{
			"v1":       {Set: map[string]any{"spec": map[string]any{"x": v}}, Unset: [][]string{{"spec", "y<"}, {"status"}}},
			"v1alpha1": {Unset: [][]string{{"spec"}}},
			"v2":       {Set: map[string]any{"status": v}},
		}
		got, err := encodeStash(stash)
		if err != nil {
			t.Fatalf("%#v: %v", v, err)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(stash); err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if string(got) != string(want) {
			t.Errorf("value %#v:\n got %s\nwant %s", v, got, want)
		}
	}
	if _, err := encodeStash(map[string]*stashEntry{"v1": {Set: map[string]any{"x": math.NaN()}}}); err == nil {
		t.Error("NaN must be refused")
	}
}

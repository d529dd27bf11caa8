package conversion

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

// asWire is the stash as plain maps, the shape encoding/json writes with
// sorted keys.
func asWire(stash map[string]*stashEntry) map[string]map[string]any {
	out := map[string]map[string]any{}
	for v, e := range stash {
		m := map[string]any{}
		if len(e.Set) > 0 {
			m["set"] = e.Set
		}
		if len(e.Unset) > 0 {
			m["unset"] = e.Unset
		}
		if len(e.Guards) > 0 {
			m["via"] = e.Via
			var gs []any
			for _, g := range e.Guards {
				var reads []any
				for _, in := range g.Read {
					r := []any{in.Path}
					if in.Present {
						r = append(r, in.Value)
					}
					reads = append(reads, r)
				}
				gs = append(gs, map[string]any{"at": g.At, "read": reads})
			}
			m["if"] = gs
		}
		out[v] = m
	}
	return out
}

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
			"v1": {Set: map[string]any{"spec": map[string]any{"x": v}}, Unset: [][]string{{"spec", "y<"}, {"status"}}, Via: "v2",
				Guards: []guard{{At: []string{"spec", "x"}, Read: []input{{Path: []string{"spec", "a.b"}, Value: v, Present: true}, {Path: []string{"spec", "gone"}}}}}},
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
		if err := enc.Encode(asWire(stash)); err != nil {
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

func TestStashDecodesWhatItEncodes(t *testing.T) {
	stash := map[string]*stashEntry{
		"v1alpha1": {Set: map[string]any{"spec": map[string]any{"retainDays": int64(7)}}, Unset: [][]string{{"spec", "suspend"}}, Via: "v1",
			Guards: []guard{{At: []string{"spec", "retainDays"}, Read: []input{{Path: []string{"spec", "retention", "days"}, Value: int64(30), Present: true}, {Path: []string{"spec", "x"}}}}}},
	}
	raw, err := encodeStash(stash)
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"metadata": map[string]any{"annotations": map[string]any{StashAnnotation: string(raw)}}}
	got, err := readStash(obj)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, stash) {
		t.Fatalf("decoded %#v\nwant %#v", got["v1alpha1"], stash["v1alpha1"])
	}
}

func TestMalformedStashIsAnError(t *testing.T) {
	for raw, want := range map[string]string{
		`{oops`:                 "is not valid JSON",
		`{"v1":null}`:           `entry "v1" is null`,
		`{"v1":{"unset":[[]]}}`: `entry "v1" unsets an empty path`,
		`{"v1":{"if":[{"at":["spec"],"read":[]}]}}`:                 `entry "v1" has guards ("if") but no "via" version`,
		`{"v1":{"via":"v2","if":[{"at":[],"read":[]}]}}`:            `entry "v1" has a guard without a path`,
		`{"v1":{"via":"v2","if":[{"at":["spec"],"read":[[]]}]}}`:    `entry "v1" has a malformed guard at spec: a read is [path] or [path, value], got 0 elements`,
		`{"v1":{"via":"v2","if":[{"at":["spec"],"read":[["x"]]}]}}`: `entry "v1" has a malformed guard at spec: a read's path is not a list`,
		`{"v1":{"via":"v2","if":[{"at":["spec"],"read":[[[1]]]}]}}`: `entry "v1" has a malformed guard at spec: a read's path holds a non-string`,
	} {
		obj := map[string]any{"metadata": map[string]any{"annotations": map[string]any{StashAnnotation: raw}}}
		_, err := readStash(obj)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), StashAnnotation) {
			t.Errorf("readStash(%s) = %v, want an error containing %q", raw, err, want)
		}
	}
}

// A recorded entry's leaves encode as the tree they set, in whatever order
// they were set: directly when no path is a prefix of another, else through
// the tree (a later value set over an earlier one, as in a map).
func TestStashLeavesEncodeAsTheirTree(t *testing.T) {
	cases := [][]struct {
		path  []string
		value any
	}{
		{{[]string{"spec", "theme"}, "dark"}},
		{{[]string{"spec", "z"}, int64(1)}, {[]string{"metadata", "labels", "b"}, "x"}, {[]string{"spec", "a", "deep"}, []any{"l"}}, {[]string{"metadata", "labels", "a"}, "y"}, {[]string{"status"}, map[string]any{"k": true}}},
		{{[]string{"spec", "m"}, map[string]any{}}, {[]string{"spec", "n"}, nil}, {[]string{"spec", "a.b"}, 0.5}},
		// not nesting: a path under another, a path set twice
		{{[]string{"spec", "x"}, "first"}, {[]string{"spec"}, map[string]any{"y": "whole"}}},
		{{[]string{"spec"}, map[string]any{"y": "whole"}}, {[]string{"spec", "x"}, "then"}},
		{{[]string{"spec", "x"}, "first"}, {[]string{"spec", "x"}, "second"}},
	}
	for i, leaves := range cases {
		e := &stashEntry{}
		for _, l := range leaves {
			e.set(l.path, l.value)
		}
		want, err := appendJSON(e.setTree())
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.appendSet(nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("case %d:\n got %s\nwant %s", i, got, want)
		}
		var n int
		e.each(func([]string, any, bool) { n++ })
		if n == 0 {
			t.Errorf("case %d: each visits no leaf", i)
		}
	}
}

func appendJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), err
}

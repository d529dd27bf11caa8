package webhook

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// apartFake returns annotation key=value apart from objects that shape
// changes (besides apiVersion); its Convert, which the handler calls when
// the key is not valid, puts it in the object, or from=convert where the key
// is "".
type apartFake struct {
	key, value string
	shape      func(out map[string]any)
}

func (f apartFake) ApartAnnotation() string { return f.key }

func (f apartFake) ConvertApart(obj *unstructured.Unstructured, desired string) (*unstructured.Unstructured, string, error) {
	out := copyMap(obj.Object)
	out["apiVersion"] = desired
	if f.shape != nil {
		f.shape(out)
	}
	return &unstructured.Unstructured{Object: out}, f.value, nil
}

func (f apartFake) Convert(obj *unstructured.Unstructured, desired string) (*unstructured.Unstructured, error) {
	res, _, err := f.ConvertApart(obj, desired)
	a := apart{f.key, f.value}
	if f.key == "" {
		a = apart{"from", "convert"}
	}
	a.into(res.Object)
	return res, err
}

// An annotation a converter returns apart reaches the converted object as
// Convert would have put it there, and is checked as the API server would
// check it: whatever shape the object's metadata has.
func TestApartAnnotation(t *testing.T) {
	const key = "example.com/stash"
	object := func(meta string) string {
		if meta != "" {
			meta = `"metadata":` + meta + `,`
		}
		return `{"apiVersion":"` + group + `/v1alpha1","kind":"Website",` + meta + `"spec":{"image":"nginx"}}`
	}
	setMeta := func(meta any) func(map[string]any) {
		return func(out map[string]any) { out["metadata"] = meta }
	}
	for _, tc := range []struct {
		name     string
		conv     apartFake
		object   string
		wantMeta string // the converted object's metadata, as JSON
		wantErr  string
	}{
		{name: "beside other annotations, in key order",
			conv:     apartFake{key: key, value: `{"v":1}`},
			object:   object(`{"name":"a","annotations":{"a":"1","z":"2"}}`),
			wantMeta: `{"annotations":{"a":"1","example.com/stash":"{\"v\":1}","z":"2"},"name":"a"}`},
		{name: "without annotations",
			conv:     apartFake{key: key, value: "s"},
			object:   object(`{"name":"a"}`),
			wantMeta: `{"annotations":{"example.com/stash":"s"},"name":"a"}`},
		{name: "in place of the object's own",
			conv:     apartFake{key: key, value: "new"},
			object:   object(`{"name":"a","annotations":{"example.com/stash":"old"}}`),
			wantMeta: `{"annotations":{"example.com/stash":"new"},"name":"a"}`},
		{name: "a result without metadata",
			conv:     apartFake{key: key, value: "s", shape: func(out map[string]any) { delete(out, "metadata") }},
			object:   object(""),
			wantMeta: `{"annotations":{"example.com/stash":"s"}}`},
		{name: "annotations of strings",
			conv:     apartFake{key: key, value: "s", shape: setMeta(map[string]any{"name": "a", "annotations": map[string]string{"b": "2"}})},
			object:   object(`{"name":"a"}`),
			wantMeta: `{"annotations":{"b":"2","example.com/stash":"s"},"name":"a"}`},
		{name: "null annotations",
			conv:     apartFake{key: key, value: "s", shape: setMeta(map[string]any{"name": "a", "annotations": nil})},
			object:   object(`{"name":"a"}`),
			wantMeta: `{"annotations":{"example.com/stash":"s"},"name":"a"}`},
		{name: "no value: no annotation",
			conv:     apartFake{key: key},
			object:   object(`{"name":"a"}`),
			wantMeta: `{"name":"a"}`},
		{name: "no key: Convert",
			conv:     apartFake{value: "s"},
			object:   object(`{"name":"a"}`),
			wantMeta: `{"annotations":{"from":"convert"},"name":"a"}`},
		{name: "an invalid key: Convert, checked",
			conv:    apartFake{key: "not/a/key", value: "s"},
			object:  object(`{"name":"a"}`),
			wantErr: `metadata.annotations: Invalid value: "not/a/key"`},
		{name: "annotations over the API server's total",
			conv:    apartFake{key: key, value: strings.Repeat("s", 100<<10)},
			object:  object(`{"name":"a","annotations":{"big":"` + strings.Repeat("b", 160<<10) + `"}}`),
			wantErr: "metadata.annotations: Too long: may not be more than 262144 bytes"},
		{name: "the apart value replaces the object's own in the total",
			conv:     apartFake{key: key, value: "small"},
			object:   object(`{"name":"a","annotations":{"example.com/stash":"` + strings.Repeat("s", 200<<10) + `","big":"` + strings.Repeat("b", 100<<10) + `"}}`),
			wantMeta: `{"annotations":{"big":"` + strings.Repeat("b", 100<<10) + `","example.com/stash":"small"},"name":"a"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := NewConvertHandler(tc.conv, ConvertOptions{})
			body := []byte(`{"apiVersion":"` + ReviewV1 + `","kind":"ConversionReview","request":{"uid":"u","desiredAPIVersion":"` + group + `/v1","objects":[` + tc.object + `]}}`)
			r := decodeResponse(t, ReviewV1, post(t, h, body))
			if tc.wantErr != "" {
				if r.Status != "Failure" || !strings.Contains(r.Message, tc.wantErr) {
					t.Fatalf("got %s %q, want a failure saying %q", r.Status, r.Message, tc.wantErr)
				}
				return
			}
			if r.Status != "Success" || len(r.Objects) != 1 {
				t.Fatalf("got %s %q with %d objects", r.Status, r.Message, len(r.Objects))
			}
			got, err := jsonval.Append(nil, r.Objects[0]["metadata"])
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.wantMeta {
				t.Fatalf("metadata\n got %.300s\nwant %.300s", got, tc.wantMeta)
			}
		})
	}
}

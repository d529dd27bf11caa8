package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/orkspace/orkestra-cel/engine"
	engineconversion "github.com/orkspace/orkestra-cel/engine/conversion"
	"github.com/orkspace/orkestra-cel/engine/jsonval"
	"github.com/orkspace/orkestra-cel/objgen"
)

// wholeMetadata hides a converter's MetadataReader: the handler decodes,
// checks and encodes every object whole, as it does for any converter.
type wholeMetadata struct{ c *engineconversion.Converter }

func (w wholeMetadata) Convert(obj *unstructured.Unstructured, desired string) (*unstructured.Unstructured, error) {
	return w.c.Convert(obj, desired)
}

func (w wholeMetadata) Handles(gk schema.GroupKind) bool { return w.c.Handles(gk) }

// wholeApart decodes every object whole too, but takes the stash apart
// (AnnotatingConverter): what it returns is written as the object is
// encoded.
type wholeApart struct{ wholeMetadata }

func (w wholeApart) ApartAnnotation() string { return w.c.ApartAnnotation() }

func (w wholeApart) ConvertApart(obj *unstructured.Unstructured, desired string) (*unstructured.Unstructured, string, error) {
	return w.c.ConvertApart(obj, desired)
}

// partialCorpus is every katalog with conversions in the repository (the
// webhook's, the conversion engine's fixtures and cookbook, the examples,
// conformance's fixtures — one with a path that may fail)
// and, when the directory exists, the peer strategies' katalogs and
// documented inputs (ORKESTRA_PEER_STRATEGIES, default
// /work/shared/peer-strategies: reference data read in place).
func partialCorpus(t *testing.T) (katalogs []string, inputs map[string][]string) {
	inputs = map[string][]string{}
	for _, pattern := range []string{"testdata/*/katalog.yaml", "../engine/conversion/testdata/*/katalog.yaml",
		"../engine/conversion/testdata/cookbook/*/katalog.yaml", "../examples/*/katalog.yaml", "../conformance/testdata/*/katalog.yaml"} {
		found, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range found {
			katalogs = append(katalogs, k)
			if cases := filepath.Join(filepath.Dir(k), "cases.yaml"); fileExists(cases) {
				inputs[k] = append(inputs[k], cases)
			}
		}
	}
	peers := os.Getenv("ORKESTRA_PEER_STRATEGIES")
	if peers == "" {
		peers = "/work/shared/peer-strategies"
	}
	found, _ := filepath.Glob(filepath.Join(peers, "*/katalog.yaml"))
	for _, k := range found {
		katalogs = append(katalogs, k)
		in, _ := filepath.Glob(filepath.Join(filepath.Dir(k), "cases/*-in.yaml"))
		inputs[k] = append(inputs[k], in...)
	}
	return katalogs, inputs
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// apiServerMetadata gives an object the metadata the API server sends with
// it: what no conversion reads, and a label and an annotation beside the
// object's own.
func apiServerMetadata(obj map[string]any, i int) {
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	meta["uid"] = fmt.Sprintf("4f6c2a0e-8b1d-4e7a-9c3f-%012d", i)
	meta["resourceVersion"] = fmt.Sprint(7000 + i)
	meta["generation"] = int64(1 + i%4)
	meta["creationTimestamp"] = "2026-05-04T03:02:01Z"
	meta["finalizers"] = []any{"example.com/cleanup"}
	meta["managedFields"] = []any{map[string]any{
		"apiVersion": obj["apiVersion"], "fieldsType": "FieldsV1", "manager": "kubectl", "operation": "Apply",
		"time": "2026-05-04T03:02:01Z", "fieldsV1": map[string]any{"f:spec": map[string]any{".": map[string]any{}}},
	}}
	labels, _ := meta["labels"].(map[string]any)
	labels = copyMap(labels)
	labels["team"] = "storefront"
	meta["labels"] = labels
	annotations, _ := meta["annotations"].(map[string]any)
	annotations = copyMap(annotations)
	annotations["kubectl.kubernetes.io/last-applied-configuration"] = `{"note":"a & b <c>"}`
	meta["annotations"] = annotations
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// objectsOf are the objects a katalog's conversions are compared on: its
// documented inputs and objects generated from each served version's
// schema, with the API server's metadata.
func objectsOf(t *testing.T, plan *engine.Plan, inputFiles []string) []map[string]any {
	var objs []map[string]any
	for _, f := range inputFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---") {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if m["apiVersion"] != nil {
				objs = append(objs, m)
			}
		}
	}
	gks := make([]schema.GroupKind, 0, len(plan.Conversions))
	for gk := range plan.Conversions {
		gks = append(gks, gk)
	}
	sort.Slice(gks, func(i, j int) bool { return gks[i].String() < gks[j].String() })
	for _, gk := range gks {
		conv := plan.Conversions[gk]
		for _, v := range conv.Versions {
			gvk := gk.WithVersion(v)
			generated, err := objgen.TryGenerate(conv.Schemas[v], gvk, 12, objgen.Options{Seed: 29})
			if err != nil {
				t.Fatalf("generating %s: %v", gvk, err)
			}
			objs = append(objs, generated...)
		}
	}
	for i, o := range objs {
		// YAML decodes integers as int64 and floats as float64 already;
		// a round trip through jsonval makes them what a review decodes.
		b, err := jsonval.Append(nil, o)
		if err != nil {
			t.Fatal(err)
		}
		v, err := jsonval.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		objs[i] = v.(map[string]any)
		apiServerMetadata(objs[i], i)
	}
	return objs
}

// canonicalReview is a review whose objects are encoded as the handler
// encodes (keys sorted, no HTML escaping): a member copied from the request
// is then byte for byte what encoding the decoded member writes.
func canonicalReview(t *testing.T, desired string, objs ...map[string]any) []byte {
	list := make([]any, len(objs))
	for i, o := range objs {
		list[i] = o
	}
	b, err := jsonval.Append(nil, map[string]any{
		"apiVersion": ReviewV1, "kind": "ConversionReview",
		"request": map[string]any{"uid": "partial", "desiredAPIVersion": desired, "objects": list},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func post(t *testing.T, h http.Handler, body []byte) []byte {
	req := httptest.NewRequest(http.MethodPost, "/convert", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("HTTP %d: %s", rec.Code, rec.Body.Bytes())
	}
	return rec.Body.Bytes()
}

// The handler converts alike whether it decodes an object's metadata whole
// or only the keys the converter reads: over every katalog of the
// repository (and the peer strategies' when present), on documented and
// generated objects carrying the API server's metadata, to every served
// version and back again (the stash then rides along), the responses are
// the same bytes — failures with the same message; so are those of a
// handler that decodes it whole but takes the stash annotation apart
// (apart.go), against Convert's objects. With the request's
// objects indented (members copied as sent, spaces and all) they decode
// to the same objects.
func TestPartialMetadataConvertsAlike(t *testing.T) {
	katalogs, inputs := partialCorpus(t)
	compared, partial, failed := 0, 0, 0
	for _, path := range katalogs {
		plan := compilePlan(t, path)
		if len(plan.Conversions) == 0 {
			continue
		}
		t.Run(path, func(t *testing.T) {
			conv := engineconversion.New(plan, engineconversion.Options{})
			fast := NewConvertHandler(conv, ConvertOptions{Served: plan.Served()})
			whole := NewConvertHandler(wholeMetadata{conv}, ConvertOptions{Served: plan.Served()})
			apartOnly := NewConvertHandler(wholeApart{wholeMetadata{conv}}, ConvertOptions{Served: plan.Served()})
			for i, obj := range objectsOf(t, plan, inputs[path]) {
				u := unstructured.Unstructured{Object: obj}
				gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
				if err != nil {
					t.Fatal(err)
				}
				gk := schema.GroupKind{Group: gv.Group, Kind: u.GetKind()}
				if _, all := conv.MetadataKeys(gk); !all {
					partial++
				}
				for _, to := range plan.Conversions[gk].Versions {
					desired := gv.Group + "/" + to
					body := canonicalReview(t, desired, obj)
					got, want := post(t, fast, body), post(t, whole, body)
					compared++
					if !bytes.Equal(got, want) {
						t.Fatalf("object %d to %s: decoding only the metadata read gives\n%s\ndecoding it whole\n%s", i, to, got, want)
					}
					r := decodeResponse(t, ReviewV1, got)
					if r.Status != "Success" {
						failed++
						continue
					}
					back := canonicalReview(t, u.GetAPIVersion(), r.Objects[0])
					if got, want := post(t, fast, back), post(t, whole, back); !bytes.Equal(got, want) {
						t.Fatalf("object %d back from %s: decoding only the metadata read gives\n%s\ndecoding it whole\n%s", i, to, got, want)
					}
					for _, b := range [][]byte{body, back} {
						if got, want := post(t, apartOnly, b), post(t, whole, b); !bytes.Equal(got, want) {
							t.Fatalf("object %d, %s: the stash written apart gives\n%s\nConvert's object\n%s", i, b, got, want)
						}
					}
					indented, err := json.MarshalIndent(map[string]any{"apiVersion": ReviewV1, "kind": "ConversionReview",
						"request": map[string]any{"uid": "partial", "desiredAPIVersion": desired, "objects": []any{obj}}}, "", "  ")
					if err != nil {
						t.Fatal(err)
					}
					a, b := decodeResponse(t, ReviewV1, post(t, fast, indented)), decodeResponse(t, ReviewV1, post(t, whole, indented))
					if !reflect.DeepEqual(a.Objects, b.Objects) || a.Message != b.Message {
						t.Fatalf("object %d to %s, indented: decoding only the metadata read gives\n%v\ndecoding it whole\n%v", i, to, a, b)
					}
				}
			}
		})
	}
	t.Logf("%d katalogs, %d conversions compared (%d failed alike), %d of objects whose metadata was partly decoded", len(katalogs), compared, failed, partial)
	if partial == 0 || failed == 0 {
		t.Fatal("no object had its metadata partly decoded, or none failed to convert: the corpus no longer covers what it must")
	}
}

// Where an object's members come in another order, repeat, or carry a stash
// an earlier katalog wrote (one that held labels, which the website
// katalog's paths do not map, and a guard reading metadata.uid), the
// handler converts exactly as it does decoding the metadata whole.
func TestPartialMetadataUnusualObjects(t *testing.T) {
	plan := compilePlan(t, websiteKatalog)
	conv := engineconversion.New(plan, engineconversion.Options{})
	if keys, all := conv.MetadataKeys(schema.GroupKind{Group: group, Kind: "Website"}); all || len(keys) != 0 {
		t.Fatalf("the website katalog's conversions read metadata keys %v (all: %v), want none", keys, all)
	}
	fast := NewConvertHandler(conv, ConvertOptions{Served: plan.Served()})
	whole := NewConvertHandler(wholeMetadata{conv}, ConvertOptions{Served: plan.Served()})
	meta := `{"name":"a","namespace":"default","uid":"u-1","labels":{"team":"storefront"},"uid":"u-2"` +
		`,"annotations":{"note":"n"},"resourceVersion":"7","labels":{"team":"shop","tier":"gold"}}`
	stash := func(s string) string {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return `{"name":"s","namespace":"default","uid":"u-3","labels":{"team":"storefront"},"annotations":{` +
			`"` + engineconversion.StashAnnotation + `":` + string(b) + `}}`
	}
	for name, c := range map[string]struct{ desired, object string }{
		"metadata first": {group + "/v1",
			`{"metadata":` + meta + `,"spec":{"image":"nginx","theme":"dark"},"kind":"Website","apiVersion":"` + group + `/v1alpha1"}`},
		"kind after metadata": {group + "/v1",
			`{"apiVersion":"` + group + `/v1alpha1","metadata":` + meta + `,"kind":"Website","spec":{"image":"nginx"}}`},
		"metadata repeated": {group + "/v1",
			`{"apiVersion":"` + group + `/v1alpha1","kind":"Website","metadata":{"name":"x","uid":"old"},"metadata":` + meta + `,"spec":{"image":"nginx"}}`},
		"metadata repeated, not an object last": {group + "/v1",
			`{"apiVersion":"` + group + `/v1alpha1","kind":"Website","metadata":` + meta + `,"metadata":null,"spec":{"image":"nginx"}}`},
		"a stash holding labels": {group + "/v1alpha1",
			`{"apiVersion":"` + group + `/v1","kind":"Website","metadata":` + stash(`{"v1alpha1":{"set":{"metadata":{"labels":{"team":"web"}},"spec":{"theme":"dark"}}}}`) + `,"spec":{"image":"nginx"}}`},
		"a stash guarded by the uid": {group + "/v1alpha1",
			`{"apiVersion":"` + group + `/v1","kind":"Website","metadata":` + stash(`{"v1alpha1":{"if":[{"at":["spec","image"],"read":[[["metadata","uid"],"u-3"]]}],"set":{"spec":{"image":"httpd"}},"via":"v1"}}`) + `,"spec":{"image":"nginx"}}`},
		"a stash spelling metadata with an escape": {group + "/v1alpha1",
			`{"apiVersion":"` + group + `/v1","kind":"Website","metadata":` + stash(`{"v1alpha1":{"set":{"m\u0065tadata":{"labels":{"team":"web"}}}}}`) + `,"spec":{"image":"nginx"}}`},
	} {
		t.Run(name, func(t *testing.T) {
			body := []byte(`{"apiVersion":"` + ReviewV1 + `","kind":"ConversionReview","request":{"uid":"u","desiredAPIVersion":"` + c.desired + `","objects":[` + c.object + `]}}`)
			got, want := post(t, fast, body), post(t, whole, body)
			a, b := decodeResponse(t, ReviewV1, got), decodeResponse(t, ReviewV1, want)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("decoding only the metadata read gives\n%s\ndecoding it whole\n%s", got, want)
			}
			if a.Status != "Success" {
				t.Fatalf("the conversion failed: %s", a.Message)
			}
		})
	}
}

// metaWriter is a MetadataReader that reads no metadata key but writes
// one anyway, as spec.image says.
type metaWriter struct{}

func (metaWriter) MetadataKeys(schema.GroupKind) ([]string, bool)   { return nil, false }
func (metaWriter) NeedsAllMetadata(*unstructured.Unstructured) bool { return false }

func (metaWriter) Convert(obj *unstructured.Unstructured, desired string) (*unstructured.Unstructured, error) {
	out := copyMap(obj.Object)
	out["apiVersion"] = desired
	meta := copyMap(out["metadata"].(map[string]any))
	switch obj.Object["spec"].(map[string]any)["image"] {
	case "uid":
		meta["uid"] = "forged"
	case "labels":
		meta["labels"] = map[string]any{"team": "forged"}
	case "drop":
		delete(out, "metadata")
		return &unstructured.Unstructured{Object: out}, nil
	}
	out["metadata"] = meta
	return &unstructured.Unstructured{Object: out}, nil
}

// A converter that writes metadata it said it does not read fails the
// object, naming the field: the handler never sends both its value and the
// request's.
func TestPartialMetadataWrittenFails(t *testing.T) {
	h := NewConvertHandler(metaWriter{}, ConvertOptions{})
	for image, want := range map[string]string{
		"uid":    `the converter changed metadata.uid from "uid-a" to "forged"`,
		"labels": "the converter wrote metadata.labels, which it does not list among the metadata keys it reads (MetadataKeys)",
		"drop":   "the converter removed metadata.",
	} {
		r := decodeResponse(t, ReviewV1, post(t, h, review(t, ReviewV1, "u", group+"/v1", website("v1alpha1", "a", image))))
		if r.Status != "Failure" || len(r.Objects) != 0 || !strings.Contains(r.Message, want) {
			t.Errorf("spec.image %s: %s %q, want a failure saying %q", image, r.Status, r.Message, want)
		}
	}
	r := decodeResponse(t, ReviewV1, post(t, h, review(t, ReviewV1, "u", group+"/v1", website("v1alpha1", "a", "nginx"))))
	if r.Status != "Success" || r.Objects[0]["metadata"].(map[string]any)["uid"] != "uid-a" {
		t.Errorf("a converter that writes no metadata: %s %q %v", r.Status, r.Message, r.Objects)
	}
}

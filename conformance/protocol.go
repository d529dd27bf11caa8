package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/orkspace/orkestra-cel/engine/conversion"
	"github.com/orkspace/orkestra-cel/engine/jsonval"
	"github.com/orkspace/orkestra-cel/webhook"
)

// reviewVersions are the ConversionReview versions the API server speaks.
var reviewVersions = []string{webhook.ReviewV1, webhook.ReviewV1beta1}

func shortReview(rv string) string { return strings.TrimPrefix(rv, "apiextensions.k8s.io/") }

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// protocolChecks drive the real /convert handler in process.
func (r *runner) protocolChecks() {
	h := webhook.NewConvertHandler(r.conv, webhook.ConvertOptions{Served: r.plan.Served()})
	for _, ci := range r.crds {
		if ci.conv == nil && len(ci.versions) > 1 {
			continue // the reachable check failed already
		}
		for _, rv := range reviewVersions {
			r.reviewCheck(h, ci, rv)
			r.failureCheck(h, ci, rv)
		}
	}
	r.guardCheck()
	r.malformedCheck(h)
}

// reviewObjects are up to three objects per served version with the
// metadata the API server sends (uid, resourceVersion, generation,
// creationTimestamp, managedFields). Objects the offline converter fails on
// are passed over: the static and round-trip checks report them, and here
// they would hide whether the handler keeps the protocol.
func (r *runner) reviewObjects(ci *crdInfo) []map[string]any {
	var out []map[string]any
	for vi, v := range ci.versions {
		var objs []map[string]any
		for _, o := range append(append([]map[string]any(nil), ci.samples[v]...), ci.pool[v]...) {
			if len(objs) < 3 && r.convertsEverywhere(ci, o) {
				objs = append(objs, o)
			}
		}
		for i := range objs {
			o := deepCopyMap(objs[i])
			meta, _ := o["metadata"].(map[string]any)
			if meta == nil {
				meta = map[string]any{}
				o["metadata"] = meta
			}
			meta["name"] = fmt.Sprintf("review-%s-%d", v, i)
			meta["uid"] = fmt.Sprintf("00000000-0000-4000-8000-%012d", vi*100+i)
			meta["resourceVersion"] = fmt.Sprint(1000 + vi*100 + i)
			meta["generation"] = int64(1 + i)
			meta["creationTimestamp"] = "2026-01-02T03:04:05Z"
			meta["managedFields"] = []any{map[string]any{
				"manager": "conformance", "operation": "Update", "apiVersion": ci.gv(v),
				"time": "2026-01-02T03:04:05Z", "fieldsType": "FieldsV1",
				"fieldsV1": map[string]any{"f:metadata": map[string]any{"f:labels": map[string]any{}}},
			}}
			out = append(out, o)
		}
	}
	return out
}

// convertsEverywhere reports whether the offline converter converts o to
// every served version.
func (r *runner) convertsEverywhere(ci *crdInfo, o map[string]any) bool {
	for _, v := range ci.versions {
		if _, err := r.to(ci, o, v); err != nil {
			return false
		}
	}
	return true
}

// serve posts body to h and decodes the JSON answer.
func serve(h http.Handler, method, contentType string, body []byte) (int, map[string]any, string) {
	req := httptest.NewRequest(method, "/convert", bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var m map[string]any
	_ = utiljson.Unmarshal(rec.Body.Bytes(), &m)
	return rec.Code, m, rec.Body.String()
}

func review(rv, uid, desired string, objs []map[string]any) []byte {
	list := make([]any, len(objs))
	for i, o := range objs {
		list[i] = o
	}
	b, _ := json.Marshal(map[string]any{
		"apiVersion": rv, "kind": "ConversionReview",
		"request": map[string]any{"uid": uid, "desiredAPIVersion": desired, "objects": list},
	})
	return b
}

// reviewCheck sends, for every desired version, one review holding objects
// of every served version and checks the answer against the protocol and
// the offline converter.
func (r *runner) reviewCheck(h http.Handler, ci *crdInfo, rv string) {
	c := r.begin(GroupProtocol, fmt.Sprintf("%s review %s", ci.name, shortReview(rv)))
	defer r.end(c)
	objs := r.reviewObjects(ci)
	if len(objs) == 0 {
		c.failf("no objects to send: set a count or add sample objects")
		return
	}
	for _, d := range ci.versions {
		desired := ci.gv(d)
		uid := "review-" + shortReview(rv) + "-" + d
		code, resp, raw := serve(h, http.MethodPost, "application/json", review(rv, uid, desired, objs))
		if f := checkReviewEnvelope(code, resp, raw, rv, uid); f != nil {
			c.fail(*f)
			continue
		}
		response := resp["response"].(map[string]any)
		result, _ := response["result"].(map[string]any)
		if st, _ := result["status"].(string); st != "Success" {
			c.failf("desired %s: result.status is %q, want Success (message: %v)", desired, st, result["message"])
			continue
		}
		converted, _ := response["convertedObjects"].([]any)
		if len(converted) != len(objs) {
			c.failf("desired %s: %d objects sent, %d returned; the count must be kept", desired, len(objs), len(converted))
			continue
		}
		var problems []Failure
		for i, o := range objs {
			got, _ := converted[i].(map[string]any)
			if f := checkConverted(r, o, got, desired, i); f != nil {
				problems = append(problems, *f)
			}
		}
		if len(problems) > 0 {
			f := problems[0]
			if len(problems) > 1 {
				f.Message += fmt.Sprintf(" (and %d more objects)", len(problems)-1)
			}
			c.fail(f)
			continue
		}
		c.pass()
	}
	c.Note = fmt.Sprintf("%d reviews of %d objects of mixed versions (%s)", c.Cases, len(objs), strings.Join(ci.versions, ", "))
}

// checkReviewEnvelope checks what every answer must have: HTTP 200, a
// ConversionReview of the request's version, the request's uid.
func checkReviewEnvelope(code int, resp map[string]any, raw, rv, uid string) *Failure {
	switch {
	case code != http.StatusOK:
		return &Failure{Message: fmt.Sprintf("HTTP %d, want 200: %.200s", code, raw)}
	case resp == nil:
		return &Failure{Message: fmt.Sprintf("the answer is not JSON: %.200s", raw)}
	case resp["apiVersion"] != rv:
		return &Failure{Field: "apiVersion", Message: fmt.Sprintf("the answer's apiVersion is %v, want the request's %s", resp["apiVersion"], rv)}
	case resp["kind"] != "ConversionReview":
		return &Failure{Field: "kind", Message: fmt.Sprintf("the answer's kind is %v, want ConversionReview", resp["kind"])}
	}
	response, ok := resp["response"].(map[string]any)
	if !ok {
		return &Failure{Field: "response", Message: "the answer has no response"}
	}
	if response["uid"] != uid {
		return &Failure{Field: "response.uid", Message: fmt.Sprintf("response.uid is %v, want the request's %q", response["uid"], uid)}
	}
	return nil
}

// checkConverted checks one converted object against its original.
func checkConverted(r *runner, orig, got map[string]any, desired string, i int) *Failure {
	fail := func(field, format string, args ...any) *Failure {
		return &Failure{Field: field, Object: orig, Message: fmt.Sprintf("objects[%d] (%s) to %s: ", i, objName(orig), desired) + fmt.Sprintf(format, args...)}
	}
	if got == nil {
		return fail("", "the converted object is not an object")
	}
	if got["apiVersion"] != desired {
		return fail("apiVersion", "apiVersion is %v, want %s", got["apiVersion"], desired)
	}
	if got["kind"] != orig["kind"] {
		return fail("kind", "kind changed from %v to %v", orig["kind"], got["kind"])
	}
	om, _ := orig["metadata"].(map[string]any)
	gm, _ := got["metadata"].(map[string]any)
	for _, k := range []string{"name", "namespace", "uid"} {
		if !jsonval.Equal(om[k], gm[k]) {
			return fail("metadata."+k, "metadata.%s changed from %v to %v (order kept? the API server matches objects by position)", k, om[k], gm[k])
		}
	}
	keys := map[string]bool{}
	for k := range om {
		keys[k] = true
	}
	for k := range gm {
		keys[k] = true
	}
	for k := range keys {
		if k == "labels" || k == "annotations" {
			continue
		}
		ov, ho := om[k]
		gv, hg := gm[k]
		if ho != hg || !jsonval.Equal(ov, gv) {
			return fail("metadata."+k, "metadata.%s changed (%s → %s); only labels and annotations may change", k, brief(ov), brief(gv))
		}
	}
	// The same as the offline converter, byte for byte in meaning.
	want := orig
	if orig["apiVersion"] != desired {
		u, err := r.conv.Convert(&unstructured.Unstructured{Object: deepCopyMap(orig)}, desired)
		if err != nil {
			return fail("", "the webhook converted an object the offline converter fails on: %v", err)
		}
		want = u.Object
	}
	if ds := diff(got, want); len(ds) > 0 {
		return fail(ds[0].path, "differs from the offline conversion: %s", describeDiffs(ds))
	}
	return nil
}

// failureCheck sends reviews with one object that cannot convert and
// expects a Failure naming it, and no converted objects.
func (r *runner) failureCheck(h http.Handler, ci *crdInfo, rv string) {
	c := r.begin(GroupProtocol, fmt.Sprintf("%s failure %s", ci.name, shortReview(rv)))
	defer r.end(c)
	objs := r.reviewObjects(ci)
	if len(objs) == 0 {
		c.failf("no objects to send")
		return
	}
	good := objs[0]
	src := versionOf(good)
	desired := ci.gv(src)
	for _, v := range ci.versions {
		if v != src {
			desired = ci.gv(v)
			break
		}
	}
	type bad struct {
		what string
		obj  map[string]any
	}
	var cases []bad
	if desired != good["apiVersion"] {
		o := deepCopyMap(good)
		setNested(o, "failing-stash", "metadata", "name")
		setNested(o, "{not json", "metadata", "annotations", conversion.StashAnnotation)
		cases = append(cases, bad{"an object the converter fails on (a corrupt " + conversion.StashAnnotation + " annotation)", o})
	}
	o := deepCopyMap(good)
	setNested(o, "failing-version", "metadata", "name")
	o["apiVersion"] = ci.gv("vnotserved1")
	cases = append(cases, bad{"an object of a version the CRD does not serve", o})
	o = deepCopyMap(good)
	setNested(o, "failing-kind", "metadata", "name")
	o["kind"] = ci.gk.Kind + "Unknown"
	if o["apiVersion"] == desired {
		// The API server sends only objects that need converting.
		o["apiVersion"] = ci.gv("vnotserved2")
	}
	cases = append(cases, bad{"an object of a kind the katalog does not serve", o})

	// The good object alone must convert, or failures cannot be told apart.
	if _, resp, raw := serve(h, http.MethodPost, "application/json", review(rv, "failure-good", desired, []map[string]any{good})); resp == nil ||
		resp["response"] == nil || resp["response"].(map[string]any)["result"].(map[string]any)["status"] != "Success" {
		c.failf("cannot check how failures are reported: %s itself does not convert to %s: %.300s", objName(good), desired, raw)
		return
	}
	for i, b := range cases {
		uid := fmt.Sprintf("failure-%s-%d", shortReview(rv), i)
		name := nestedString(b.obj, "metadata", "name")
		code, resp, raw := serve(h, http.MethodPost, "application/json", review(rv, uid, desired, []map[string]any{good, b.obj}))
		if f := checkReviewEnvelope(code, resp, raw, rv, uid); f != nil {
			f.Message = b.what + ": " + f.Message
			c.fail(*f)
			continue
		}
		response := resp["response"].(map[string]any)
		result, _ := response["result"].(map[string]any)
		st, _ := result["status"].(string)
		msg, _ := result["message"].(string)
		objsBack, _ := response["convertedObjects"].([]any)
		switch {
		case st != "Failure":
			c.failf("%s: result.status is %q, want Failure", b.what, st)
		case msg == "":
			c.failf("%s: the Failure has no message", b.what)
		case !strings.Contains(msg, name):
			c.failf("%s: the message does not name the object %q: %s", b.what, name, msg)
		case len(objsBack) != 0:
			c.failf("%s: a Failure returned %d converted objects; a failed review carries none", b.what, len(objsBack))
		default:
			c.pass()
		}
	}
	c.Note = fmt.Sprintf("%d failing reviews to %s", c.Cases, desired)
}

// metaBreaker is a converter that converts correctly, then breaks the
// metadata rule one way: the handler must catch it.
type metaBreaker struct {
	what   string
	mutate func(map[string]any)
}

func (m metaBreaker) Convert(obj *unstructured.Unstructured, desired string) (*unstructured.Unstructured, error) {
	out := obj.DeepCopy()
	out.SetAPIVersion(desired)
	m.mutate(out.Object)
	return out, nil
}

// guardCheck checks the handler's metadata guard with converters that
// break the rules the API server enforces on a webhook's answer.
func (r *runner) guardCheck() {
	c := r.begin(GroupProtocol, "metadata guard")
	defer r.end(c)
	breakers := []metaBreaker{
		{"changes metadata.uid", func(o map[string]any) { setNested(o, "ffffffff-0000-4000-8000-000000000000", "metadata", "uid") }},
		{"changes metadata.name", func(o map[string]any) { setNested(o, "renamed", "metadata", "name") }},
		{"changes metadata.namespace", func(o map[string]any) { setNested(o, "elsewhere", "metadata", "namespace") }},
		{"adds metadata.finalizers", func(o map[string]any) { setNested(o, []any{"x.io/f"}, "metadata", "finalizers") }},
		{"changes kind", func(o map[string]any) { o["kind"] = "Other" }},
		{"sets an invalid label", func(o map[string]any) { setNested(o, "not a valid value!", "metadata", "labels", "bad") }},
		{"sets a non-string annotation", func(o map[string]any) { setNested(o, int64(3), "metadata", "annotations", "n") }},
	}
	obj := map[string]any{
		"apiVersion": "guard.conformance.orkestra.io/v1", "kind": "Guarded",
		"metadata": map[string]any{"name": "guarded", "namespace": "default", "uid": "00000000-0000-4000-8000-000000000001"},
		"spec":     map[string]any{"x": "y"},
	}
	for _, b := range breakers {
		for _, rv := range reviewVersions {
			h := webhook.NewConvertHandler(b, webhook.ConvertOptions{})
			uid := "guard-" + shortReview(rv)
			code, resp, raw := serve(h, http.MethodPost, "application/json", review(rv, uid, "guard.conformance.orkestra.io/v2", []map[string]any{obj}))
			if f := checkReviewEnvelope(code, resp, raw, rv, uid); f != nil {
				f.Message = "a converter that " + b.what + ": " + f.Message
				c.fail(*f)
				continue
			}
			result, _ := resp["response"].(map[string]any)["result"].(map[string]any)
			if st, _ := result["status"].(string); st != "Failure" {
				c.failf("a converter that %s: result.status is %q, want Failure (the API server would reject the answer)", b.what, st)
				continue
			}
			c.pass()
		}
	}
	c.Note = fmt.Sprintf("%d rule-breaking converters rejected", c.Cases)
}

// malformedCheck checks the answers to requests that are not reviews.
func (r *runner) malformedCheck(h http.Handler) {
	c := r.begin(GroupProtocol, "malformed requests")
	defer r.end(c)
	cases := []struct {
		what        string
		method, ct  string
		body        []byte
		wantCode    int
		wantSuccess bool
	}{
		{"GET", http.MethodGet, "application/json", nil, http.StatusMethodNotAllowed, false},
		{"a body that is not JSON", http.MethodPost, "application/json", []byte("{not json"), http.StatusBadRequest, false},
		{"Content-Type text/plain", http.MethodPost, "text/plain", review(webhook.ReviewV1, "x", "a/v1", nil), http.StatusUnsupportedMediaType, false},
		{"a review without request", http.MethodPost, "application/json", []byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}`), http.StatusBadRequest, false},
		{"an unknown review version", http.MethodPost, "application/json", review("apiextensions.k8s.io/v2", "x", "a/v1", nil), http.StatusBadRequest, false},
		{"another kind", http.MethodPost, "application/json", []byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"AdmissionReview","request":{}}`), http.StatusBadRequest, false},
		{"a body over 3 MiB", http.MethodPost, "application/json", append(append([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"`), bytes.Repeat([]byte("x"), webhook.DefaultMaxRequestBytes)...), `"}}`...), http.StatusRequestEntityTooLarge, false},
		{"an empty review", http.MethodPost, "application/json", review(webhook.ReviewV1, "empty", "a.io/v1", nil), http.StatusOK, true},
	}
	for _, tc := range cases {
		code, resp, raw := serve(h, tc.method, tc.ct, tc.body)
		if code != tc.wantCode {
			c.failf("%s: HTTP %d, want %d: %.200s", tc.what, code, tc.wantCode, raw)
			continue
		}
		if tc.wantSuccess {
			response, _ := resp["response"].(map[string]any)
			result, _ := response["result"].(map[string]any)
			objs, _ := response["convertedObjects"].([]any)
			if result["status"] != "Success" || len(objs) != 0 {
				c.failf("%s: want Success with no objects, got %.200s", tc.what, raw)
				continue
			}
		}
		c.pass()
	}
	c.Note = fmt.Sprintf("%d requests", c.Cases)
}

package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// Converter converts one object to desiredAPIVersion (group/version). It is
// implemented by engine/conversion.Converter. It must not change metadata
// other than labels and annotations; the handler checks.
type Converter interface {
	Convert(obj *unstructured.Unstructured, desiredAPIVersion string) (*unstructured.Unstructured, error)
}

// KindHandler is optionally implemented by a Converter that can tell which
// kinds it converts; objects of other kinds fail before conversion.
type KindHandler interface {
	Handles(gk schema.GroupKind) bool
}

// DefaultMaxRequestBytes is the largest ConversionReview body accepted by
// default: 3 MiB, the API server's own request size limit.
const DefaultMaxRequestBytes = 3 << 20

// ConvertOptions configure a ConvertHandler.
type ConvertOptions struct {
	// MaxRequestBytes bounds the request body (default DefaultMaxRequestBytes).
	MaxRequestBytes int64
	// MaxInflightBytes bounds the body bytes held by all requests together
	// (default DefaultMaxInflightBytes()); it must exceed MaxRequestBytes.
	MaxInflightBytes int64
	// BodyTimeout bounds the time from the headers to the body's last byte
	// (default DefaultBodyTimeout).
	BodyTimeout time.Duration
	// Metrics records every converted object; nil records nothing.
	Metrics *Metrics
	// Served lists the kinds and versions the katalog serves. When set,
	// objects of other kinds or versions fail before conversion with a
	// message listing the served ones, and metrics label them "unknown".
	Served []schema.GroupVersionKind
	// KatalogDir, when set, is cut from the katalog file paths in failure
	// messages: the API server passes them on to its clients, who need the
	// file's place in the katalog, not the server's directory layout.
	KatalogDir string
	Log        logr.Logger
}

// ConvertHandler serves POST /convert: ConversionReview apiextensions.k8s.io/v1
// and v1beta1.
//
//   - The response is in the request's review version, with its uid, and the
//     converted objects in request order, each with apiVersion set to the
//     desired one. An object already at the desired version is returned
//     byte for byte.
//   - If any object fails (unknown kind or version, an evaluation error, a
//     converter panic, a change to metadata other than labels and
//     annotations), the review fails: HTTP 200, result.status Failure, a
//     message naming the object, and no converted objects.
//   - A request that is not a ConversionReview gets 400 (malformed JSON, no
//     request, unknown review version), 405 (not POST), 413 (body over
//     MaxRequestBytes) or 415 (Content-Type not application/json).
//   - Memory is bounded by design: a body's buffer grows only as its bytes
//     arrive, charged to a budget shared by all requests (MaxInflightBytes);
//     a request that cannot get its share before BodyTimeout gets 503, one
//     whose body is not complete by then 408.
type ConvertHandler struct {
	conv        Converter
	kinds       KindHandler
	metaReader  MetadataReader
	annotating  AnnotatingConverter // nil: Convert
	apartKey    string
	max         int64
	budget      *budget
	bodyTimeout time.Duration
	metrics     *Metrics
	served      map[schema.GroupKind][]string // nil: not checked
	log         logr.Logger
	failLog     *failureLog
	katalogDir  string // with a trailing separator; "" when not cut
	bufs        sync.Pool
	bodies      bodyPool
}

// NewConvertHandler returns the /convert handler for conv.
func NewConvertHandler(conv Converter, opts ConvertOptions) *ConvertHandler {
	h := &ConvertHandler{conv: conv, max: opts.MaxRequestBytes, bodyTimeout: opts.BodyTimeout, metrics: opts.Metrics, log: opts.Log}
	if h.max <= 0 {
		h.max = DefaultMaxRequestBytes
	}
	inflight := opts.MaxInflightBytes
	if inflight <= 0 {
		inflight = DefaultMaxInflightBytes()
	}
	// A body may take h.max+1 bytes (the byte past the limit detects it).
	h.budget = newBudget(max(inflight, h.max+1))
	if h.bodyTimeout <= 0 {
		h.bodyTimeout = DefaultBodyTimeout
	}
	h.failLog = newFailureLog(h.log)
	if d := filepath.Clean(opts.KatalogDir); opts.KatalogDir != "" && d != "." {
		h.katalogDir = strings.TrimSuffix(d, string(filepath.Separator)) + string(filepath.Separator)
	}
	h.kinds, _ = conv.(KindHandler)
	h.metaReader, _ = conv.(MetadataReader)
	if ac, ok := conv.(AnnotatingConverter); ok && validAnnotationKey(ac.ApartAnnotation()) {
		// An invalid key is left to Convert, whose objects fail naming it.
		h.annotating, h.apartKey = ac, ac.ApartAnnotation()
	}
	if len(opts.Served) > 0 {
		h.served = map[schema.GroupKind][]string{}
		for _, gvk := range opts.Served {
			gk := gvk.GroupKind()
			if !slices.Contains(h.served[gk], gvk.Version) {
				h.served[gk] = append(h.served[gk], gvk.Version)
			}
		}
	}
	h.bufs.New = func() any { return new(buffers) }
	return h
}

// buffers are reused across requests (body buffers have their own pool).
type buffers struct {
	out  []byte
	meta []metaField
	// raw holds the metadata members left undecoded, ranges each object's
	// (partial.go)
	raw    []rawMember
	ranges []rawRange
}

// maxPooledBuffer: buffers above it are left to the garbage collector, so
// that large reviews do not keep their memory after they are answered.
const maxPooledBuffer = 64 << 10

func (h *ConvertHandler) putBuffers(bufs *buffers) {
	if bufs != nil && cap(bufs.out) <= maxPooledBuffer {
		clear(bufs.meta[:cap(bufs.meta)])
		clear(bufs.raw[:cap(bufs.raw)]) // slices of the request body
		h.bufs.Put(bufs)
	}
}

func (h *ConvertHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		httpError(w, http.StatusMethodNotAllowed, "method %s not allowed; /convert takes POST", r.Method)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		httpError(w, http.StatusUnsupportedMediaType, "Content-Type %q not supported; send application/json", r.Header.Get("Content-Type"))
		return
	}
	if r.ContentLength > h.max {
		h.metrics.refuse(RefusedTooLarge)
		httpError(w, http.StatusRequestEntityTooLarge, "request body of %d bytes exceeds the limit of %d bytes", r.ContentLength, h.max)
		return
	}
	start := time.Now()
	deadline := start.Add(h.bodyTimeout)
	ctx, cancel := context.WithDeadline(r.Context(), deadline)
	defer cancel()
	// Not every ResponseWriter supports deadlines (httptest); the server's
	// ReadTimeout then still bounds the body, and the body cannot be evicted.
	rc := http.NewResponseController(w)
	var cut func() bool
	if rc.SetReadDeadline(deadline) == nil {
		cut = func() bool { return rc.SetReadDeadline(start) == nil }
	}
	declared := r.ContentLength
	if declared < 0 {
		declared = h.max
	}
	ch := h.budget.newCharge(start, declared, cut)
	defer ch.release()
	body, err := h.readBody(ctx, ch, http.MaxBytesReader(w, r.Body, h.max))
	defer h.bodies.put(body)
	if err != nil {
		h.bodyFailed(w, r, ch, err)
		return
	}
	bufs := h.bufs.Get().(*buffers)
	defer func() { h.putBuffers(bufs) }()
	var review *apiextensionsv1.ConversionReview
	defer func() {
		// A bug in the handler itself (the converter's panics are caught per
		// object): fail the review rather than drop the connection.
		if r := recover(); r != nil {
			h.log.Error(fmt.Errorf("%v", r), "/convert panicked", "stack", string(debug.Stack()))
			bufs.out = nil
			if review == nil {
				httpError(w, http.StatusInternalServerError, "internal error: %v", r)
				return
			}
			h.writeFailure(w, review, fmt.Sprintf("internal error converting the review: %v", r))
		}
	}()
	var raw []byte
	if body != nil {
		raw = *body
	}
	review, err = decodeReview(raw, &objectDecoder{reader: h.metaReader, bufs: bufs})
	if err != nil {
		httpError(w, http.StatusBadRequest, "%v", err)
		return
	}
	out, failure := h.convertReview(bufs, review)
	if failure != "" {
		h.writeFailure(w, review, failure)
		return
	}
	bufs.out = out
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	_, _ = w.Write(out)
}

// bodyFailed answers a request whose body could not be read whole.
func (h *ConvertHandler) bodyFailed(w http.ResponseWriter, r *http.Request, ch *charge, err error) {
	switch {
	case errors.Is(err, errTooLarge):
		h.metrics.refuse(RefusedTooLarge)
		httpError(w, http.StatusRequestEntityTooLarge, "request body exceeds the limit of %d bytes", h.max)
	case errors.Is(err, errBusy):
		h.metrics.refuse(RefusedBusy)
		w.Header().Set("Retry-After", "1")
		httpError(w, http.StatusServiceUnavailable, "conversion webhook busy: request bodies in flight hold the whole budget of %d bytes (--max-inflight-bytes) for %s; retry", h.budget.size, h.bodyTimeout)
	case errors.Is(err, errPreempted):
		h.metrics.refuse(RefusedPreempted)
		w.Header().Set("Retry-After", "1")
		httpError(w, http.StatusServiceUnavailable, "conversion webhook busy: the request bodies in flight each held part of the budget of %d bytes (--max-inflight-bytes) and waited for more; this one, holding the most, gave its share back; retry", h.budget.size)
	case errors.Is(err, errEvicted):
		h.metrics.refuse(RefusedEvicted)
		httpError(w, http.StatusRequestTimeout, "request body evicted after %s with %d of %d bytes: other reviews waited for the body budget (--max-inflight-bytes) while it paused %s or arrived at less than %d KiB/s; send the body at once",
			time.Since(ch.start).Round(time.Millisecond), ch.received.Load(), r.ContentLength, stallPause, minBodyRate>>10)
	case errors.Is(err, os.ErrDeadlineExceeded):
		h.metrics.refuse(RefusedTimeout)
		httpError(w, http.StatusRequestTimeout, "request body not complete after %s", h.bodyTimeout)
	default:
		httpError(w, http.StatusBadRequest, "reading the request body: %v", err)
	}
}

// writeFailure answers a review with result.status Failure and no objects.
func (h *ConvertHandler) writeFailure(w http.ResponseWriter, review *apiextensionsv1.ConversionReview, message string) {
	if h.katalogDir != "" {
		message = strings.ReplaceAll(message, h.katalogDir, "")
	}
	h.failLog.failed(review.Request.UID, review.Request.DesiredAPIVersion, message)
	resp, err := json.Marshal(failureReview(review.APIVersion, review.Request.UID, message))
	if err != nil { // cannot happen: strings only
		httpError(w, http.StatusInternalServerError, "encoding the response: %v", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(resp)+1))
	_, _ = w.Write(append(resp, '\n'))
}

func httpError(w http.ResponseWriter, code int, format string, args ...any) {
	b, _ := json.Marshal(map[string]string{"error": fmt.Sprintf(format, args...)})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

// convertReview converts every object of the review into bufs.out. It returns
// the response body, or a failure message and no body.
func (h *ConvertHandler) convertReview(bufs *buffers, review *apiextensionsv1.ConversionReview) (out []byte, failure string) {
	req := review.Request
	desired := req.DesiredAPIVersion
	desiredGV, err := schema.ParseGroupVersion(desired)
	if desired == "" || err != nil || desiredGV.Version == "" {
		return nil, fmt.Sprintf("desiredAPIVersion %q is not a valid group/version", desired)
	}
	out = appendResponseHead(bufs.out[:0], review.APIVersion, req.UID)
	c := objectConversion{h: h, bufs: bufs, desired: desired, desiredGV: desiredGV}
	for i := range req.Objects {
		if i > 0 {
			out = append(out, ',')
		}
		if out, err = c.convert(out, i, req.Objects[i].Raw, req.Objects[i].Object); err != nil {
			bufs.out = out[:0]
			return nil, err.Error()
		}
	}
	return appendResponseTail(out), ""
}

// objectConversion converts the objects of one review.
type objectConversion struct {
	h         *ConvertHandler
	bufs      *buffers
	desired   string
	desiredGV schema.GroupVersion
	// the metrics of the previous object, usually the same pair
	lastKey  pairKey
	lastPair *pairMetrics
	// whether the converter handles the previous object's kind, usually
	// this one's
	handledSet bool
	handledGK  schema.GroupKind
	handled    bool
}

// handles reports whether the converter handles gk (KindHandler).
func (c *objectConversion) handles(gk schema.GroupKind) bool {
	if !c.handledSet || gk != c.handledGK {
		c.handledSet, c.handledGK, c.handled = true, gk, c.h.kinds.Handles(gk)
	}
	return c.handled
}

// objectID names an object in messages: Kind namespace/name. It is read
// before conversion, so that a converter changing its input cannot change it.
type objectID struct {
	index          int
	kind, ns, name string
	// raw are the metadata members left undecoded: name and namespace are
	// read from them when a message needs them.
	raw []rawMember
}

func idOf(i int, u *unstructured.Unstructured, raw []rawMember) objectID {
	id := objectID{index: i, raw: raw}
	id.kind, _ = u.Object["kind"].(string)
	meta, _ := u.Object["metadata"].(map[string]any)
	id.name, _ = meta["name"].(string)
	id.ns, _ = meta["namespace"].(string)
	return id
}

// resolved reads name and namespace where they were left undecoded.
func (id objectID) resolved() objectID {
	for _, r := range id.raw {
		v, _ := jsonval.Decode(r.raw)
		switch r.key {
		case "name":
			id.name, _ = v.(string)
		case "namespace":
			id.ns, _ = v.(string)
		}
	}
	id.raw = nil
	return id
}

func (id objectID) String() string {
	id = id.resolved()
	kind := id.kind
	if kind == "" {
		kind = "object"
	}
	switch {
	case id.name == "":
		return fmt.Sprintf("%s objects[%d]", kind, id.index)
	case id.ns == "":
		return kind + " " + id.name
	}
	return kind + " " + id.ns + "/" + id.name
}

func (c *objectConversion) convert(out []byte, i int, raw []byte, obj any) ([]byte, error) {
	u, _ := obj.(*unstructured.Unstructured)
	if u == nil {
		return out, fmt.Errorf("objects[%d] is not a JSON object: %.64s", i, raw)
	}
	rawMeta := c.bufs.ranges[i].members(c.bufs)
	id := idOf(i, u, rawMeta)
	apiVersion, _ := u.Object["apiVersion"].(string)
	kind := id.kind
	if apiVersion == "" || kind == "" {
		return out, fmt.Errorf("%s has no apiVersion or kind", id)
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return out, fmt.Errorf("%s: apiVersion %q is not a valid group/version", id, apiVersion)
	}
	failf := func(format string, args ...any) error {
		return fmt.Errorf("converting %s from %s to %s: %s", id, apiVersion, c.desired, fmt.Sprintf(format, args...))
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: kind}

	// Which kind and versions the katalog serves decides the metric labels.
	key := pairKey{group: gv.Group, kind: kind, from: gv.Version, to: c.desiredGV.Version}
	var unknown error
	if c.h.served != nil {
		versions, ok := c.h.served[gk]
		switch {
		case !ok:
			key = pairKey{kind: UnknownLabel, from: UnknownLabel, to: UnknownLabel}
			unknown = failf("kind %s is not served by this katalog (it serves %s)", gk, c.h.servedKinds())
		case !slices.Contains(versions, gv.Version):
			key.from = UnknownLabel
			unknown = failf("version %s of %s is not served (served: %s)", gv.Version, gk, strings.Join(versions, ", "))
		}
		if !slices.Contains(versions, c.desiredGV.Version) && key.kind != UnknownLabel {
			key.to = UnknownLabel
			if unknown == nil {
				unknown = failf("version %s of %s is not served (served: %s)", c.desiredGV.Version, gk, strings.Join(versions, ", "))
			}
		}
	}
	var pm *pairMetrics
	if m := c.h.metrics; m != nil {
		if c.lastPair != nil && c.lastKey == key {
			pm = c.lastPair
		} else {
			pm = m.pair(key)
			c.lastKey, c.lastPair = key, pm
		}
		pm.active.Inc()
		defer pm.active.Dec()
	}
	start := time.Now()
	out, err = c.convertObject(out, raw, rawMeta, u, id, gv, gk, apiVersion, unknown, failf)
	if pm != nil {
		end := time.Now()
		pm.observe(end, end.Sub(start), err == nil)
	}
	return out, err
}

func (c *objectConversion) convertObject(out []byte, raw []byte, rawMeta []rawMember, u *unstructured.Unstructured, id objectID, gv schema.GroupVersion, gk schema.GroupKind, apiVersion string, unknown error, failf func(string, ...any) error) ([]byte, error) {
	if unknown != nil {
		return out, unknown
	}
	if apiVersion == c.desired {
		return append(out, raw...), nil // same version: unchanged
	}
	if gv.Group != c.desiredGV.Group {
		return out, failf("conversion cannot change the API group")
	}
	if c.h.kinds != nil && !c.handles(gk) {
		return out, failf("no conversion is declared for %s", gk)
	}
	snap := c.snapshot(u)
	res, a, err := c.h.safeConvert(u, c.desired)
	if err != nil && len(rawMeta) > 0 {
		// The converter's message names the object, whose name was left
		// undecoded: the object decoded whole gets the message it would.
		if whole, derr := jsonval.NewDecoder(raw).MapValue(); derr == nil {
			u, rawMeta = &unstructured.Unstructured{Object: whole}, nil
			snap = c.snapshot(u)
			res, a, err = c.h.safeConvert(u, c.desired)
		}
	}
	if err != nil {
		if id := id.resolved(); id.name != "" && strings.Contains(err.Error(), id.String()) {
			return out, err // the converter's message names the object already
		}
		return out, failf("%v", err)
	}
	if res == nil || res.Object == nil {
		return out, failf("the converter returned no object")
	}
	if err := checkRaw(res, rawMeta); err != nil {
		return out, failf("%v", err)
	}
	if a.key != "" && !a.fits(res.Object) {
		a.into(res.Object)
		a = apart{}
	}
	if err := checkResult(snap, res, a); err != nil {
		return out, failf("%v", err)
	}
	res.Object["apiVersion"] = c.desired
	mark := len(out)
	out, err = appendObject(out, res.Object, rawMeta, a)
	if err != nil {
		return out[:mark], failf("encoding the converted object: %v", err)
	}
	return out, nil
}

func (h *ConvertHandler) servedKinds() string {
	var s []string
	for gk, versions := range h.served {
		s = append(s, gk.String()+" "+strings.Join(versions, ", "))
	}
	slices.Sort(s)
	return strings.Join(s, "; ")
}

// safeConvert converts u, and returns the annotation the converter kept
// apart, if any (apart.go).
func (h *ConvertHandler) safeConvert(u *unstructured.Unstructured, desired string) (res *unstructured.Unstructured, a apart, err error) {
	defer func() {
		if r := recover(); r != nil {
			h.log.Error(fmt.Errorf("%v", r), "converter panicked", "stack", string(debug.Stack()))
			res, a, err = nil, apart{}, fmt.Errorf("internal error: the converter panicked: %v", r)
		}
	}()
	if h.annotating == nil {
		res, err = h.conv.Convert(u, desired)
		return res, apart{}, err
	}
	res, a.value, err = h.annotating.ConvertApart(u, desired)
	if a.value != "" {
		a.key = h.apartKey
	}
	return res, a, err
}

// The metadata guard. The API server rejects a converted object whose
// metadata differs from the original anywhere but in labels and annotations;
// the handler checks first, so that the failure names the field. The
// snapshot is taken before conversion, as a deep copy, so that a converter
// that changes its input in place is caught too.

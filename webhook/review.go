package webhook

import (
	"encoding/json"
	"errors"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// ConversionReview API versions this webhook answers.
var (
	ReviewV1      = apiextensionsv1.SchemeGroupVersion.String()      // apiextensions.k8s.io/v1
	ReviewV1beta1 = apiextensionsv1beta1.SchemeGroupVersion.String() // apiextensions.k8s.io/v1beta1
)

const reviewKind = "ConversionReview"

// errBadReview is a request that is not a ConversionReview this webhook can
// answer (HTTP 400).
var errBadReview = errors.New("bad ConversionReview")

// decodeReview decodes a ConversionReview body in one pass. v1 and v1beta1
// reviews have the same JSON shape; the request is decoded into the v1 type
// and the review's apiVersion says which version to answer in. Each object
// is a RawExtension holding both its raw bytes (a slice of body) and, when it
// is a JSON object, the decoded *unstructured.Unstructured; od.bufs.ranges
// holds, per object, the metadata members left raw (partial.go).
func decodeReview(body []byte, od *objectDecoder) (*apiextensionsv1.ConversionReview, error) {
	d := jsonval.NewDecoder(body)
	review := &apiextensionsv1.ConversionReview{}
	requestSeen := false
	err := d.Object(func(key []byte) error {
		switch string(key) {
		case "apiVersion":
			s, err := optString(d)
			review.APIVersion = s
			return err
		case "kind":
			s, err := optString(d)
			review.Kind = s
			return err
		case "request":
			if null, err := d.IsNull(); null || err != nil {
				return err
			}
			requestSeen = true
			review.Request = &apiextensionsv1.ConversionRequest{}
			return decodeRequest(d, review.Request, od)
		default:
			return d.Skip()
		}
	})
	if err == nil {
		err = d.End()
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errBadReview, err)
	}
	switch {
	case review.Kind != reviewKind:
		return nil, fmt.Errorf("%w: kind is %q, expected %s", errBadReview, review.Kind, reviewKind)
	case review.APIVersion != ReviewV1 && review.APIVersion != ReviewV1beta1:
		return nil, fmt.Errorf("%w: unsupported apiVersion %q; this webhook answers %s and %s", errBadReview, review.APIVersion, ReviewV1, ReviewV1beta1)
	case !requestSeen:
		return nil, fmt.Errorf("%w: the review has no request", errBadReview)
	}
	return review, nil
}

func decodeRequest(d *jsonval.Decoder, req *apiextensionsv1.ConversionRequest, od *objectDecoder) error {
	return d.Object(func(key []byte) error {
		switch string(key) {
		case "uid":
			s, err := optString(d)
			req.UID = types.UID(s)
			return err
		case "desiredAPIVersion":
			s, err := optString(d)
			req.DesiredAPIVersion = s
			return err
		case "objects":
			if null, err := d.IsNull(); null || err != nil {
				return err
			}
			req.Objects = make([]runtime.RawExtension, 0, 8)
			od.bufs.ranges, od.bufs.raw = od.bufs.ranges[:0], od.bufs.raw[:0]
			return d.Array(func(int) error {
				start := d.Offset()
				var ext runtime.RawExtension
				var r rawRange
				if d.Peek() == '{' {
					m, rr, err := od.decode(d)
					if err != nil {
						return err
					}
					ext.Object, r = &unstructured.Unstructured{Object: m}, rr
				} else if err := d.Skip(); err != nil {
					return err
				}
				ext.Raw = d.Since(start)
				req.Objects = append(req.Objects, ext)
				od.bufs.ranges = append(od.bufs.ranges, r)
				return nil
			})
		default:
			return d.Skip()
		}
	})
}

// optString decodes a string or null.
func optString(d *jsonval.Decoder) (string, error) {
	switch d.Peek() {
	case '"':
		return d.String()
	case 'n':
		return "", d.Literal("null")
	}
	return "", d.Errorf("expected a string")
}

// Encoding of the response. The success response is assembled in one buffer
// (the converted objects are encoded into it as they are produced) in exactly
// the form encoding/json gives the apiextensions ConversionReview types —
// TestResponseEncodingMatchesTypes holds it to that.

var successStatus = mustMarshal(metav1.Status{Status: metav1.StatusSuccess})

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// appendResponseHead starts a response review up to the first converted object.
func appendResponseHead(b []byte, apiVersion string, uid types.UID) []byte {
	b = append(b, `{"kind":"ConversionReview","apiVersion":`...)
	b = jsonval.AppendString(b, apiVersion)
	b = append(b, `,"response":{"uid":`...)
	b = jsonval.AppendString(b, string(uid))
	return append(b, `,"convertedObjects":[`...)
}

// appendResponseTail closes a successful response review.
func appendResponseTail(b []byte) []byte {
	b = append(b, `],"result":`...)
	b = append(b, successStatus...)
	return append(b, "}}\n"...)
}

// failureReview is the answer when any object fails: no converted objects.
func failureReview(apiVersion string, uid types.UID, message string) any {
	status := metav1.Status{Status: metav1.StatusFailure, Message: message}
	if apiVersion == ReviewV1beta1 {
		return &apiextensionsv1beta1.ConversionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: apiVersion, Kind: reviewKind},
			Response: &apiextensionsv1beta1.ConversionResponse{UID: uid, Result: status},
		}
	}
	return &apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: ReviewV1, Kind: reviewKind},
		Response: &apiextensionsv1.ConversionResponse{UID: uid, Result: status},
	}
}

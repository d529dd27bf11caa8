package webhook

// One annotation kept apart. engine/conversion writes a round-trip
// annotation on every conversion that loses a field; as a map entry it
// costs a copy of the object's metadata map and a new annotations map per
// object, more than the rest of the conversion allocates. Returned apart,
// the handler writes it into the response as it encodes the object.
// TestPartialMetadataConvertsAlike holds the bytes to Convert's, and
// apart_test.go the unusual objects.

import (
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// AnnotatingConverter is optionally implemented by a Converter that can
// return one annotation of the converted object apart from it.
type AnnotatingConverter interface {
	// ApartAnnotation is the annotation's key.
	ApartAnnotation() string
	// ConvertApart is Convert, except that the object returned lacks the
	// annotation and value is what Convert would set it to ("": Convert's
	// object has none). A same-version request may return obj as it is.
	ConvertApart(obj *unstructured.Unstructured, desiredAPIVersion string) (res *unstructured.Unstructured, value string, err error)
}

// validAnnotationKey reports whether the API server accepts key as an
// annotation's.
func validAnnotationKey(key string) bool {
	return key != "" && len(validation.IsQualifiedName(strings.ToLower(key))) == 0
}

// apart is an annotation to add to a converted object; key "" is none.
type apart struct{ key, value string }

// fits reports whether a can be written as the object is encoded: its
// metadata is a map, and its annotations are absent or a map. Otherwise
// it goes into the object's maps (into).
func (a apart) fits(obj map[string]any) bool {
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		return false
	}
	ann, present := meta["annotations"]
	_, isMap := ann.(map[string]any)
	return !present || isMap
}

// into writes a into obj's maps, as Convert would, copying the maps on the
// way: they may be shared with the converter's input. Annotations that are
// neither absent nor a map (null, say) are replaced.
func (a apart) into(obj map[string]any) {
	meta, _ := obj["metadata"].(map[string]any)
	meta = maps.Clone(meta)
	if meta == nil {
		meta = map[string]any{}
	}
	var ann map[string]any
	switch m := meta["annotations"].(type) {
	case map[string]any:
		ann = maps.Clone(m)
	case map[string]string: // a Go converter's, as checkStringMap takes them
		ann = make(map[string]any, len(m)+1)
		for k, v := range m {
			ann[k] = v
		}
	}
	if ann == nil {
		ann = map[string]any{}
	}
	ann[a.key] = a.value
	meta["annotations"], obj["metadata"] = ann, meta
}

// appendAnnotations writes annotations ann with a in place of its own
// entry, keys sorted as jsonval.Append sorts them.
func appendAnnotations(b []byte, ann map[string]any, a apart) ([]byte, error) {
	var arr [16]string
	keys := arr[:0]
	for k := range ann {
		if k != a.key {
			keys = append(keys, k)
		}
	}
	keys = append(keys, a.key)
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonval.AppendString(b, k)
		b = append(b, ':')
		if k == a.key {
			b = jsonval.AppendString(b, a.value)
			continue
		}
		var err error
		if b, err = jsonval.Append(b, ann[k]); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

package webhook

// Metadata a converter does not read stays raw. The API server sends whole
// objects — uid, resourceVersion, timestamps, managedFields — and a
// converter that reads only some metadata keys gets only those decoded; the
// others are copied from the request into the converted object byte for
// byte, never decoded, checked or encoded. BenchmarkConvertReview measures
// it; TestPartialMetadataConvertsAlike holds the result to the whole
// object's.

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// MetadataReader is optionally implemented by a Converter that reads and
// writes only some keys of an object's metadata. The handler then decodes
// only those (and annotations, which it always decodes) and copies the
// other keys of the request's metadata into the converted
// object unchanged; a converter that writes one of them fails the object.
type MetadataReader interface {
	// MetadataKeys lists the metadata keys that converting objects of gk may
	// read or write besides annotations; all is true when it may read any
	// key. A converter whose failure messages name the object need not list
	// name and namespace: an object that fails is converted again, decoded
	// whole, for its message.
	MetadataKeys(gk schema.GroupKind) (keys []string, all bool)
	// NeedsAllMetadata reports whether converting obj, decoded with those
	// keys, may read or write others after all (for what its annotations
	// hold): then the handler decodes the whole metadata.
	NeedsAllMetadata(obj *unstructured.Unstructured) bool
}

// rawMember is a metadata member left undecoded: its key and the JSON of its
// value, a slice of the request body.
type rawMember struct {
	key string
	raw []byte
}

// rawRange is the undecoded members of one object: buffers.raw[from:to].
type rawRange struct{ from, to int }

func (r rawRange) members(bufs *buffers) []rawMember { return bufs.raw[r.from:r.to] }

// alwaysDecoded is the metadata key the handler itself reads: annotations
// are validated where a converter sets one. (Messages name the object: its
// name and namespace are read from the raw members then, objectID.)
func alwaysDecoded(key []byte) bool { return string(key) == "annotations" }

// objectDecoder decodes the objects of one review.
type objectDecoder struct {
	reader MetadataReader
	bufs   *buffers
	// the keys of the last group/kind asked for, usually the next one's
	cached   bool
	last     schema.GroupKind
	lastKeys []string
	lastAll  bool
}

// metaPlan says how to decode an object's metadata.
type metaPlan int

const (
	metaUnknown metaPlan = iota // apiVersion or kind not read (yet)
	metaWhole
	metaPartial
)

// keysFor returns the metadata keys to decode for an object with these
// top-level members (so far).
func (od *objectDecoder) keysFor(m map[string]any) (schema.GroupKind, []string, metaPlan) {
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	if apiVersion == "" || kind == "" {
		return schema.GroupKind{}, nil, metaUnknown
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return schema.GroupKind{}, nil, metaWhole
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: kind}
	if !od.cached || gk != od.last {
		od.cached, od.last = true, gk
		od.lastKeys, od.lastAll = od.reader.MetadataKeys(gk)
	}
	if od.lastAll {
		return gk, nil, metaWhole
	}
	return gk, od.lastKeys, metaPartial
}

// decode decodes one object. Without a MetadataReader it is d.MapValue();
// with one, the metadata members the converter does not read are appended
// to bufs.raw, and their range returned.
func (od *objectDecoder) decode(d *jsonval.Decoder) (map[string]any, rawRange, error) {
	if od.reader == nil {
		m, err := d.MapValue()
		return m, rawRange{}, err
	}
	m := make(map[string]any, 4)
	var (
		metaStart, metaEnd = -1, -1 // the last metadata object's bytes
		decodedAs          metaPlan // how m["metadata"] was decoded
		decodedFor         schema.GroupKind
		r                  rawRange
	)
	err := d.Object(func(key []byte) error {
		k := d.Key(key)
		if k != "metadata" || d.Peek() != '{' {
			if k == "metadata" {
				metaStart, r = -1, rawRange{}
			}
			v, err := d.Value()
			m[k] = v
			return err
		}
		// apiVersion and kind usually come first (the API server sorts the
		// keys): then metadata is decoded in the same pass.
		metaStart = d.Offset()
		gk, keys, plan := od.keysFor(m)
		var err error
		switch plan {
		case metaPartial:
			m[k], r, err = od.decodeMeta(d, keys)
		case metaWhole:
			r = rawRange{}
			m[k], err = d.Value()
		default:
			m[k], r, err = nil, rawRange{}, d.Skip()
		}
		metaEnd, decodedAs, decodedFor = d.Offset(), plan, gk
		return err
	})
	if err != nil || metaStart < 0 {
		return m, rawRange{}, err
	}
	span := d.Bytes(metaStart, metaEnd)
	gk, keys, plan := od.keysFor(m)
	if plan != decodedAs || gk != decodedFor {
		// metadata came before apiVersion or kind (or they were repeated)
		switch plan {
		case metaPartial:
			m["metadata"], r, err = od.decodeMeta(jsonval.NewDecoder(span), keys)
		default:
			r = rawRange{}
			m["metadata"], err = jsonval.NewDecoder(span).Value()
		}
		if err != nil {
			return m, rawRange{}, err
		}
	}
	if r.to > r.from && od.reader.NeedsAllMetadata(&unstructured.Unstructured{Object: m}) {
		m["metadata"], err = jsonval.NewDecoder(span).Value()
		return m, rawRange{}, err
	}
	return m, r, nil
}

// decodeMeta decodes the metadata object at d: the members in keys (and
// those the handler reads) into a map, the others into bufs.raw, each key
// once (a repeated key keeps its last value, as decoding does).
func (od *objectDecoder) decodeMeta(d *jsonval.Decoder, keys []string) (map[string]any, rawRange, error) {
	meta := make(map[string]any, len(keys)+3)
	from := len(od.bufs.raw)
	err := d.Object(func(key []byte) error {
		// A member left undecoded keeps its key as a slice of the body,
		// like its value (the body outlives the review's buffers' use).
		k := d.Alias(key)
		if alwaysDecoded(key) || slices.Contains(keys, k) {
			v, err := d.Value()
			meta[d.Key(key)] = v
			return err
		}
		start := d.Offset()
		if err := d.Skip(); err != nil {
			return err
		}
		raw := d.Since(start)
		for i := from; i < len(od.bufs.raw); i++ {
			if od.bufs.raw[i].key == k {
				od.bufs.raw[i].raw = raw
				return nil
			}
		}
		if len(od.bufs.raw) == cap(od.bufs.raw) {
			// Doubling: append grows a large slice by a quarter, which
			// for a review of thousands of objects allocates the list
			// several times over.
			od.bufs.raw = slices.Grow(od.bufs.raw, max(64, cap(od.bufs.raw)))
		}
		od.bufs.raw = append(od.bufs.raw, rawMember{k, raw})
		return nil
	})
	return meta, rawRange{from, len(od.bufs.raw)}, err
}

// appendObject encodes a converted object whose metadata had raw members
// or gets annotation a: they go in beside the decoded members, keys
// sorted, as jsonval.Append writes the whole object.
func appendObject(b []byte, obj map[string]any, raw []rawMember, a apart) ([]byte, error) {
	if len(raw) == 0 && a.key == "" {
		return jsonval.Append(b, obj)
	}
	var arr [16]member
	members := arr[:0]
	for k, v := range obj {
		m := member{key: k, value: v}
		if k == "metadata" {
			m.as = asMeta // a map: checkRaw and apart.fits saw to it
		}
		members = append(members, m)
	}
	return appendMembers(b, members, raw, a)
}

// member is a member of a converted object: decoded, raw (value is a
// *rawMember), metadata (with raw members and the apart annotation) or
// annotations (with it). Small: the members are sorted by swapping.
type member struct {
	key   string
	value any
	as    memberKind
}

type memberKind uint8

const (
	asValue memberKind = iota
	asRaw
	asMeta
	asAnnotations
)

// appendMembers writes an object of members, sorted by key (insertion sort:
// objects are small, and it does not allocate).
func appendMembers(b []byte, members []member, raw []rawMember, a apart) ([]byte, error) {
	for i := 1; i < len(members); i++ {
		for j := i; j > 0 && members[j].key < members[j-1].key; j-- {
			members[j], members[j-1] = members[j-1], members[j]
		}
	}
	b = append(b, '{')
	for i := range members {
		m := &members[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonval.AppendString(b, m.key)
		b = append(b, ':')
		var err error
		switch m.as {
		case asRaw:
			b = append(b, m.value.(*rawMember).raw...)
		case asMeta:
			b, err = appendMeta(b, m.value.(map[string]any), raw, a)
		case asAnnotations:
			ann, _ := m.value.(map[string]any)
			b, err = appendAnnotations(b, ann, a)
		default:
			b, err = jsonval.Append(b, m.value)
		}
		if err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

func appendMeta(b []byte, meta map[string]any, raw []rawMember, a apart) ([]byte, error) {
	var arr [16]member
	members := arr[:0]
	for k, v := range meta {
		m := member{key: k, value: v}
		if k == "annotations" && a.key != "" {
			m.as = asAnnotations // a map: apart.fits saw to it
		}
		members = append(members, m)
	}
	if _, ok := meta["annotations"]; !ok && a.key != "" {
		members = append(members, member{key: "annotations", as: asAnnotations})
	}
	for i := range raw {
		members = append(members, member{key: raw[i].key, value: &raw[i], as: asRaw})
	}
	return appendMembers(b, members, nil, a)
}

// checkRaw fails a converted object that wrote metadata the handler did not
// decode for it: a raw member it set, or metadata it removed or replaced.
func checkRaw(res *unstructured.Unstructured, raw []rawMember) error {
	if len(raw) == 0 {
		return nil
	}
	meta, isMap := res.Object["metadata"].(map[string]any)
	if !isMap {
		return fmt.Errorf("the converter removed metadata.%s; a conversion may change only metadata.labels and metadata.annotations", raw[0].key)
	}
	for _, r := range raw {
		v, ok := meta[r.key]
		switch {
		case ok && (r.key == "labels" || r.key == "annotations"):
			return fmt.Errorf("the converter wrote metadata.%s, which it does not list among the metadata keys it reads (MetadataKeys)", r.key)
		case ok:
			return fmt.Errorf("the converter changed metadata.%s from %s to %s; a conversion may change only metadata.labels and metadata.annotations", r.key, briefRaw(r.raw), brief(v))
		}
	}
	return nil
}

func briefRaw(b []byte) string {
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}

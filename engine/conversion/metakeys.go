package conversion

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/engine"
)

// What a conversion reads of metadata, worked out once per CRD, lets the
// /convert handler leave the rest undecoded (webhook.MetadataReader): the
// uid, resourceVersion, timestamps and managedFields the API server sends
// with every object are copied into the converted object, not decoded and
// encoded again.

// metaKeys are the metadata keys the conversions of one CRD read or write
// besides annotations (which the handler decodes, and the stash lives in);
// all: any key. Name and namespace are not among them unless an expression
// reads them: messages name the object, but a failed object is converted
// again decoded whole (webhook.MetadataReader).
type metaKeys struct {
	keys []string
	all  bool
}

// conversionMetaKeys finds them: the keys the paths' expressions read, and
// labels where a path maps them. An expression that reads metadata (or the
// whole object) whole, a legacy template (whose reads are not known) or a
// schema that defaults something in metadata reads them all.
func (c *Converter) conversionMetaKeys(conv *engine.Conversion) metaKeys {
	var mk metaKeys
	add := func(k string) {
		if k != "annotations" && !slices.Contains(mk.keys, k) {
			mk.keys = append(mk.keys, k)
		}
	}
	for _, p := range conv.Paths {
		if p.Labels != nil {
			add("labels")
		}
		for _, root := range []*engine.Node{p.Spec, p.Status, p.Labels, p.Annotations} {
			root.Walk(func(n *engine.Node) {
				if !n.IsExpr() {
					return
				}
				r, ok := n.Expr.(engine.InputReader)
				if !ok {
					mk.all = true
					return
				}
				for _, in := range r.Inputs() {
					switch {
					case len(in) == 0 || len(in) == 1 && in[0] == "metadata":
						mk.all = true
					case in[0] == "metadata":
						add(in[1])
					}
				}
			})
		}
	}
	for _, s := range conv.Schemas {
		if d := c.defaults[s]; d != nil && d.props["metadata"] != nil {
			mk.all = true
		}
	}
	slices.Sort(mk.keys)
	return mk
}

// MetadataKeys lists the metadata keys converting objects of gk may read or
// write besides annotations; all is true when it may read any (or gk is not
// converted here).
func (c *Converter) MetadataKeys(gk schema.GroupKind) (keys []string, all bool) {
	mk, ok := c.metaKeys[gk]
	if !ok {
		return nil, true
	}
	return mk.keys, mk.all
}

// NeedsAllMetadata reports whether converting obj, decoded with the keys of
// MetadataKeys, may read or write other metadata: when its stash, written
// by an earlier conversion (maybe under another version of the katalog),
// holds metadata. A stash that mentions metadata, or escapes a character
// that might spell it, is taken to.
func (c *Converter) NeedsAllMetadata(obj *unstructured.Unstructured) bool {
	raw, _ := annotations(obj.Object)[StashAnnotation].(string)
	return strings.Contains(raw, "metadata") || strings.Contains(raw, `\`)
}

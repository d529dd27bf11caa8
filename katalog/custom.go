package katalog

import (
	"gopkg.in/yaml.v3"
)

// Custom children come in two forms: ours, with name, namespace, labels and
// annotations at the top level like every other kind, and upstream's, with
// the object's identity under metadata: (labels possibly as a key/value
// list) and control keys that steer the reconciler and are never part of
// the object: hasStatus and metadata.namespaced (upstream:
// pkg/types/custom_resource.go). Both decode into the same Resource.

// customMetadataKeys are the keys a custom child's metadata: may hold.
var customMetadataKeys = []string{"name", "namespace", "namespaced", "labels", "annotations"}

// customKey decodes the keys of a custom declaration that are not plain
// fields of the object: metadata and hasStatus. It reports whether it
// handled key.
func (d *decoder) customKey(r *Resource, k, v *yaml.Node, path string) bool {
	switch k.Value {
	case "hasStatus":
		b := d.boolean(v, path)
		r.HasStatus = &b
		return true
	case "metadata":
		d.customMetadata(r, k, v, path)
		return true
	}
	return false
}

// customMetadata lifts name and namespace to the declaration (where the
// reconciler reads a child's identity), takes namespaced as the declared
// scope, and keeps labels and annotations (a map or a key/value list) in
// metadata, merged under the top-level ones when the object is built.
func (d *decoder) customMetadata(r *Resource, k, v *yaml.Node, path string) {
	o := d.mapping(v, path, customMetadataKeys, nil)
	md := &Value{Kind: MapValue, Pos: d.pos(Resolve(v)), Node: Resolve(v)}
	for _, key := range customMetadataKeys {
		f, ok := o[key]
		if !ok {
			continue
		}
		fpath := join(path, key)
		switch key {
		case "name", "namespace":
			if prev := r.Fields.Entry(key); prev != nil {
				d.errorf(f.key, fpath, "the %s is given twice: here and at %s; keep one", key, prev.KeyPos)
				continue
			}
			r.Fields.Map = append(r.Fields.Map, &MapEntry{Key: key, KeyPos: d.pos(f.key), Value: d.value(f.value, fpath)})
		case "namespaced":
			b := d.boolean(f.value, fpath)
			r.Namespaced, r.NamespacedPos = &b, d.pos(f.value)
		default:
			md.Map = append(md.Map, &MapEntry{Key: key, KeyPos: d.pos(f.key), Value: d.keyValueList(d.value(f.value, fpath), fpath)})
		}
	}
	if len(md.Map) > 0 {
		r.Fields.Map = append(r.Fields.Map, &MapEntry{Key: "metadata", KeyPos: d.pos(k), Value: md})
	}
}

// checkCopy reports copy fields that cannot work together: fromNamespace
// without a source to copy, toNamespaces with namespace (toNamespaces names
// every namespace the copies go to).
func (d *decoder) checkCopy(r *Resource, path string) {
	from := ResourceKinds[r.Kind].CopyKey
	if from == "" {
		return
	}
	if e := r.Fields.Entry("fromNamespace"); e != nil && r.Fields.Get(from) == nil {
		d.errorAt(e.KeyPos, path+".fromNamespace", "fromNamespace says where %s lives, but there is no %s; add it or remove fromNamespace", from, from)
	}
	if e := r.Fields.Entry("toNamespaces"); e != nil && r.Fields.Get("namespace") != nil {
		d.errorAt(e.KeyPos, path+".toNamespaces", "toNamespaces writes one copy to each namespace it lists, so namespace has no effect; list that namespace under toNamespaces and remove namespace")
	}
}

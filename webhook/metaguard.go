package webhook

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// metaField is one metadata field of the original object.
type metaField struct {
	key   string
	value any
}

type metaSnapshot struct {
	present bool
	isMap   bool // metadata was a map; else fields[0] holds its value
	kind    any
	fields  []metaField // all but labels and annotations
	labels  []metaField
	annots  []metaField
}

func (c *objectConversion) snapshot(u *unstructured.Unstructured) metaSnapshot {
	s := metaSnapshot{kind: u.Object["kind"]}
	meta, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		s.present = u.Object["metadata"] != nil
		s.fields = append(c.bufs.meta[:0], metaField{value: runtime.DeepCopyJSONValue(u.Object["metadata"])})
		c.bufs.meta = s.fields
		return s
	}
	s.present, s.isMap = true, true
	buf := c.bufs.meta[:0]
	for k, v := range meta {
		if k != "labels" && k != "annotations" {
			buf = append(buf, metaField{k, runtime.DeepCopyJSONValue(v)})
		}
	}
	n := len(buf)
	buf = appendStrings(buf, meta["labels"])
	l := len(buf)
	buf = appendStrings(buf, meta["annotations"])
	c.bufs.meta = buf
	s.fields, s.labels, s.annots = buf[:n], buf[n:l], buf[l:]
	return s
}

func appendStrings(buf []metaField, v any) []metaField {
	m, _ := v.(map[string]any)
	for k, v := range m {
		buf = append(buf, metaField{k, v})
	}
	return buf
}

// checkResult compares the converted object's kind and metadata with the
// snapshot of the original; a is the annotation the converter returned
// apart (apart.go), checked as if the object held it.
func checkResult(s metaSnapshot, res *unstructured.Unstructured, a apart) error {
	if !jsonval.Equal(res.Object["kind"], s.kind) {
		return fmt.Errorf("the converter changed kind from %v to %v; a conversion keeps the kind", s.kind, res.Object["kind"])
	}
	rawMeta, present := res.Object["metadata"]
	meta, isMap := rawMeta.(map[string]any)
	if !s.isMap {
		// The original had no metadata map (the API server always sends
		// one, but the check must not misname what changed).
		switch {
		case !isMap && (present && rawMeta != nil) == s.present && jsonval.Equal(rawMeta, s.fields[0].value):
			return nil
		case !isMap || s.present:
			return fmt.Errorf("the converter changed metadata from %s to %s; a conversion may change only metadata.labels and metadata.annotations", brief(s.fields[0].value), brief(rawMeta))
		}
		for k := range meta {
			if k != "labels" && k != "annotations" {
				return fmt.Errorf("the converter added metadata.%s to an object without metadata; a conversion may change only metadata.labels and metadata.annotations", k)
			}
		}
		if err := checkStringMap(meta, "labels", nil, apart{}); err != nil {
			return err
		}
		return checkStringMap(meta, "annotations", nil, a)
	}
	for _, f := range s.fields {
		v, ok := meta[f.key]
		if !ok {
			return fmt.Errorf("the converter removed metadata.%s; a conversion may change only metadata.labels and metadata.annotations", f.key)
		}
		if !jsonval.Equal(v, f.value) {
			return fmt.Errorf("the converter changed metadata.%s from %s to %s; a conversion may change only metadata.labels and metadata.annotations", f.key, brief(f.value), brief(v))
		}
	}
	n := len(meta)
	for _, k := range [...]string{"labels", "annotations"} {
		if _, ok := meta[k]; ok {
			n--
		}
	}
	if n != len(s.fields) {
		for k := range meta {
			if k != "labels" && k != "annotations" && !slices.ContainsFunc(s.fields, func(f metaField) bool { return f.key == k }) {
				return fmt.Errorf("the converter added metadata.%s; a conversion may change only metadata.labels and metadata.annotations", k)
			}
		}
	}
	if err := checkStringMap(meta, "labels", s.labels, apart{}); err != nil {
		return err
	}
	return checkStringMap(meta, "annotations", s.annots, a)
}

// checkStringMap checks that metadata.<name> is a map of strings, and
// validates the entries that differ from the original, with a in place of
// the map's own entry for its key.
func checkStringMap(meta map[string]any, name string, orig []metaField, a apart) error {
	v, ok := meta[name]
	if (!ok || v == nil) && a.key == "" {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok && v != nil {
		if ms, isStrings := v.(map[string]string); isStrings {
			m = make(map[string]any, len(ms))
			for k, s := range ms {
				m[k] = s
			}
			meta[name] = m
		} else {
			return fmt.Errorf("metadata.%s must be a map of strings, got %T", name, v)
		}
	}
	unchanged := func(k string, s string) bool {
		return slices.ContainsFunc(orig, func(f metaField) bool { return f.key == k && f.value == s })
	}
	var changed []string
	for k, val := range m {
		if a.key != "" && k == a.key {
			continue // a replaces it
		}
		s, isString := val.(string)
		if !isString {
			return fmt.Errorf("metadata.%s[%q] must be a string, got %s", name, k, brief(val))
		}
		if !unchanged(k, s) {
			changed = append(changed, k)
		}
	}
	if len(changed) == 0 && (a.key == "" || unchanged(a.key, a.value)) {
		return nil
	}
	return validateMetaMap(name, m, changed, a)
}

// brief prints a value for a message, cut to 80 bytes.
func brief(v any) string {
	b, err := jsonval.Append(nil, v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}

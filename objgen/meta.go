package objgen

import (
	"fmt"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// rootMeta generates metadata for a top-level object.
func (g *generator) rootMeta(s *structuralschema.Structural, gvk schema.GroupVersionKind, i int, names map[string]bool) (map[string]any, string, error) {
	meta := map[string]any{}
	name := ""
	var nameSchema *structuralschema.Structural
	if s != nil {
		if ms, ok := s.Properties["metadata"]; ok {
			if ns, ok := ms.Properties["name"]; ok && hasValueValidation(&ns) {
				nameSchema = &ns
			}
		}
	}
	base := kindPrefix(gvk.Kind)
	candidate := fmt.Sprintf("%s-%d-%s", base, i, g.randString(lowerAlnum, 5))
	if nameSchema == nil || g.env.stringOK(nameSchema, candidate) == nil {
		name = candidate
	} else {
		l := loc{fp: field.NewPath("metadata", "name"), key: ".metadata.name"}
		var lastErr error
		for a := 0; a < attempts && name == ""; a++ {
			v, err := g.value(nameSchema, l, 2)
			if err != nil {
				lastErr = err
				continue
			}
			str, _ := v.(string)
			switch {
			case len(validRootName(str)) > 0:
				lastErr = fmt.Errorf("metadata.name: the schema admits %q, which is not a DNS-1123 subdomain", str)
			case names[str]:
				lastErr = fmt.Errorf("metadata.name: cannot find a unique name the schema admits")
			default:
				name = str
			}
		}
		if name == "" {
			return nil, "", lastErr
		}
	}
	meta["name"] = name
	if !g.o.ClusterScoped {
		meta["namespace"] = g.o.Namespace
	}
	if labels := g.labels(); labels != nil {
		meta["labels"] = labels
	}
	if g.chance(0.4) {
		ann := map[string]any{}
		for n := g.between(1, 3); len(ann) < n; {
			ann[annotationKeys[g.r.IntN(len(annotationKeys))]] = annotationValues[g.r.IntN(len(annotationValues))]
		}
		meta["annotations"] = ann
	}
	return meta, name, nil
}

func (g *generator) labels() map[string]any {
	if !g.chance(0.5) {
		return nil
	}
	labels := map[string]any{}
	for n := g.between(1, 3); len(labels) < n; {
		v := ""
		if !g.chance(0.1) {
			v = g.dnsLabel(10)
		}
		labels[labelKeys[g.r.IntN(len(labelKeys))]] = v
	}
	return labels
}

var (
	labelKeys      = []string{"app", "tier", "app.kubernetes.io/name", "app.kubernetes.io/part-of", "example.com/team"}
	annotationKeys = []string{"note", "example.com/description", "orkestra.orkspace.io/test", "checksum/config"}
	// Annotation values stress consumers: spaces, quotes, template and CEL
	// delimiters, JSON, unicode, empty.
	annotationValues = []string{"", "hello world", `{"a": [1, 2]}`, "{{ .spec.image }}", "${self.metadata.name}", "multi\nline", "ünïcödé ✓", `quote "and" 'apostrophe'`}
)

// kindPrefix turns a kind into the start of a DNS-1123 label.
func kindPrefix(kind string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(kind) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
		if b.Len() >= 40 {
			break
		}
	}
	if b.Len() == 0 || b.String()[0] < 'a' {
		return "obj" + b.String()
	}
	return b.String()
}

// arbitrary generates any JSON value, nesting at most to MaxDepth.
func (g *generator) arbitrary(depth int) any {
	k := g.r.IntN(7)
	if depth >= g.o.MaxDepth && k >= 4 {
		k = g.r.IntN(4)
	}
	switch k {
	case 0:
		return g.plainString(0, 12)
	case 1:
		return int64(g.between(-100, 1000))
	case 2:
		return jsonval.Normalize(float64(g.between(-10000, 10000))/100 + 0.5)
	case 3:
		return g.chance(0.5)
	case 4, 5:
		m := map[string]any{}
		for n := g.between(0, g.o.MaxProperties); len(m) < n; {
			m[g.mapKey()] = g.arbitrary(depth + 1)
		}
		return m
	default:
		n := g.between(0, g.o.MaxItems)
		l := make([]any, n)
		for i := range l {
			l[i] = g.arbitrary(depth + 1)
		}
		return l
	}
}

// mapKey returns a key for a map or an unknown field: mostly DNS-label-like,
// sometimes with dots, slashes, upper case or underscores.
func (g *generator) mapKey() string {
	switch g.r.IntN(10) {
	case 0:
		return "example.com/" + g.dnsLabel(8)
	case 1:
		return "Key_" + g.randString(lowerAlnum, 3)
	case 2:
		return mapWords[g.r.IntN(len(mapWords))] + "." + mapWords[g.r.IntN(len(mapWords))]
	default:
		return mapWords[g.r.IntN(len(mapWords))] + "-" + g.randString(lowerAlnum, 2)
	}
}

var mapWords = []string{"alpha", "beta", "gamma", "delta", "env", "region", "zone", "size", "color", "mode"}

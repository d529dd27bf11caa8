package specyaml

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/orkspace/orkestra-cel/katalog"
)

// maxMergeDepth bounds merge keys of merged mappings.
const maxMergeDepth = 10

// Resolve follows aliases and unwraps document nodes: katalog's rule.
func Resolve(n *yaml.Node) *yaml.Node { return katalog.Resolve(n) }

// IsNull: n is absent or null.
func IsNull(n *yaml.Node) bool { return n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// Describe names what n is, for "must be …, got …" messages.
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%s %q", strings.TrimPrefix(n.Tag, "!!"), n.Value)
	}
	return "something else"
}

// Join appends key to a field path.
func Join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// KV is one key of a mapping.
type KV struct{ Key, Value *yaml.Node }

// Fields are the known keys of a decoded mapping.
type Fields map[string]KV

// Has reports whether key k was written.
func (f Fields) Has(k string) bool { _, ok := f[k]; return ok }

// V is the value of key k (nil when absent).
func (f Fields) V(k string) *yaml.Node {
	if x, ok := f[k]; ok {
		return x.Value
	}
	return nil
}

// Pairs returns a mapping's key/value pairs with YAML merge keys (`<<:
// *anchor`, `<<: [*a, *b]`) expanded: keys written in the mapping win over
// merged ones, and an earlier merged mapping over a later one.
func (r *Reader) Pairs(n *yaml.Node, path string) []KV { return r.pairs(n, path, 0) }

func (r *Reader) pairs(n *yaml.Node, path string, depth int) []KV {
	var own, merged []KV
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag != "!!merge" {
			own = append(own, KV{k, v})
			continue
		}
		srcs := []*yaml.Node{v}
		if rv := Resolve(v); rv != nil && rv.Kind == yaml.SequenceNode {
			srcs = rv.Content
		}
		for _, s := range srcs {
			m := Resolve(s)
			if m == nil || m.Kind != yaml.MappingNode || depth > maxMergeDepth {
				r.Errorf(s, path, "a merge key (<<) takes an alias of a map, or a list of them (<<: *base)")
				continue
			}
			merged = append(merged, r.pairs(m, path, depth+1)...)
		}
	}
	seen := map[string]bool{}
	for _, p := range own {
		seen[p.Key.Value] = true
	}
	for _, p := range merged {
		if !seen[p.Key.Value] {
			seen[p.Key.Value] = true
			own = append(own, p)
		}
	}
	return own
}

// Mapping checks that n is a map and returns its known keys; unknown keys
// (with did-you-mean) and duplicates are errors, keys of upstream's format
// that change nothing here are warnings (ignored names the key and why),
// x-… keys are skipped. A null is an empty map; anything else is reported
// and nil.
func (r *Reader) Mapping(n *yaml.Node, path string, known []string, ignored map[string]string) Fields {
	n = Resolve(n)
	if IsNull(n) {
		return Fields{}
	}
	if n.Kind != yaml.MappingNode {
		r.Errorf(n, path, "must be a map, got %s", Describe(n))
		return nil
	}
	out := Fields{}
	for _, p := range r.Pairs(n, path) {
		name := p.Key.Value
		if strings.HasPrefix(name, "x-") {
			continue
		}
		if prev, dup := out[name]; dup {
			r.Errorf(p.Key, Join(path, name), "duplicate key %q (first at line %d); remove one", name, prev.Key.Line)
			continue
		}
		switch why, ign := ignored[name]; {
		case contains(known, name):
			out[name] = p
		case ign:
			r.Warnf(p.Key, Join(path, name), "%s", why)
		default:
			r.Errorf(p.Key, Join(path, name), "unknown key %q%s", name, didYouMeanOrList(name, known))
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func didYouMeanOrList(name string, known []string) string {
	if s := katalog.DidYouMean(name, known); s != "" {
		return s
	}
	sorted := append([]string(nil), known...)
	sort.Strings(sorted)
	return "; allowed keys: " + strings.Join(sorted, ", ") + " (x-… keys may hold anchors)"
}

// Str decodes a scalar as its text ("" when null).
func (r *Reader) Str(n *yaml.Node, path string) string {
	n = Resolve(n)
	if IsNull(n) {
		return ""
	}
	if n.Kind != yaml.ScalarNode {
		r.Errorf(n, path, "must be a string, got %s", Describe(n))
		return ""
	}
	return n.Value
}

// OptStr is Str for a key that may be absent: nil when it is.
func (r *Reader) OptStr(f Fields, key, path string) *string {
	if !f.Has(key) {
		return nil
	}
	s := r.Str(f.V(key), Join(path, key))
	return &s
}

// Bool decodes true or false (false when null).
func (r *Reader) Bool(n *yaml.Node, path string) bool {
	n = Resolve(n)
	if IsNull(n) {
		return false
	}
	if n.Kind == yaml.ScalarNode {
		switch n.Value {
		case "true", "True", "TRUE":
			return true
		case "false", "False", "FALSE":
			return false
		}
	}
	r.Errorf(n, path, "must be true or false, got %s", Describe(n))
	return false
}

// Int decodes an integer; false when null or reported.
func (r *Reader) Int(n *yaml.Node, path string) (int, bool) {
	n = Resolve(n)
	if IsNull(n) {
		return 0, false
	}
	if n.Kind == yaml.ScalarNode {
		if i, err := strconv.Atoi(strings.TrimSpace(n.Value)); err == nil {
			return i, true
		}
	}
	r.Errorf(n, path, "must be an integer, got %s", Describe(n))
	return 0, false
}

// Duration decodes a Go duration ("30s", "2m", "1m30s").
func (r *Reader) Duration(n *yaml.Node, path string) time.Duration {
	s := r.Str(n, path)
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		r.Errorf(n, path, "%q is not a duration; write a Go duration such as 30s, 2m or 1m30s", s)
		return 0
	}
	return d
}

// Items returns a list's items; a null is an empty list.
func (r *Reader) Items(n *yaml.Node, path string) []*yaml.Node {
	n = Resolve(n)
	if IsNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		r.Errorf(n, path, "must be a list, got %s", Describe(n))
		return nil
	}
	return n.Content
}

// StrList decodes a list of strings.
func (r *Reader) StrList(n *yaml.Node, path string) []string {
	var out []string
	for i, it := range r.Items(n, path) {
		out = append(out, r.Str(it, fmt.Sprintf("%s[%d]", path, i)))
	}
	return out
}

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/orkspace/orkestra-cel/katalog"
)

// reader walks the yaml.v3 nodes of one spec file, recording every problem
// with its position and going on, so that all problems are reported at once.
type reader struct {
	file  string
	dir   string
	diags *katalog.Diagnostics
}

func (r *reader) pos(n *yaml.Node) Pos {
	if n == nil {
		return Pos{File: r.file}
	}
	return Pos{File: r.file, Line: n.Line, Col: n.Column}
}

func (r *reader) errorf(n *yaml.Node, field, format string, args ...any) {
	*r.diags = append(*r.diags, katalog.Diagnostic{Pos: r.pos(n), Field: field, Message: fmt.Sprintf(format, args...)})
}

func (r *reader) warnf(n *yaml.Node, field, format string, args ...any) {
	*r.diags = append(*r.diags, katalog.Diagnostic{Pos: r.pos(n), Severity: katalog.Warning, Field: field, Message: fmt.Sprintf(format, args...)})
}

// resolve follows aliases and unwraps document nodes.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && (n.Kind == yaml.AliasNode || n.Kind == yaml.DocumentNode) {
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		} else if len(n.Content) > 0 {
			n = n.Content[0]
		} else {
			return nil
		}
	}
	return n
}

func isNull(n *yaml.Node) bool { return n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

func describe(n *yaml.Node) string {
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

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// kv is one key of a mapping.
type kv struct{ key, value *yaml.Node }

// fields are the known keys of a decoded mapping.
type fields map[string]kv

func (f fields) has(k string) bool { _, ok := f[k]; return ok }
func (f fields) v(k string) *yaml.Node {
	if x, ok := f[k]; ok {
		return x.value
	}
	return nil
}

// pairs returns a mapping's key/value pairs with YAML merge keys (`<<:
// *anchor`, `<<: [*a, *b]`) expanded: keys written in the mapping win over
// merged ones, and an earlier merged mapping over a later one.
func (r *reader) pairs(n *yaml.Node, path string, depth int) []kv {
	var own, merged []kv
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag != "!!merge" {
			own = append(own, kv{k, v})
			continue
		}
		srcs := []*yaml.Node{v}
		if rv := resolve(v); rv != nil && rv.Kind == yaml.SequenceNode {
			srcs = rv.Content
		}
		for _, s := range srcs {
			s = resolve(s)
			if s == nil || s.Kind != yaml.MappingNode || depth > 10 {
				r.errorf(k, path, "a merge key (<<) takes an alias of a map, or a list of them")
				continue
			}
			merged = append(merged, r.pairs(s, path, depth+1)...)
		}
	}
	seen := map[string]bool{}
	for _, p := range own {
		seen[p.key.Value] = true
	}
	for _, p := range merged {
		if !seen[p.key.Value] {
			seen[p.key.Value] = true
			own = append(own, p)
		}
	}
	return own
}

// mapping checks that n is a map and reports unknown keys (with did-you-mean)
// and duplicates as errors; keys of upstream's format that change nothing
// here are warnings (ignored names the key and why).
func (r *reader) mapping(n *yaml.Node, path string, known []string, ignored map[string]string) fields {
	n = resolve(n)
	out := fields{}
	if isNull(n) {
		return out
	}
	if n.Kind != yaml.MappingNode {
		r.errorf(n, path, "must be a map, got %s", describe(n))
		return out
	}
	for _, p := range r.pairs(n, path, 0) {
		name := p.key.Value
		if prev, dup := out[name]; dup {
			r.errorf(p.key, join(path, name), "duplicate key %q (first at line %d); remove one", name, prev.key.Line)
			continue
		}
		switch why, ign := ignored[name]; {
		case contains(known, name):
			out[name] = p
		case ign:
			r.warnf(p.key, join(path, name), "%s", why)
		default:
			r.errorf(p.key, join(path, name), "unknown key %q%s", name, didYouMeanOrList(name, known))
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
	return "; allowed keys: " + strings.Join(sorted, ", ")
}

// str decodes a scalar as its text.
func (r *reader) str(n *yaml.Node, path string) string {
	n = resolve(n)
	if isNull(n) {
		return ""
	}
	if n.Kind != yaml.ScalarNode {
		r.errorf(n, path, "must be a string, got %s", describe(n))
		return ""
	}
	return n.Value
}

// optStr is str for a key that may be absent: nil when it is.
func (r *reader) optStr(f fields, key, path string) *string {
	if !f.has(key) {
		return nil
	}
	s := r.str(f.v(key), join(path, key))
	return &s
}

func (r *reader) boolean(n *yaml.Node, path string) bool {
	n = resolve(n)
	if isNull(n) {
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
	r.errorf(n, path, "must be true or false, got %s", describe(n))
	return false
}

func (r *reader) integer(n *yaml.Node, path string) (int, bool) {
	n = resolve(n)
	if isNull(n) {
		return 0, false
	}
	if n.Kind == yaml.ScalarNode {
		if i, err := strconv.Atoi(strings.TrimSpace(n.Value)); err == nil {
			return i, true
		}
	}
	r.errorf(n, path, "must be an integer, got %s", describe(n))
	return 0, false
}

// duration decodes a Go duration ("30s", "2m", "1m30s").
func (r *reader) duration(n *yaml.Node, path string) time.Duration {
	s := r.str(n, path)
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		r.errorf(n, path, "%q is not a duration; write a Go duration such as 30s, 2m or 1m30s", s)
		return 0
	}
	return d
}

// items returns a list's items; a null is an empty list.
func (r *reader) items(n *yaml.Node, path string) []*yaml.Node {
	n = resolve(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		r.errorf(n, path, "must be a list, got %s", describe(n))
		return nil
	}
	return n.Content
}

func (r *reader) strList(n *yaml.Node, path string) []string {
	var out []string
	for i, it := range r.items(n, path) {
		out = append(out, r.str(it, fmt.Sprintf("%s[%d]", path, i)))
	}
	return out
}

// existing resolves a path written in the spec against dir and reports it
// when it does not exist.
func (r *reader) existing(n *yaml.Node, path, dir string) string {
	written := r.str(n, path)
	if written == "" {
		return ""
	}
	p := written
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	if _, err := os.Stat(p); err != nil {
		r.errorf(n, path, "%s: no such file (a relative path is relative to the directory of the file that names it)", written)
	}
	return p
}

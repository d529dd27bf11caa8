package simulate

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/orkspace/orkestra-cel/katalog"
)

// The spec files are read as YAML nodes, so that every problem names its
// line and column, and so that anchors, aliases and merge keys (`<<:
// *base`) resolve as YAML defines them.

// maxSpecBytes bounds a spec or include file.
const maxSpecBytes = 1 << 20

// reader reads the YAML files of one spec and collects their problems.
type reader struct {
	problems katalog.Diagnostics
}

func (r *reader) errorf(p katalog.Pos, field, format string, args ...any) {
	r.problems = append(r.problems, katalog.Diagnostic{Pos: p, Field: field, Message: fmt.Sprintf(format, args...)})
}

// parse reads file as one YAML document; nil when it cannot (reported).
func (r *reader) parse(file string, from katalog.Pos, field string) *yaml.Node {
	data, err := readBounded(file)
	if err != nil {
		r.errorf(from, field, "%v", err)
		return nil
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		r.errorf(katalog.Pos{File: file}, "", "not valid YAML: %v", err)
		return nil
	}
	var extra yaml.Node
	if dec.Decode(&extra) == nil {
		r.errorf(katalog.Pos{File: file, Line: extra.Line, Col: extra.Column}, "", "a second YAML document: a spec file holds one (write a suite with imports: to run several)")
	}
	return resolve(&doc)
}

func readBounded(file string) ([]byte, error) {
	if err := isFile(file); err != nil {
		return nil, err
	}
	if st, _ := os.Stat(file); st.Size() > maxSpecBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", file, maxSpecBytes)
	}
	return os.ReadFile(file)
}

// isFile reports why file is not a regular file that exists.
func isFile(file string) error {
	st, err := os.Stat(file)
	if err != nil {
		if os.IsNotExist(err) {
			return fmt.Errorf("file %s does not exist (paths are relative to the file that names them)", file)
		}
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", file)
	}
	return nil
}

// resolve follows documents and aliases to the node they stand for.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil {
		switch n.Kind {
		case yaml.DocumentNode:
			if len(n.Content) == 0 {
				return nil
			}
			n = n.Content[0]
		case yaml.AliasNode:
			n = n.Alias
		default:
			return n
		}
	}
	return nil
}

func posOf(file string, n *yaml.Node) katalog.Pos {
	if n == nil {
		return katalog.Pos{File: file}
	}
	return katalog.Pos{File: file, Line: n.Line, Col: n.Column}
}

// pair is one key of a mapping with its value.
type pair struct {
	key   string
	keyAt *yaml.Node
	value *yaml.Node
}

// pairs returns a mapping's keys in order, merge keys expanded: the keys
// of `<<: *a` (or `<<: [*a, *b]`, earlier ones first) stand where the merge
// key stands, unless the mapping itself sets them.
func (r *reader) pairs(file, field string, n *yaml.Node) []pair {
	own := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if !isMerge(n.Content[i]) {
			own[n.Content[i].Value] = true
		}
	}
	var out []pair
	seen := map[string]bool{}
	add := func(p pair) {
		if !seen[p.key] {
			seen[p.key] = true
			out = append(out, p)
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !isMerge(k) {
			add(pair{key: k.Value, keyAt: k, value: v})
			continue
		}
		sources := []*yaml.Node{v}
		if rv := resolve(v); rv != nil && rv.Kind == yaml.SequenceNode {
			sources = rv.Content
		}
		for _, src := range sources {
			m := resolve(src)
			if m == nil || m.Kind != yaml.MappingNode {
				r.errorf(posOf(file, src), field, "a merge key (<<) takes a mapping or a list of mappings, e.g. <<: *base")
				continue
			}
			for _, p := range r.pairs(file, field, m) {
				if !own[p.key] {
					add(p)
				}
			}
		}
	}
	return out
}

func isMerge(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Tag == "!!merge"
}

// mapping checks that n is a mapping and returns its pairs, reporting keys
// outside allowed (keys starting with x- hold anchors and are ignored).
func (r *reader) mapping(file, field string, n *yaml.Node, allowed ...string) map[string]pair {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		r.errorf(posOf(file, n), field, "must be a mapping")
		return nil
	}
	out := map[string]pair{}
	for _, p := range r.pairs(file, field, n) {
		if strings.HasPrefix(p.key, "x-") {
			continue
		}
		known := false
		for _, a := range allowed {
			known = known || a == p.key
		}
		if !known {
			r.errorf(posOf(file, p.keyAt), join(field, p.key), "unknown key %q%s (keys: %s; x-… keys may hold anchors)", p.key, katalog.DidYouMean(p.key, allowed), strings.Join(allowed, ", "))
			continue
		}
		out[p.key] = p
	}
	return out
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

// str decodes a string scalar.
func (r *reader) str(file, field string, n *yaml.Node) (string, bool) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		r.errorf(posOf(file, n), field, "must be a string")
		return "", false
	}
	return n.Value, true
}

// integer decodes an integer scalar.
func (r *reader) integer(file, field string, n *yaml.Node) (int, bool) {
	n = resolve(n)
	var v int
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&v) != nil {
		r.errorf(posOf(file, n), field, "must be an integer")
		return 0, false
	}
	return v, true
}

// boolean decodes a true/false scalar.
func (r *reader) boolean(file, field string, n *yaml.Node) (bool, bool) {
	n = resolve(n)
	var v bool
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&v) != nil {
		r.errorf(posOf(file, n), field, "must be true or false")
		return false, false
	}
	return v, true
}

// list returns a sequence's items; a nil n (absent) is an empty list.
func (r *reader) list(file, field string, n *yaml.Node) []*yaml.Node {
	n = resolve(n)
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		r.errorf(posOf(file, n), field, "must be a list")
		return nil
	}
	return n.Content
}

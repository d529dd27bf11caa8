package katalog

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// decoder walks yaml.v3 nodes, recording every problem with its position and
// going on, so that `check` reports all problems at once.
type decoder struct {
	file  string
	diags *Diagnostics
	entry string // current CRD entry, for diagnostics
	// origin maps nodes to the file they were read from (merged entries mix
	// nodes of several files); loader is the load this decoder serves.
	origin map[*yaml.Node]string
	loader *loader
	// owner is the entry being decoded, if any.
	owner *CRDEntry
	// aliasDepth counts the aliases value is expanding; alias is the
	// outermost, named when the expansion goes over the limit.
	aliasDepth int
	alias      *yaml.Node
	aliasPath  string
	// pattern is the lifecycle of the document being decoded.
	pattern *Pattern
}

// MaxAliasNodes bounds the nodes YAML aliases may expand to in one katalog
// load. yaml.v3 guards decoding into Go values, not the yaml.Node walk the
// loader does, so a small file of nested aliases ("billion laughs") would
// otherwise expand to billions of values.
const MaxAliasNodes = 100_000

func (d *decoder) pos(n *yaml.Node) Pos {
	if n == nil {
		return Pos{File: d.file}
	}
	return Pos{File: d.fileOf(n), Line: n.Line, Col: n.Column}
}

// fileOf returns the file node n was read from.
func (d *decoder) fileOf(n *yaml.Node) string {
	if f, ok := d.origin[n]; ok {
		return f
	}
	return d.file
}

// dirOf returns the directory paths written in node n are relative to: that
// of the file n was read from, else def.
func (d *decoder) dirOf(n *yaml.Node, def string) string {
	if f, ok := d.origin[n]; ok {
		return filepath.Dir(f)
	}
	if def != "" {
		return def
	}
	return filepath.Dir(d.file)
}

// errorAt records an error at a position computed elsewhere.
func (d *decoder) errorAt(p Pos, field, format string, args ...any) {
	*d.diags = append(*d.diags, Diagnostic{Pos: p, Entry: d.entry, Field: field, Message: fmt.Sprintf(format, args...), owner: d.owner})
}

func (d *decoder) errorf(n *yaml.Node, field, format string, args ...any) {
	*d.diags = append(*d.diags, Diagnostic{Pos: d.pos(n), Entry: d.entry, Field: field, Message: fmt.Sprintf(format, args...), owner: d.owner})
}

func (d *decoder) warnAt(p Pos, field, format string, args ...any) {
	*d.diags = append(*d.diags, Diagnostic{Pos: p, Severity: Warning, Entry: d.entry, Field: field, Message: fmt.Sprintf(format, args...), owner: d.owner})
}

func (d *decoder) warnf(n *yaml.Node, field, format string, args ...any) {
	*d.diags = append(*d.diags, Diagnostic{Pos: d.pos(n), Severity: Warning, Entry: d.entry, Field: field, Message: fmt.Sprintf(format, args...), owner: d.owner})
}

// Resolve follows aliases and unwraps document nodes (one owner: the spec
// readers use it too).
func Resolve(n *yaml.Node) *yaml.Node {
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

// upstream reports an upstream key this runtime does not implement; v is
// its value.
func (d *decoder) upstream(k, v *yaml.Node, field, name string) {
	warn, msg := upstreamMessage(name)
	if warn {
		d.warnf(k, field, "%q %s", name, msg)
	} else {
		d.errorf(k, field, "%q %s", name, msg)
	}
}

// field is one key of a mapping.
type field struct {
	key   *yaml.Node
	value *yaml.Node
}

// object is a decoded mapping: its known keys by name.
type object map[string]field

func (o object) has(k string) bool { _, ok := o[k]; return ok }

// mapping checks that n is a mapping, reports unknown keys (with did-you-mean)
// as errors, keys of the original format that this runtime does not implement
// as warnings, and duplicate keys as errors; it returns the known keys.
func (d *decoder) mapping(n *yaml.Node, path string, known, unimplemented []string) object {
	n = Resolve(n)
	out := object{}
	if n == nil {
		return out
	}
	if n.Kind != yaml.MappingNode {
		if isNull(n) {
			return out
		}
		d.errorf(n, path, "must be a map, got %s", describe(n))
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := k.Value
		if k.Kind == yaml.ScalarNode && name == "<<" {
			d.errorf(k, path, "YAML merge keys (<<) are not supported in katalogs; write the keys out")
			continue
		}
		if prev, dup := out[name]; dup {
			d.errorf(k, join(path, name), "duplicate key %q (first at line %d); remove one", name, prev.key.Line)
			continue
		}
		switch {
		case contains(known, name):
			out[name] = field{key: k, value: v}
		case contains(unimplemented, name):
			d.upstream(k, v, join(path, name), name)
		default:
			d.errorf(k, join(path, name), "unknown key %q%s", name, didYouMeanOrList(name, known))
		}
	}
	return out
}

func didYouMeanOrList(name string, known []string) string {
	if s := DidYouMean(name, known); s != "" {
		return s
	}
	sorted := append([]string(nil), known...)
	sort.Strings(sorted)
	return "; allowed keys: " + strings.Join(sorted, ", ")
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

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

// str decodes a scalar string (any scalar is accepted as its text).
func (d *decoder) str(n *yaml.Node, path string) string {
	n = Resolve(n)
	if n == nil || isNull(n) {
		return ""
	}
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, path, "must be a string, got %s", describe(n))
		return ""
	}
	return n.Value
}

func (d *decoder) boolean(n *yaml.Node, path string) bool {
	n = Resolve(n)
	if n == nil || isNull(n) {
		return false
	}
	if n.Kind == yaml.ScalarNode {
		switch n.Value {
		case "true", "True", "TRUE", "yes":
			return true
		case "false", "False", "FALSE", "no":
			return false
		}
	}
	d.errorf(n, path, "must be true or false, got %s", describe(n))
	return false
}

func (d *decoder) integer(n *yaml.Node, path string) (int, bool) {
	n = Resolve(n)
	if n == nil || isNull(n) {
		return 0, false
	}
	if n.Kind == yaml.ScalarNode {
		if i, err := strconv.Atoi(strings.TrimSpace(n.Value)); err == nil {
			return i, true
		}
	}
	d.errorf(n, path, "must be an integer, got %s", describe(n))
	return 0, false
}

func (d *decoder) strList(n *yaml.Node, path string) []string {
	n = Resolve(n)
	if n == nil || isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, path, "must be a list of strings, got %s", describe(n))
		return nil
	}
	var out []string
	for i, item := range n.Content {
		out = append(out, d.str(item, fmt.Sprintf("%s[%d]", path, i)))
	}
	return out
}

// value converts a node into a positioned Value tree.
func (d *decoder) value(n *yaml.Node, path string) *Value {
	orig := n
	if n != nil && n.Kind == yaml.AliasNode {
		if d.aliasDepth == 0 {
			d.alias, d.aliasPath = n, path
		}
		d.aliasDepth++
		defer func() { d.aliasDepth-- }()
	}
	if d.aliasDepth > 0 && !d.countAliasNode() {
		return &Value{Kind: NullValue, Pos: d.pos(orig), Node: orig}
	}
	n = Resolve(n)
	if n == nil {
		return &Value{Kind: NullValue, Pos: d.pos(orig), Node: orig}
	}
	v := &Value{Pos: d.pos(n), Node: n}
	switch n.Kind {
	case yaml.MappingNode:
		v.Kind = MapValue
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if line, dup := seen[k.Value]; dup {
				d.errorf(k, join(path, k.Value), "duplicate key %q (first at line %d); remove one", k.Value, line)
				continue
			}
			seen[k.Value] = k.Line
			v.Map = append(v.Map, &MapEntry{Key: k.Value, KeyPos: d.pos(k), Value: d.value(n.Content[i+1], join(path, k.Value))})
		}
	case yaml.SequenceNode:
		v.Kind = ListValue
		for i, item := range n.Content {
			v.List = append(v.List, d.value(item, fmt.Sprintf("%s[%d]", path, i)))
		}
	case yaml.ScalarNode:
		d.scalar(v, n, path)
	}
	return v
}

// countAliasNode counts one node expanded from an alias; over MaxAliasNodes
// it reports the outermost alias once and returns false, and the expansion
// stops.
func (d *decoder) countAliasNode() bool {
	l := d.loader
	l.aliasNodes++
	if l.aliasNodes <= MaxAliasNodes {
		return true
	}
	if l.aliasNodes == MaxAliasNodes+1 {
		d.errorf(d.alias, d.aliasPath, "YAML alias *%s expands to more than %d values (the limit on alias expansion in one katalog load); write the values out or use fewer nested aliases", d.alias.Value, MaxAliasNodes)
	}
	return false
}

func (d *decoder) scalar(v *Value, n *yaml.Node, path string) {
	v.Str = n.Value
	v.Quoted = n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0
	switch n.ShortTag() {
	case "!!null":
		v.Kind = NullValue
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			d.errorf(n, path, "invalid boolean %q", n.Value)
		}
		v.Kind, v.Scalar = BoolValue, b
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			d.errorf(n, path, "integer %q does not fit in 64 bits", n.Value)
		}
		v.Kind, v.Scalar = IntValue, i
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			d.errorf(n, path, "%q is not a finite number", n.Value)
		}
		v.Kind, v.Scalar = FloatValue, f
	default:
		v.Kind, v.Scalar = StringValue, n.Value
	}
}

// ContentPos returns the position of the first character of a scalar's
// content: one column after the opening quote of a quoted scalar, the first
// line of a block scalar's text.
func (v *Value) ContentPos() Pos {
	p := v.Pos
	if v.Node == nil || p.Line == 0 {
		return p
	}
	switch {
	case v.Node.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
		p.Col++
	case v.Node.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		p.Line++
		p.Col = 1
	}
	return p
}

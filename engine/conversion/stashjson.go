package conversion

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// encodeStash writes the stash as JSON with sorted keys, without the
// reflection of encoding/json, which dominated the cost of a conversion:
//
//	{"v1alpha1":{"if":[{"at":["spec","retainDays"],"read":[[["spec","retention","days"],30]]}],
//	  "set":{…},"unset":[["spec","x"]],"via":"v1"}}
//
// A read without a value means the field was absent.
func encodeStash(stash map[string]*stashEntry) ([]byte, error) {
	return appendStash(nil, sortedEntries(stash))
}

// versionEntry is a stash's entry for one version.
type versionEntry struct {
	version string
	entry   *stashEntry
}

// sortedEntries lists a stash's entries in version order.
func sortedEntries(stash map[string]*stashEntry) []versionEntry {
	out := make([]versionEntry, 0, len(stash))
	for v, e := range stash {
		out = append(out, versionEntry{v, e})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out
}

// appendStash appends the stash of entries (in version order) to b.
func appendStash(b []byte, entries []versionEntry) ([]byte, error) {
	b = append(b, '{')
	for i, ve := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonval.AppendString(b, ve.version)
		b = append(b, ':', '{')
		e := ve.entry
		comma := false
		sep := func() {
			if comma {
				b = append(b, ',')
			}
			comma = true
		}
		if len(e.Guards) > 0 {
			sep()
			b = append(b, `"if":[`...)
			for j, g := range e.Guards {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"at":`...)
				b = appendPath(b, g.At)
				b = append(b, `,"read":[`...)
				for k, in := range g.Read {
					if k > 0 {
						b = append(b, ',')
					}
					b = append(b, '[')
					b = appendPath(b, in.Path)
					if in.Present {
						b = append(b, ',')
						var err error
						if b, err = jsonval.Append(b, in.Value); err != nil {
							return nil, err
						}
					}
					b = append(b, ']')
				}
				b = append(b, "]}"...)
			}
			b = append(b, ']')
		}
		if len(e.Set) > 0 || len(e.leaves) > 0 {
			sep()
			b = append(b, `"set":`...)
			var err error
			if b, err = e.appendSet(b); err != nil {
				return nil, err
			}
		}
		if len(e.Unset) > 0 {
			sep()
			b = append(b, `"unset":[`...)
			for j, p := range e.Unset {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendPath(b, p)
			}
			b = append(b, ']')
		}
		if len(e.Guards) > 0 {
			b = append(b, `,"via":`...)
			b = jsonval.AppendString(b, e.Via)
		}
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// appendSet appends the entry's values as the JSON of their tree (keys
// sorted). Leaves are written directly, each object opened and closed
// around them, when their paths in order nest: no path a prefix of the
// next.
func (e *stashEntry) appendSet(b []byte) ([]byte, error) {
	if len(e.Set) > 0 || !e.leavesNest() {
		return jsonval.Append(b, e.setTree())
	}
	b = append(b, '{')
	var open []string // the objects open below the root, by key
	for i, l := range e.leaves {
		path := e.leafPath(l)
		dir := path[:len(path)-1]
		common := 0
		for common < len(open) && common < len(dir) && open[common] == dir[common] {
			common++
		}
		for j := len(open); j > common; j-- {
			b = append(b, '}')
		}
		if i > 0 {
			b = append(b, ',')
		}
		for _, k := range dir[common:] {
			b = jsonval.AppendString(b, k)
			b = append(b, ':', '{')
		}
		open = dir
		b = jsonval.AppendString(b, path[len(path)-1])
		b = append(b, ':')
		var err error
		if b, err = jsonval.Append(b, l.value); err != nil {
			return b, err
		}
	}
	for range open {
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// leavesNest reports whether no leaf's path is a prefix of another's (then
// each is a key of its own in the tree, whatever the order they were set
// in), and if so sorts them by path.
func (e *stashEntry) leavesNest() bool {
	for i, a := range e.leaves {
		for j, b := range e.leaves {
			pa, pb := e.leafPath(a), e.leafPath(b)
			if i != j && len(pa) <= len(pb) && slices.Equal(pa, pb[:len(pa)]) {
				return false
			}
		}
	}
	slices.SortFunc(e.leaves, func(a, b stashLeaf) int { return slices.Compare(e.leafPath(a), e.leafPath(b)) })
	return true
}

func appendPath(b []byte, p []string) []byte {
	b = append(b, '[')
	for k, seg := range p {
		if k > 0 {
			b = append(b, ',')
		}
		b = jsonval.AppendString(b, seg)
	}
	return append(b, ']')
}

// wireEntry is a stash entry as JSON decodes it.
type wireEntry struct {
	Set   map[string]any `json:"set"`
	Unset [][]string     `json:"unset"`
	Via   string         `json:"via"`
	If    []struct {
		At   []string `json:"at"`
		Read [][]any  `json:"read"`
	} `json:"if"`
}

func (w *wireEntry) entry() (*stashEntry, error) {
	if w == nil {
		return nil, errors.New("is null")
	}
	e := &stashEntry{Set: w.Set, Unset: w.Unset, Via: w.Via}
	for _, p := range w.Unset {
		if len(p) == 0 {
			return nil, errors.New("unsets an empty path")
		}
	}
	if bad := stashOutside(e); bad != "" {
		return nil, fmt.Errorf("holds %s, which no conversion writes (only spec, status, metadata.labels and metadata.annotations)", bad)
	}
	if len(w.If) > 0 && w.Via == "" {
		return nil, errors.New(`has guards ("if") but no "via" version`)
	}
	for _, g := range w.If {
		if len(g.At) == 0 {
			return nil, errors.New("has a guard without a path")
		}
		out := guard{At: g.At}
		for _, r := range g.Read {
			in, err := wireInput(r)
			if err != nil {
				return nil, fmt.Errorf("has a malformed guard at %s: %w", strings.Join(g.At, "."), err)
			}
			out.Read = append(out.Read, in)
		}
		e.Guards = append(e.Guards, out)
	}
	return e, nil
}

func wireInput(r []any) (input, error) {
	if len(r) != 1 && len(r) != 2 {
		return input{}, fmt.Errorf("a read is [path] or [path, value], got %d elements", len(r))
	}
	raw, ok := r[0].([]any)
	if !ok {
		return input{}, errors.New("a read's path is not a list")
	}
	in := input{Path: make([]string, len(raw)), Present: len(r) == 2}
	for i, seg := range raw {
		s, ok := seg.(string)
		if !ok {
			return input{}, errors.New("a read's path holds a non-string")
		}
		in.Path[i] = s
	}
	if in.Present {
		in.Value = r[1]
	}
	return in, nil
}

func sortGuards(gs []guard) {
	sort.Slice(gs, func(i, j int) bool { return pathKey(gs[i].At) < pathKey(gs[j].At) })
}

// stashSummary names, per version, the largest values a stash holds, for
// the message of a stash over its limit.
func stashSummary(entries []versionEntry) string {
	var parts []string
	for _, ve := range entries {
		v := ve.version
		type leaf struct {
			path string
			size int
		}
		var leaves []leaf
		ve.entry.each(func(path []string, val any, set bool) {
			if !set {
				return
			}
			enc, err := jsonval.Append(nil, val)
			if err != nil {
				return
			}
			leaves = append(leaves, leaf{strings.Join(path, "."), len(enc)})
		})
		sort.Slice(leaves, func(i, j int) bool {
			if leaves[i].size != leaves[j].size {
				return leaves[i].size > leaves[j].size
			}
			return leaves[i].path < leaves[j].path
		})
		var names []string
		for i, l := range leaves {
			if i == 3 {
				names = append(names, "…")
				break
			}
			names = append(names, fmt.Sprintf("%s (%d bytes)", l.path, l.size))
		}
		if len(names) > 0 {
			parts = append(parts, fmt.Sprintf("%s cannot hold %s", v, strings.Join(names, ", ")))
		}
	}
	return strings.Join(parts, "; ")
}

// stashOutside returns the first path of e outside what a conversion stashes,
// "" when there is none: restoring it would change the object's identity.
func stashOutside(e *stashEntry) string {
	for k, v := range e.Set {
		switch k {
		case "spec", "status":
			continue
		case "metadata":
			m, ok := v.(map[string]any)
			if !ok || len(m) == 0 {
				// restoring an empty map would replace the whole
				// metadata (name and namespace included)
				return "metadata"
			}
			for mk := range m {
				if mk != "labels" && mk != "annotations" {
					return "metadata." + mk
				}
			}
			continue
		}
		return strconv.Quote(k)
	}
	for _, p := range e.Unset {
		switch {
		case p[0] == "spec" || p[0] == "status":
		case p[0] == "metadata" && len(p) >= 2 && (p[1] == "labels" || p[1] == "annotations"):
		default:
			return "unset path " + strings.Join(p, ".")
		}
	}
	return ""
}

package conversion

import (
	"sort"

	"github.com/orkspace/orkestra-cel/engine/jsonval"
)

// encodeStash writes the stash as JSON with sorted keys, without the
// reflection of encoding/json, which dominated the cost of a conversion.
func encodeStash(stash map[string]*stashEntry) ([]byte, error) {
	b := make([]byte, 0, 128)
	versions := make([]string, 0, len(stash))
	for v := range stash {
		versions = append(versions, v)
	}
	sort.Strings(versions)
	b = append(b, '{')
	for i, v := range versions {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonval.AppendString(b, v)
		b = append(b, ':', '{')
		e := stash[v]
		comma := false
		if len(e.Set) > 0 {
			b = append(b, `"set":`...)
			var err error
			if b, err = jsonval.Append(b, map[string]any(e.Set)); err != nil {
				return nil, err
			}
			comma = true
		}
		if len(e.Unset) > 0 {
			if comma {
				b = append(b, ',')
			}
			b = append(b, `"unset":[`...)
			for j, p := range e.Unset {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, '[')
				for k, seg := range p {
					if k > 0 {
						b = append(b, ',')
					}
					b = jsonval.AppendString(b, seg)
				}
				b = append(b, ']')
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

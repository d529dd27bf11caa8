package cel

import (
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

const totalitySchema = `
type: object
properties:
  spec:
    type: object
    required: [name, strictHostPort, replicas, items, zones, atLeastOne]
    properties:
      name: {type: string, maxLength: 32}
      note: {type: string, maxLength: 32}
      hostPort: {type: string, maxLength: 64}
      strictHostPort: {type: string, maxLength: 64, pattern: '^[a-z0-9.-]+:[0-9]{1,5}$'}
      replicas: {type: integer}
      scale: {type: integer}
      positive: {type: integer, minimum: 1}
      level: {type: integer, minimum: 1, maximum: 3}
      mode: {type: string, default: safe, maxLength: 8}
      size: {type: string, enum: [small, large]}
      anySize: {type: string, maxLength: 8}
      priority: {type: string, maxLength: 20}
      strictPriority: {type: string, maxLength: 18, pattern: '^(0|-?[1-9][0-9]*)$'}
      timeout: {type: string, maxLength: 16, pattern: '^[0-9]{1,4}[smh]$'}
      cpu: {type: string, maxLength: 16}
      tags: {type: object, maxProperties: 8, additionalProperties: {type: string, maxLength: 16}}
      zones: {type: array, maxItems: 4, items: {type: string, maxLength: 16}}
      atLeastOne: {type: array, minItems: 1, maxItems: 4, items: {type: string, maxLength: 16}}
      items:
        type: array
        maxItems: 4
        items:
          type: object
          required: [id]
          properties:
            id: {type: string, maxLength: 8}
            label: {type: string, maxLength: 8}
      keyed:
        type: array
        maxItems: 4
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [id]
        items:
          type: object
          required: [id]
          properties:
            id: {type: string, maxLength: 8}
            label: {type: string, maxLength: 8}
      distinct: {type: array, maxItems: 4, x-kubernetes-list-type: set, items: {type: string, maxLength: 16}}
`

func TestTotality(t *testing.T) {
	b := newBackend(t, Options{})
	self := schemaYAML(t, totalitySchema)
	for _, tc := range []struct {
		src  string
		want []string // "offset: message part"; none when empty
	}{
		// Reading fields.
		{src: "${self.spec.hostPort}"}, // a plain reference: absent leaves the target unset
		{src: "${self.spec.name + '!'}"},
		{src: "${self.spec.note + '!'}", want: []string{"12: spec.note is not required, so an object without it fails here (no such key); make it required or give it a default in the schema, or guard it: has(self.spec.note) ? … : …, or self.spec.?note.orValue(…)"}},
		{src: "${has(self.spec.note) ? self.spec.note + '!' : ''}"},
		{src: "${!has(self.spec.note) ? '' : self.spec.note + '!'}"},
		{src: "${has(self.spec.note) && self.spec.note != '' ? 'x' : 'y'}"},
		{src: "${self.spec.?note.orValue('') + '!'}"},
		{src: "${self.spec.?note.optMap(n, n + '!').orValue('')}"},
		{src: "${self.spec.mode + '!'}"}, // defaulted
		{src: "${self.metadata.name + '-' + self.spec.name}"},
		{src: "${self.metadata.labels.app}"}, // a plain reference all the same
		{src: "x-${self.metadata.labels.app}", want: []string{"18: metadata.labels is not required", "25: metadata.labels may have no key \"app\""}},
		{src: "${'app' in self.metadata.labels ? self.metadata.labels.app : ''}", want: []string{"metadata.labels is not required"}},
		{src: "${has(self.metadata.labels) && 'app' in self.metadata.labels ? self.metadata.labels.app : ''}"},
		{src: "${self.spec.items.map(i, i.id)}"},
		{src: "${self.spec.items.map(i, i.label)}", want: []string{"spec.items[*].label is not required, so an object without it fails here (no such key); make it required or give it a default in the schema, or guard it: has(i.label) ? … : …, or i.?label.orValue(…)"}},
		{src: "${self.spec.items.map(i, i.?label.orValue(i.id))}"},
		{src: "${cel.bind(n, self.spec.?note.orValue('x'), n + n)}"},
		// Indexes.
		{src: "${self.spec.zones[0]}", want: []string{"17: spec.zones may have fewer than 1 items (minItems is 0); add minItems: 1 to the schema, or guard it: size(self.spec.zones) > 0 ? … : …"}},
		{src: "${self.spec.atLeastOne[0]}"},
		{src: "${self.spec.atLeastOne[1]}", want: []string{"spec.atLeastOne may have fewer than 2 items (minItems is 1)"}},
		{src: "${size(self.spec.zones) > 1 ? self.spec.zones[1] : ''}"},
		{src: "${self.spec.zones.size() >= 1 ? self.spec.zones[0] : ''}"},
		{src: "${self.spec.hostPort.split(':')[0]}", want: []string{"spec.hostPort is not required"}},
		{src: "${self.spec.strictHostPort.split(':')[0]}"},
		{src: "${self.spec.strictHostPort.split(':')[1]}"},
		{src: "${self.spec.strictHostPort.split(':')[2]}", want: []string{"self.spec.strictHostPort.split(':') has fewer than 3 items for strings the schema allows (no pattern requires 2 \":\"); add a pattern that does, or guard it: self.spec.strictHostPort.split(':').size() > 2 ? … : …"}},
		{src: "${self.spec.name.split(':')[1]}", want: []string{"27: self.spec.name.split(':') has fewer than 2 items"}},
		{src: "${self.spec.name.contains(':') ? self.spec.name.split(':')[1] : ''}"},
		{src: "${self.spec.name.split(':').size() > 1 ? self.spec.name.split(':')[1] : ''}"},
		{src: "${self.spec.name.matches('^[a-z]+:[a-z]+$') ? self.spec.name.split(':')[1] : ''}"},
		{src: "${cel.bind(p, self.spec.name.split(':'), p.size() > 1 ? p[1] : '')}"},
		// Lookups in literal maps.
		{src: "${ {'small': 1, 'large': 3}[self.spec.size]}", want: []string{"spec.size is not required"}},
		{src: "${self.spec.?size.optMap(s, {'small': 1, 'large': 3}[s]).orValue(0)}"},
		{src: "${self.spec.?anySize.optMap(s, {'small': 1, 'large': 3}[s]).orValue(0)}", want: []string{"the schema allows values of spec.anySize that are not keys of the map (small, large); add an enum of those keys to the schema, or look it up with a default: {…}[?s].orValue(…)"}},
		{src: "${self.spec.?anySize.optMap(s, {'small': 1, 'large': 3}[?s].orValue(0)).orValue(0)}"},
		{src: "${self.spec.?level.optMap(l, {1: 'a', 2: 'b', 3: 'c'}[l]).orValue('')}"},
		{src: "${self.spec.?level.optMap(l, {1: 'a', 2: 'b'}[l]).orValue('')}", want: []string{"not keys of the map (1, 2)"}},
		{src: "${ {}[self.spec.name]}", want: []string{"a lookup in an empty map always fails"}},
		// Division.
		{src: "${self.spec.replicas / 2}"},
		{src: "${self.spec.replicas % 0}", want: []string{"the divisor 0 may be 0"}},
		{src: "${self.spec.replicas / self.spec.positive}", want: []string{"spec.positive is not required"}},
		{src: "${self.spec.?positive.optMap(p, self.spec.replicas / p).orValue(0)}"},
		{src: "${self.spec.?scale.optMap(s, self.spec.replicas / s).orValue(0)}", want: []string{"the divisor spec.scale may be 0 on objects the schema allows; add minimum: 1 to the schema, or guard it: s != 0 ? … : …"}},
		{src: "${self.spec.?scale.optMap(s, s != 0 ? self.spec.replicas / s : 0).orValue(0)}"},
		{src: "${self.spec.?scale.optMap(s, s > 0 ? self.spec.replicas / s : 0).orValue(0)}"},
		{src: "${double(self.spec.replicas) / 0.0}"}, // an infinity, not an error
		// Conversions of strings.
		{src: "${self.spec.?priority.optMap(p, int(p)).orValue(0)}", want: []string{"int(p) fails on values the schema allows (no pattern or enum of spec.priority guarantees its format); add a pattern such as '^-?[0-9]{1,18}$' (and a maxLength), or guard it: p.matches('^-?[0-9]{1,18}$') ? … : …"}},
		{src: "${self.spec.?strictPriority.optMap(p, int(p)).orValue(0)}"},
		{src: "${self.spec.?priority.optMap(p, p.matches('^[0-9]{1,9}$') ? int(p) : 0).orValue(0)}"},
		{src: "${self.spec.?priority.optMap(p, int(p.trim())).orValue(0)}", want: []string{"it derives from spec.priority, which no pattern or enum constrains"}},
		{src: "${int(string(self.spec.replicas) + '0')}"}, // computed from an integer: not followed
		{src: "${self.spec.?timeout.optMap(t, duration(t)).orValue(duration('0s'))}"},
		{src: "${self.spec.?cpu.optMap(c, quantity(c).milliValue()).orValue(0)}", want: []string{"quantity(c) fails on values the schema allows"}},
		{src: "${self.spec.?cpu.optMap(c, isQuantity(c) ? quantity(c).milliValue() : 0).orValue(0)}"},
		{src: "${self.spec.?note.optMap(n, json.decode(n).size()).orValue(0)}", want: []string{"json.decode(n) fails when spec.note does not hold JSON, which the schema cannot rule out"}},
		{src: "${json.decode(json.encode(self.spec.zones)).size()}"},
		// fail() and optionals.
		{src: "${self.spec.?size.optMap(s, s == 'small' ? 1 : fail('no')).orValue(0)}", want: []string{"fail(…) is reached by objects the schema accepts"}},
		{src: "${self.spec.strictHostPort.matches('^[a-z0-9.-]+:[0-9]{1,5}$') ? 'ok' : fail('bad hostPort')}"},
		// A lookup of a literal key the literal map lacks fails like
		// fail(): the peer strategies' way to fail with a message.
		{src: "${self.spec.?note.optMap(n, n.matches('^[a-z]+$') ? n : {'': ''}['note is not lower-case']).orValue('')}", want: []string{"'note is not lower-case' is not a key of the map, so the lookup fails wherever it is reached"}},
		{src: "${self.spec.strictHostPort.matches('^[a-z0-9.-]+:[0-9]{1,5}$') ? 'ok' : {'': ''}['bad hostPort']}"},
		{src: "${ {'a': 1, 'b': 2}['b'] }"},
		// transformMapEntry fails on a key it produces twice: unique are a
		// map's own keys, a guarded rename, a list-map's key field and a
		// set's items.
		{src: "${self.spec.items.transformMapEntry(i, e, {e.id: e.?label.orValue('')})}", want: []string{"transformMapEntry can give two entries of spec.items the same key e.id on objects the schema accepts, and the conversion then fails (duplicate key)"}},
		{src: "${self.spec.?keyed.optMap(l, l.transformMapEntry(i, e, {e.id: e.?label.orValue('')})).orValue({})}"},
		{src: "${self.spec.?distinct.optMap(l, l.transformMapEntry(i, z, {z: i})).orValue({})}"},
		{src: "${self.spec.zones.transformMapEntry(i, z, {z: i})}", want: []string{"transformMapEntry can give two entries of spec.zones the same key z"}},
		{src: "${self.spec.?tags.optMap(m, m.transformMapEntry(k, v, {k: v + '!'})).orValue({})}"},
		{src: "${self.spec.?tags.optMap(m, m.transformMapEntry(k, v, {v: k})).orValue({})}", want: []string{"transformMapEntry can give two entries of spec.tags the same key v"}},
		{src: "${self.spec.?tags.optMap(m, m.transformMapEntry(k, v, {k == 'app' ? 'application' : k: v})).orValue({})}", want: []string{"the same key k == 'app' ? 'application' : k"}},
		{src: "${self.spec.?tags.optMap(m, m.transformMapEntry(k, v, {k == 'app' && !('application' in m) ? 'application' : k: v})).orValue({})}"},
		{src: "${self.spec.?tags.optMap(m, m.transformMapEntry(k, v, {!('application' in m) ? 'application' : k: v})).orValue({})}", want: []string{"the same key"}},
		{src: "${self.spec.?tags.optMap(m, m.transformMapEntry(k, v, {k: v, 'x': v})).orValue({})}", want: []string{"return a map of one entry whose key is unique"}},
		{src: "${self.spec.?note.value()}", want: []string{"self.spec.?note.value() fails when the optional is none"}},
		{src: "${self.spec.?note.hasValue() ? self.spec.?note.value() : ''}"},
		{src: "${optional.of(self.spec.name).optMap(n, n + '!').value()}"},
	} {
		ctx := &engine.Context{Entry: "w", Field: "conversion.paths[0].spec.x", Pos: testPos, Self: self, SelfVersion: "v1", Total: true, TotalSeverity: katalog.Warning}
		_, diags := b.CompileValue(tc.src, ctx)
		var got []string
		for _, d := range diags {
			if d.Severity != katalog.Warning {
				t.Errorf("%s: %v", tc.src, d)
			}
			got = append(got, d.Error())
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.src, got, tc.want)
			continue
		}
		for i, w := range tc.want {
			if off, msg, ok := strings.Cut(w, ": "); ok && isDigits(off) {
				if !strings.HasPrefix(got[i], testPos.Offset(atoi(off)).String()+": warning: [w] conversion.paths[0].spec.x: expression ") {
					t.Errorf("%s: position: %s, want offset %s", tc.src, got[i], off)
				}
				w = msg
			}
			if !strings.Contains(got[i], "can fail on objects v1 accepts: ") || !strings.Contains(got[i], w) {
				t.Errorf("%s:\n got %s\nwant …%s", tc.src, got[i], w)
			}
		}
	}
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// A label a conversion writes from a field: the schema must keep its
// values valid label values.
func TestTotalityLabelValues(t *testing.T) {
	b := newBackend(t, Options{})
	self := schemaYAML(t, `
type: object
properties:
  spec:
    type: object
    properties:
      free: {type: string, maxLength: 32}
      zone: {type: string, maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'}
      long: {type: string, pattern: '^[a-z]+$'}
      tier: {type: string, enum: [gold, silver]}
      odd: {type: string, enum: [gold, 'not ok']}
`)
	for src, want := range map[string]string{
		"${self.spec.?free}":                   "the label takes spec.free, which the schema allows to be an invalid label value",
		"${self.spec.?zone}":                   "",
		"${self.spec.?long}":                   "the label takes spec.long, which the schema allows to be an invalid label value",
		"${self.spec.?tier.orValue('bronze')}": "",
		"${self.spec.?odd}":                    "the label takes spec.odd, whose enum value not ok is not a valid label value",
		"${'v' + string(1)}":                   "",
	} {
		ctx := &engine.Context{Entry: "w", Field: "conversion.paths[0].metadata.labels.x", Pos: testPos, Self: self, SelfVersion: "v1",
			Expected: schemaYAML(t, `{type: string}`), Total: true, TotalSeverity: katalog.Warning, LabelValue: true}
		_, diags := b.CompileValue(src, ctx)
		switch {
		case want == "" && len(diags) > 0:
			t.Errorf("%s: %v", src, diags)
		case want != "" && (len(diags) != 1 || !strings.Contains(diags[0].Error(), "can fail on objects v1 accepts: "+want)):
			t.Errorf("%s: %v, want …%s", src, diags, want)
		}
	}
}

package objgen

import (
	"encoding/base64"
	"fmt"
	"math"
	"net"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
)

// keywordStats counts what the generated gadgets showed, to check that each
// keyword's variety is reached (not only that constraints hold).
type keywordStats map[string]int

func (k keywordStats) see(what string) { k[what]++ }

func (k keywordStats) require(t *testing.T, whats ...string) {
	t.Helper()
	for _, w := range whats {
		if k[w] == 0 {
			t.Errorf("never saw %s in %d objects", w, objectsPerSchema)
		}
	}
}

// TestKeywordsHonoured generates gadgets and checks each schema keyword on
// every object, independently of Validate.
func TestKeywordsHonoured(t *testing.T) {
	vs := gadget(t)
	seen := keywordStats{}
	for i, obj := range Generate(vs.s, vs.gvk, objectsPerSchema, Options{Seed: 99}) {
		where := fmt.Sprintf("object %d", i)
		spec, ok := obj["spec"].(map[string]any)
		if !ok {
			t.Fatalf("%s: spec missing (it is required)", where)
		}
		checkSpec(t, where, spec, seen)
		if st, ok := obj["status"].(map[string]any); ok {
			checkStatus(t, where, st, seen)
		}
		if name, _ := lookup(obj, "metadata", "name"); len(name.(string)) > 40 {
			t.Errorf("%s: metadata.name %q exceeds the schema's maxLength 40", where, name)
		}
		if _, ok := lookup(obj, "metadata", "labels"); ok {
			seen.see("labels")
		}
		if _, ok := lookup(obj, "metadata", "annotations"); ok {
			seen.see("annotations")
		}
	}
	seen.require(t,
		"labels", "annotations",
		"nickname=null", "nickname=string", "temperature=null",
		"tier absent", "tier=default", "enabled absent", "enabled=true", "enabled=false",
		"resources absent", "resources=default", "resources=other",
		"maxUnavailable=int", "maxUnavailable=string", "targetPort=int", "targetPort=string",
		"level=1", "level=2", "level=3", "mode=fast", "mode=safe", "mode=balanced",
		"replicas=1", "replicas=10", "weight fractional",
		"extra keys", "raw object", "raw scalar", "raw list", "config extra",
		"choice=left", "choice=right", "ports>2", "tags>1", "settings>1",
		"nickname empty", "note non-ASCII",
	)
	for _, f := range formatFields {
		seen.require(t, "format "+f)
	}
}

var formatFields = []string{"createdAt", "birthday", "email", "homepage", "id", "host", "ip", "ip6", "subnet", "timeout", "payload", "mac", "shortName", "longName", "boundedEmail", "targetPortName"}

func checkSpec(t *testing.T, where string, spec map[string]any, seen keywordStats) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf(where+": "+format, args...)
	}
	// required
	for _, k := range []string{"name", "mode", "replicas", "window"} {
		if _, ok := spec[k]; !ok {
			fail("required spec.%s missing", k)
		}
	}
	// strings: lengths and patterns
	str := func(k string) (string, bool) {
		v, ok := spec[k]
		if !ok {
			return "", false
		}
		s, isStr := v.(string)
		if !isStr {
			fail("spec.%s = %#v is not a string", k, v)
		}
		return s, isStr
	}
	runes := utf8.RuneCountInString
	if s, ok := str("name"); ok && (runes(s) < 3 || runes(s) > 20 || !regexp.MustCompile(`^[a-z0-9-]+$`).MatchString(s)) {
		fail("spec.name %q violates minLength 3, maxLength 20 or its pattern", s)
	}
	if s, ok := str("image"); ok && (runes(s) > 128 || !regexp.MustCompile(`^[a-z0-9]+(\.[a-z0-9]+)*(/[a-z0-9-]+)+:v[0-9]+\.[0-9]+$`).MatchString(s)) {
		fail("spec.image %q violates its pattern or maxLength", s)
	}
	if s, ok := str("code"); ok && !regexp.MustCompile(`^[A-Z]{3}-[0-9]{4}$`).MatchString(s) {
		fail("spec.code %q violates its pattern", s)
	}
	if s, ok := str("note"); ok {
		if runes(s) > 8 {
			fail("spec.note %q is longer than 8", s)
		}
		if s != strings.ToValidUTF8(s, "") || strings.IndexFunc(s, func(r rune) bool { return r > 127 }) >= 0 {
			seen.see("note non-ASCII")
		}
	}
	if s, ok := str("longNote"); ok && (runes(s) < 30 || runes(s) > 40) {
		fail("spec.longNote %q is not 30..40 long", s)
	}
	switch v, ok := spec["nickname"]; {
	case !ok:
	case v == nil:
		seen.see("nickname=null")
	default:
		s, _ := v.(string)
		if runes(s) > 8 {
			fail("spec.nickname %q longer than 8", s)
		}
		seen.see("nickname=string")
		if s == "" {
			seen.see("nickname empty")
		}
	}
	// enums
	if m := spec["mode"]; !slices.Contains([]any{"fast", "safe", "balanced"}, m) {
		fail("spec.mode %#v not in the enum", m)
	} else {
		seen.see(fmt.Sprint("mode=", m))
	}
	if v, ok := spec["level"]; ok {
		if !slices.Contains([]any{int64(1), int64(2), int64(3)}, v) {
			fail("spec.level %#v not in the enum", v)
		}
		seen.see(fmt.Sprint("level=", v))
	}
	// integers and numbers
	intIn := func(k string, lo, hi int64) (int64, bool) {
		v, ok := spec[k]
		if !ok {
			return 0, false
		}
		n, isInt := v.(int64)
		if !isInt || n < lo || n > hi {
			fail("spec.%s = %#v, want an int64 in [%d, %d]", k, v, lo, hi)
		}
		return n, isInt
	}
	if n, ok := intIn("replicas", 1, 10); ok {
		seen.see(fmt.Sprint("replicas=", n))
	}
	intIn("exclusive", 1, 4)
	if n, ok := intIn("step", -50, 50); ok && n%5 != 0 {
		fail("spec.step %d is not a multiple of 5", n)
	}
	intIn("port", 1, 65535)
	intIn("offset", math.MinInt32*1024, -100)
	if v, ok := spec["ratio"]; ok {
		f, isFloat := v.(float64)
		if !isFloat || f <= 0 || f >= 1 {
			fail("spec.ratio %#v, want a float64 in (0, 1)", v)
		}
	}
	if v, ok := spec["weight"]; ok {
		var f float64
		switch x := v.(type) {
		case int64:
			// The API server's validator compares an integral (int64)
			// value with multipleOf truncated to an integer (0) and
			// rejects it, so only fractional multiples are valid.
			fail("spec.weight %d is integral, which the API server rejects for multipleOf 0.25", x)
		case float64:
			f = x
			seen.see("weight fractional")
		default:
			fail("spec.weight %#v is not a number", v)
		}
		if f < -10 || f > 10 || f/0.25 != math.Trunc(f/0.25) {
			fail("spec.weight %v is not a multiple of 0.25 in [-10, 10]", f)
		}
	}
	if v, ok := spec["temperature"]; ok && v == nil {
		seen.see("temperature=null")
	}
	// defaults: left out, set to the default, or set to another value
	switch v, ok := spec["tier"]; {
	case !ok:
		seen.see("tier absent")
	case v == "free":
		seen.see("tier=default")
	}
	switch v, ok := spec["enabled"]; {
	case !ok:
		seen.see("enabled absent")
	default:
		seen.see(fmt.Sprint("enabled=", v))
	}
	switch v, ok := spec["resources"]; {
	case !ok:
		seen.see("resources absent")
	case fmt.Sprint(v) == "map[cpu:100m]":
		seen.see("resources=default")
	default:
		seen.see("resources=other")
	}
	// formats
	if f, ok := spec["formats"].(map[string]any); ok {
		checkFormats(t, where, f, seen)
	}
	// int-or-string
	if v, ok := spec["maxUnavailable"]; ok {
		switch v.(type) {
		case int64:
			seen.see("maxUnavailable=int")
		case string:
			seen.see("maxUnavailable=string")
		default:
			fail("spec.maxUnavailable %#v is neither int nor string", v)
		}
	}
	if v, ok := spec["targetPort"]; ok {
		switch x := v.(type) {
		case int64:
			seen.see("targetPort=int")
			if x < 1 || x > 100 {
				fail("spec.targetPort %d outside [1, 100]", x)
			}
		case string:
			seen.see("targetPort=string")
			if !regexp.MustCompile(`^[0-9]+%$`).MatchString(x) {
				fail("spec.targetPort %q violates its pattern", x)
			}
		default:
			fail("spec.targetPort %#v is neither int nor string", v)
		}
	}
	// lists
	if v, ok := spec["tags"]; ok {
		l := v.([]any)
		if len(l) < 1 || len(l) > 4 {
			fail("spec.tags has %d items, want 1..4", len(l))
		}
		if len(l) > 1 {
			seen.see("tags>1")
		}
		set := map[any]bool{}
		for _, e := range l {
			if set[e] {
				fail("spec.tags repeats %v (list-type set)", e)
			}
			set[e] = true
		}
	}
	if v, ok := spec["args"]; ok {
		l := v.([]any)
		if len(l) > 2 {
			fail("spec.args has %d items, want at most 2", len(l))
		}
		for _, e := range l {
			if runes(e.(string)) > 6 {
				fail("spec.args item %q longer than 6", e)
			}
		}
	}
	if v, ok := spec["matrix"]; ok {
		l := v.([]any)
		if len(l) < 2 {
			fail("spec.matrix has %d items, want at least 2", len(l))
		}
		for _, row := range l {
			if r := row.([]any); len(r) > 2 {
				fail("spec.matrix row %v longer than 2", r)
			}
		}
	}
	if v, ok := spec["ports"]; ok {
		l := v.([]any)
		if len(l) < 2 || len(l) > 5 {
			fail("spec.ports has %d items, want 2..5", len(l))
		}
		if len(l) > 2 {
			seen.see("ports>2")
		}
		keys := map[string]bool{}
		for _, e := range l {
			p := e.(map[string]any)
			name, proto := p["name"], p["protocol"]
			if name == nil || proto == nil {
				fail("spec.ports item %v lacks a map key", p)
			}
			k := fmt.Sprint(name, "/", proto)
			if keys[k] {
				fail("spec.ports repeats key %s (list-type map)", k)
			}
			keys[k] = true
			if _, ok := p["port"]; !ok {
				fail("spec.ports item %v lacks required port", p)
			}
		}
	}
	// maps
	if v, ok := spec["settings"]; ok {
		m := v.(map[string]any)
		if len(m) < 1 || len(m) > 4 {
			fail("spec.settings has %d entries, want 1..4", len(m))
		}
		if len(m) > 1 {
			seen.see("settings>1")
		}
		for k, e := range m {
			if runes(e.(string)) > 16 {
				fail("spec.settings[%s] = %q longer than 16", k, e)
			}
		}
	}
	if v, ok := spec["limits"]; ok {
		for k, e := range v.(map[string]any) {
			if n, ok := e.(int64); !ok || n < 0 {
				fail("spec.limits[%s] = %#v, want an int64 >= 0", k, e)
			}
		}
	}
	if v, ok := spec["selector"]; ok {
		if m := v.(map[string]any); len(m) < 2 || len(m) > 3 {
			fail("spec.selector has %d properties, want 2..3", len(m))
		}
	}
	// preserve-unknown-fields
	if v, ok := spec["extra"]; ok {
		if len(v.(map[string]any)) > 0 {
			seen.see("extra keys")
		}
	}
	if v, ok := spec["raw"]; ok {
		switch v.(type) {
		case map[string]any:
			seen.see("raw object")
		case []any:
			seen.see("raw list")
		default:
			seen.see("raw scalar")
		}
	}
	if v, ok := spec["config"]; ok {
		c := v.(map[string]any)
		if n, ok := c["version"].(int64); !ok || n < 1 {
			fail("spec.config.version = %#v, want a required int64 >= 1", c["version"])
		}
		if len(c) > 1 {
			seen.see("config extra")
		}
	}
	// embedded resources
	for _, k := range []string{"template", "podTemplate"} {
		v, ok := spec[k]
		if !ok {
			continue
		}
		m := v.(map[string]any)
		av, _ := m["apiVersion"].(string)
		kind, _ := m["kind"].(string)
		if av == "" || kind == "" {
			fail("spec.%s lacks apiVersion or kind: %v", k, m)
		}
		if md, ok := m["metadata"].(map[string]any); ok {
			if n, ok := md["name"].(string); ok && len(validation.IsDNS1123Subdomain(n)) > 0 {
				fail("spec.%s.metadata.name %q is not a DNS subdomain", k, n)
			}
		}
		if k == "podTemplate" {
			if _, ok := m["spec"]; !ok {
				fail("spec.podTemplate lacks required spec")
			}
		}
	}
	// CEL rule and oneOf
	if w, ok := spec["window"].(map[string]any); ok {
		if w["min"].(int64) > w["max"].(int64) {
			fail("spec.window %v breaks the rule self.min <= self.max", w)
		}
	}
	if v, ok := spec["choice"]; ok {
		c := v.(map[string]any)
		_, l := c["left"]
		_, r := c["right"]
		switch {
		case l && !r:
			seen.see("choice=left")
		case r && !l:
			seen.see("choice=right")
		default:
			fail("spec.choice %v breaks oneOf left/right", c)
		}
	}
	// nesting
	if v, ok := lookup(spec, "nested", "level1", "level2", "level3", "leaf"); ok && runes(v.(string)) > 4 {
		fail("spec.nested...leaf %q longer than 4", v)
	}
}

func checkFormats(t *testing.T, where string, f map[string]any, seen keywordStats) {
	t.Helper()
	for k, v := range f {
		s := v.(string)
		seen.see("format " + k)
		var ok bool
		switch k {
		case "createdAt":
			_, err := time.Parse(time.RFC3339, s)
			ok = err == nil
		case "birthday":
			_, err := time.Parse(time.DateOnly, s)
			ok = err == nil
		case "email", "boundedEmail":
			_, err := mail.ParseAddress(s)
			ok = err == nil && (k == "email" || len(s) <= 24)
		case "homepage":
			_, err := url.ParseRequestURI(s)
			ok = err == nil
		case "id":
			ok = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`).MatchString(s)
		case "host":
			ok = strfmt.IsHostname(s)
		case "ip":
			ok = net.ParseIP(s) != nil && net.ParseIP(s).To4() != nil
		case "ip6":
			ok = net.ParseIP(s) != nil && strings.Contains(s, ":")
		case "subnet":
			_, _, err := net.ParseCIDR(s)
			ok = err == nil
		case "timeout":
			ok = strfmt.IsDuration(s)
		case "payload":
			_, err := base64.StdEncoding.DecodeString(s)
			ok = err == nil
		case "mac":
			_, err := net.ParseMAC(s)
			ok = err == nil
		case "shortName":
			ok = len(validation.IsDNS1123Label(s)) == 0
		case "longName":
			ok = len(validation.IsDNS1123Subdomain(s)) == 0
		case "targetPortName":
			ok = s != ""
		default:
			t.Errorf("%s: unexpected field spec.formats.%s", where, k)
			continue
		}
		if !ok {
			t.Errorf("%s: spec.formats.%s = %q is not a valid value of its format", where, k, s)
		}
	}
}

func checkStatus(t *testing.T, where string, st map[string]any, seen keywordStats) {
	t.Helper()
	if p, ok := st["phase"]; ok && !slices.Contains([]any{"Pending", "Ready", "Failed"}, p) {
		t.Errorf("%s: status.phase %#v not in the enum", where, p)
	}
	if v, ok := st["conditions"]; ok {
		types := map[any]bool{}
		for _, e := range v.([]any) {
			c := e.(map[string]any)
			for _, k := range []string{"type", "status", "lastTransitionTime"} {
				if _, ok := c[k]; !ok {
					t.Errorf("%s: status.conditions item lacks required %s", where, k)
				}
			}
			if types[c["type"]] {
				t.Errorf("%s: status.conditions repeats type %v", where, c["type"])
			}
			types[c["type"]] = true
		}
	}
}

// TestOptionalProbability: with optional fields off, objects hold exactly
// the required fields, defaulted fields and what minProperties forces.
func TestOptionalProbability(t *testing.T) {
	vs := gadget(t)
	allowed := map[string]bool{"name": true, "mode": true, "replicas": true, "window": true, // required
		"enabled": true, "tier": true, "resources": true} // defaulted
	for i, obj := range Generate(vs.s, vs.gvk, 100, Options{OptionalProbability: -1}) {
		if _, ok := obj["status"]; ok {
			t.Fatalf("object %d has the optional status", i)
		}
		for k := range obj["spec"].(map[string]any) {
			if !allowed[k] {
				t.Fatalf("object %d has optional spec.%s", i, k)
			}
		}
	}
	counts := map[string]int{}
	for _, obj := range Generate(vs.s, vs.gvk, 100, Options{OptionalProbability: 1}) {
		for k := range obj["spec"].(map[string]any) {
			counts[k]++
		}
	}
	for _, k := range []string{"image", "code", "note", "formats", "ports", "matrix", "settings", "template"} {
		if counts[k] != 100 {
			t.Errorf("with OptionalProbability 1, spec.%s appears in %d of 100 objects", k, counts[k])
		}
	}
}

// TestSizeBounds: MaxItems and MaxProperties bound what the schema leaves
// open, never below minItems/minProperties.
func TestSizeBounds(t *testing.T) {
	vs := gadget(t)
	for i, obj := range Generate(vs.s, vs.gvk, 200, Options{MaxItems: 1, MaxProperties: 1, OptionalProbability: 1}) {
		spec := obj["spec"].(map[string]any)
		if n := len(spec["args"].([]any)); n > 1 {
			t.Fatalf("object %d: spec.args has %d items with MaxItems 1", i, n)
		}
		if n := len(spec["ports"].([]any)); n != 2 {
			t.Fatalf("object %d: spec.ports has %d items, want minItems 2 exactly", i, n)
		}
		if n := len(spec["limits"].(map[string]any)); n > 1 {
			t.Fatalf("object %d: spec.limits has %d entries with MaxProperties 1", i, n)
		}
	}
}

// TestMaxDepth bounds arbitrary values under preserve-unknown-fields.
func TestMaxDepth(t *testing.T) {
	s := schemaFromYAML(t, `
type: object
properties:
  spec:
    x-kubernetes-preserve-unknown-fields: true
`)
	var depth func(v any) int
	depth = func(v any) int {
		d := 0
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				d = max(d, 1+depth(e))
			}
		case []any:
			for _, e := range x {
				d = max(d, 1+depth(e))
			}
		}
		return d
	}
	deepest := 0
	for i, obj := range Generate(s, gadget(t).gvk, 300, Options{MaxDepth: 3, OptionalProbability: 1}) {
		if err := Validate(s, obj); err != nil {
			t.Fatalf("object %d: %v", i, err)
		}
		d := depth(obj["spec"])
		if d > 3 {
			t.Fatalf("object %d: spec nests %d deep with MaxDepth 3:\n%s", i, d, dump(obj["spec"]))
		}
		deepest = max(deepest, d)
	}
	if deepest < 2 {
		t.Fatalf("arbitrary values never nest (deepest %d)", deepest)
	}
}

// TestUniqueItems: uniqueItems (which CRD validation forbids but structural
// schemas express) yields distinct items, objects included.
func TestUniqueItems(t *testing.T) {
	s := schemaFromYAML(t, `
type: object
required: [spec]
properties:
  spec:
    type: object
    required: [bits, pairs]
    properties:
      bits:
        type: array
        uniqueItems: true
        minItems: 2
        maxItems: 2
        items:
          type: boolean
      pairs:
        type: array
        uniqueItems: true
        minItems: 3
        items:
          type: object
          required: [a]
          properties:
            a:
              type: integer
              minimum: 0
              maximum: 2
`)
	for i, obj := range Generate(s, gadget(t).gvk, 200, Options{}) {
		if err := Validate(s, obj); err != nil {
			t.Fatalf("object %d: %v", i, err)
		}
		spec := obj["spec"].(map[string]any)
		if bits := spec["bits"].([]any); len(bits) != 2 || bits[0] == bits[1] {
			t.Fatalf("object %d: spec.bits = %v, want two distinct booleans", i, bits)
		}
		seen := map[string]bool{}
		for _, p := range spec["pairs"].([]any) {
			if k := canonical(p); seen[k] {
				t.Fatalf("object %d: spec.pairs repeats %s", i, k)
			} else {
				seen[k] = true
			}
		}
	}
}

// TestNumberEdgeCases covers number schemas the gadget does not: exclusive
// bounds that admit a single integer, fractional multipleOf on integers,
// float format, and a number range too narrow for two decimals.
func TestNumberEdgeCases(t *testing.T) {
	s := schemaFromYAML(t, `
type: object
required: [spec]
properties:
  spec:
    type: object
    required: [one, narrow, tiny, f32, big]
    properties:
      one:
        type: integer
        minimum: 6
        exclusiveMinimum: true
        maximum: 8
        exclusiveMaximum: true
      narrow:
        type: number
        minimum: 0.001
        maximum: 0.002
      tiny:
        type: number
        multipleOf: 0.1
        minimum: 0.25
        maximum: 0.75
      f32:
        type: number
        format: float
      big:
        type: integer
        minimum: 9007199254740000
`)
	for i, obj := range Generate(s, gadget(t).gvk, 300, Options{}) {
		if err := Validate(s, obj); err != nil {
			t.Fatalf("object %d: %v\n%s", i, err, dump(obj))
		}
		spec := obj["spec"].(map[string]any)
		if spec["one"] != int64(7) {
			t.Fatalf("object %d: spec.one = %v, want 7", i, spec["one"])
		}
	}
}

// TestUnrepresentableBounds: bounds the API server's validator cannot compare
// with values of the field's type make every value invalid; Generate says so
// for a required field and leaves an optional one out.
func TestUnrepresentableBounds(t *testing.T) {
	for _, field := range []string{
		"type: integer\n        minimum: 1.5",
		"type: integer\n        multipleOf: 2.5",
		"type: integer\n        format: int32\n        maximum: 10000000000",
	} {
		for _, required := range []bool{true, false} {
			req := "[ok]"
			if required {
				req = "[ok, x]"
			}
			s := schemaFromYAML(t, fmt.Sprintf(`
type: object
required: [spec]
properties:
  spec:
    type: object
    required: %s
    properties:
      ok:
        type: string
      x:
        %s
`, req, field))
			objs, err := TryGenerate(s, gadget(t).gvk, 5, Options{OptionalProbability: 1})
			if required {
				if err == nil || !strings.Contains(err.Error(), "spec.x: the API server rejects every value") {
					t.Errorf("%q: got %v, want an error naming spec.x", field, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%q: %v", field, err)
			}
			for _, obj := range objs {
				if _, ok := lookup(obj, "spec", "x"); ok {
					t.Fatalf("%q: generated spec.x although no value is valid", field)
				}
				obj["spec"].(map[string]any)["x"] = int64(2)
				if err := Validate(s, obj); err == nil || !strings.Contains(err.Error(), "spec.x") {
					t.Fatalf("%q: Validate accepted spec.x = 2: %v", field, err)
				}
			}
		}
	}
}

// TestPatterns: the pattern generator on common CRD patterns.
func TestPatterns(t *testing.T) {
	patterns := []string{
		`^[a-z0-9-]+$`,
		`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`,
		`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`,
		`^(\d+(\.\d+)?)(m|Mi|Gi|Ki)?$`,
		`^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$`,
		`^v[0-9]+(alpha|beta)?[0-9]*$`,
		`^(http|https)://[^\s/$.?#].[^\s]*$`,
		`^\w+@\w+\.(com|org)$`,
		`(?i)^[A-F0-9]{4}$`,
		`^[^/]+/[^/]+$`,
		`^.{3,5}$`,
		`abc`,
	}
	for _, p := range patterns {
		s := schemaFromYAML(t, fmt.Sprintf(`
type: object
required: [spec]
properties:
  spec:
    type: object
    required: [v]
    properties:
      v:
        type: string
        maxLength: 40
        pattern: '%s'
`, p))
		re := regexp.MustCompile(p)
		for i, obj := range Generate(s, gadget(t).gvk, 50, Options{}) {
			v := obj["spec"].(map[string]any)["v"].(string)
			if !re.MatchString(v) || len(v) > 40 {
				t.Fatalf("pattern %s: object %d has %q", p, i, v)
			}
		}
	}
}

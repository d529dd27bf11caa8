package cel

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/orkspace/orkestra-cel/engine"
)

func TestConversionLibrary(t *testing.T) {
	b := newBackend(t, Options{})
	runValueCases(t, b, []valueCase{
		// fail()
		{name: "fail in an unreached branch", src: "${self.spec.tier == 'pro' ? 'p' : fail('tier ' + self.spec.tier + ' has no counterpart')}", expected: "string", want: "p"},
		{name: "fail reached", src: "${self.spec.tier == 'free' ? 'f' : fail('tier ' + self.spec.tier + ' has no counterpart')}", expected: "string",
			errText: "expression ${self.spec.tier == 'free' ? 'f' : fail('tier ' + self.spec.tier + ' has no counterpart')}: tier pro has no counterpart"},
		{name: "fail takes the type of its place", src: "${self.spec.replicas > 0 ? self.spec.replicas : fail('no replicas')}", expected: "integer", want: int64(3)},
		{name: "fail needs a string", src: "${fail(1)}",
			diags: []string{at(26, "expression ${fail(1)}: found no matching overload for 'fail' applied to '(int)'")}},
		// cel.bind
		{name: "bind", src: "${cel.bind(parts, self.spec.image.split(':'), parts.size() > 1 ? parts[1] : 'latest')}", want: "latest"},
		{name: "bind nested", src: "${cel.bind(a, self.spec.replicas, cel.bind(b, a * 2, a + b))}", want: int64(9)},
		// math
		{name: "round half away from zero", src: "${math.round(2.5)}", want: float64(3)},
		{name: "round negative", src: "${math.round(-2.5)}", want: float64(-3)},
		{name: "trunc", src: "${int(math.trunc(-7.9))}", want: int64(-7)},
		{name: "ceil", src: "${int(math.ceil(double(self.spec.replicas) / 2.0))}", want: int64(2)},
		{name: "floor", src: "${math.floor(self.spec.ratio)}", want: float64(0)},
		{name: "greatest of a list", src: "${math.greatest(self.spec.objs.map(o, o.value))}", want: int64(2)},
		{name: "least of values", src: "${math.least(self.spec.replicas, 2)}", want: int64(2)},
		{name: "abs", src: "${math.abs(-4)}", want: int64(4)},
		// JSON
		{name: "encode sorts keys and escapes HTML", src: `${json.encode({'b': dyn(1), 'a': dyn(['<x>', '&'])})}`, want: `{"a":["\u003cx\u003e","\u0026"],"b":1}`},
		{name: "encode an object of self", src: "${json.encode(self.spec.nested)}", want: `{"a":1,"b":"two"}`},
		{name: "encode none", src: "${json.encode(self.spec.labels[?'nope'])}",
			errText: "expression ${json.encode(self.spec.labels[?'nope'])}: json.encode: optional.none() has no JSON form; give it a default with .orValue(…)"},
		{name: "decode", src: `${json.decode(self.metadata.annotations.note == 'hello' ? '{"a": [1, 2.5, "x"], "b": {"c": true}}' : '{}')}`,
			want: map[string]any{"a": []any{int64(1), 2.5, "x"}, "b": map[string]any{"c": true}}},
		{name: "decode a field", src: `${json.decode('{"replicas": 4}').replicas}`, expected: "integer", want: int64(4)},
		{name: "decode invalid", src: `${json.decode('{"a": ')}`,
			errText: `expression ${json.decode('{"a": ')}: json.decode: not valid JSON: unexpected end of JSON input`},
		{name: "decode too deep", src: "${json.decode('" + strings.Repeat("[", 70) + strings.Repeat("]", 70) + "')}",
			errText: "expression ${json.decode('" + strings.Repeat("[", 70) + strings.Repeat("]", 70) + "')}: json.decode: nested deeper than 64 levels"},
		{name: "encode and decode", src: "${json.decode(json.encode(self.spec.nested)) == {'a': dyn(1), 'b': dyn('two')}}", want: true},
		// quantities
		{name: "milliValue", src: "${quantity('1.5').milliValue()}", want: int64(1500)},
		{name: "milliValue rounds up", src: "${quantity('1.0001').milliValue()}", want: int64(1001)},
		{name: "milliValue of binary", src: "${quantity('1Ki').milliValue()}", want: int64(1024000)},
		{name: "milliValue of a negative", src: "${quantity('-0.0015').milliValue()}", want: int64(-1)},
		{name: "milliValue too large", src: "${quantity('10E').milliValue()}",
			errText: "expression ${quantity('10E').milliValue()}: quantity 10E in thousandths does not fit an int (±9.2e18)"},
		{name: "canonical string", src: "${string(quantity('1500m'))}", want: "1500m"},
		{name: "canonical string of a decimal", src: "${string(quantity('0.5'))}", want: "500m"},
		{name: "canonical string of binary", src: "${string(quantity('1024Mi'))}", want: "1Gi"},
		{name: "millis to a quantity", src: "${string(quantity(string(self.spec.replicas * 500) + 'm'))}", want: "1500m"},
	})
}

// The estimated cost of a library call grows with its input, as for the
// other functions: reading an unbounded annotation in a nested loop is
// within budget, decoding or encoding it there is not.
func TestConversionLibraryCost(t *testing.T) {
	b := newBackend(t, Options{})
	ctx := &engine.Context{Entry: "widget", Field: "spec.x", Pos: testPos, Self: widget(t)}
	for _, tc := range []struct {
		src  string
		over bool
	}{
		{"${self.spec.bounded.map(x, self.spec.bounded.map(y, self.metadata.annotations.note)).size()}", false},
		{"${self.spec.bounded.map(x, self.spec.bounded.map(y, json.decode(self.metadata.annotations.note))).size()}", true},
		{"${self.spec.bounded.map(x, self.spec.bounded.map(y, json.encode(self.metadata.annotations))).size()}", true},
	} {
		_, diags := b.CompileValue(tc.src, ctx)
		over := len(diags) == 1 && strings.Contains(diags[0].Error(), "exceeds budget")
		if over != tc.over || (!tc.over && len(diags) > 0) {
			t.Errorf("%s: over budget %v, want %v (%v)", tc.src, over, tc.over, diags)
		}
	}
}

// The additions exist from compatibility version 1.37 on: at an older
// pinned version they are not declared.
func TestConversionLibraryNeedsItsVersion(t *testing.T) {
	for _, tc := range []struct {
		v    *version.Version
		want bool
	}{{version.MajorMinor(1, 36), false}, {version.MajorMinor(1, 37), true}} {
		set, err := envSetAt(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		env := set.NewExpressionsEnv()
		for _, src := range []string{"fail('x')", "cel.bind(a, 1, a)", "math.round(1.5)", "json.encode(1)", "quantity('1').milliValue()"} {
			_, iss := env.Compile(src)
			if got := iss == nil || iss.Err() == nil; got != tc.want {
				t.Errorf("at %s, %s compiles: %v, want %v (%v)", tc.v, src, got, tc.want, iss.Err())
			}
		}
	}
}

// The README's examples of the conversion additions, as written there.
func TestConversionLibraryReadmeExamples(t *testing.T) {
	b := newBackend(t, Options{})
	self := schemaYAML(t, `
type: object
properties:
  spec:
    type: object
    properties:
      tier: {type: string, maxLength: 8}
      hostPort: {type: string, maxLength: 64}
      memoryGiB: {type: number}
      owner: {type: object, properties: {team: {type: string, maxLength: 16}}}
      cpu: {type: string, maxLength: 8}
      cpuMillis: {type: integer}
`)
	obj := objYAML(t, `
metadata: {name: x, annotations: {example.com/owner: '{"team": "web"}'}}
spec: {tier: c, hostPort: 'db:5432', memoryGiB: 1.5, owner: {team: web}, cpu: '1.5', cpuMillis: 2000}
`)
	for src, want := range map[string]any{
		"${self.spec.tier in ['a', 'b'] ? self.spec.tier : fail('tier ' + self.spec.tier + ' has no counterpart')}": "tier c has no counterpart",
		"${cel.bind(p, self.spec.hostPort.split(':'), p.size() > 1 ? p[1] : '80')}":                                 "5432",
		"${int(math.round(self.spec.memoryGiB * 1024.0))}":                                                          int64(1536),
		"${json.encode(self.spec.owner)}":                                                                           `{"team":"web"}`,
		"${json.decode(self.metadata.annotations['example.com/owner']).team}":                                       "web",
		"${quantity(self.spec.cpu).milliValue()}":                                                                   int64(1500),
		"${string(quantity(string(self.spec.cpuMillis) + 'm'))}":                                                    "2",
		"${format.labelValue().validate('not ok!').hasValue()}":                                                     true,
	} {
		e, diags := b.CompileValue(src, &engine.Context{Entry: "x", Field: "spec.x", Pos: testPos, Self: self})
		if len(diags) > 0 {
			t.Fatalf("%s: %v", src, diags)
		}
		v, err := e.Eval(engine.NewScope(obj))
		if err != nil {
			v = strings.TrimPrefix(err.Error(), "expression "+src+": ")
		}
		if v != want {
			t.Errorf("%s = %#v, want %#v", src, v, want)
		}
	}
}

package cel

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

var (
	widgetOnce    sync.Once
	widgetSchemas map[string]*structuralschema.Structural
)

func widget(t testing.TB) *structuralschema.Structural {
	widgetOnce.Do(func() { widgetSchemas = crdSchemas(t, "testdata/widget-crd.yaml") })
	return widgetSchemas["v1"]
}

const widgetObj = `
apiVersion: test.orkestra.io/v1
kind: Widget
metadata:
  name: w1
  generateName: w-
  namespace: default
  uid: 6a1f8a9e-0000-4000-8000-000000000001
  resourceVersion: "42"
  generation: 3
  creationTimestamp: "2024-01-02T03:04:05Z"
  labels: {app: w1, tier: web}
  annotations: {note: hello}
  finalizers: [orkestra.orkspace.io/finalizer]
  ownerReferences:
    - {apiVersion: v1, kind: Owner, name: boss, uid: u-1, controller: true}
spec:
  image: nginx
  replicas: 3
  ratio: 0.5
  enabled: true
  tier: pro
  items: [a, b]
  bounded: [x]
  objs: [{name: first, value: 1}, {name: second, value: 2}]
  labels: {k: v}
  config:
    deep: {num: 1, list: [1, 2.5, "s"], flag: true}
    size: 1.5
    whole: 2.0
  port: 8080
  foo-bar: fb
  a.b: ab
  namespace: ns
  in: 7
  schedule: "*/5 * * * *"
  created: "2024-01-02T03:04:05Z"
  nested: {a: 1, b: two}
`

// schemas for ctx.Expected, by name.
var expectedSchemas = map[string]string{
	"integer":     `{type: integer}`,
	"number":      `{type: number}`,
	"string":      `{type: string}`,
	"boolean":     `{type: boolean}`,
	"intOrString": `{x-kubernetes-int-or-string: true}`,
	"any":         `{x-kubernetes-preserve-unknown-fields: true}`,
	"strings":     `{type: array, items: {type: string}}`,
	"ints":        `{type: array, items: {type: integer}}`,
	"stringMap":   `{type: object, additionalProperties: {type: string}}`,
	"intMap":      `{type: object, additionalProperties: {type: integer}}`,
	"ab":          `{type: object, properties: {a: {type: integer}, b: {type: string}}}`,
	"abOpen":      `{type: object, x-kubernetes-preserve-unknown-fields: true, properties: {a: {type: integer}}}`,
	"tier":        `{type: string, enum: [free, pro, enterprise]}`,
	"nullable":    `{type: string, nullable: true}`,
	"bytes":       `{type: string, format: byte}`,
	"objs":        `{type: array, items: {type: object, properties: {name: {type: string}, value: {type: integer}}}}`,
	"objsStr":     `{type: array, items: {type: object, properties: {name: {type: string}, value: {type: string}}}}`,
}

type valueCase struct {
	name     string
	src      string
	expected string // key of expectedSchemas; "" = anything
	field    string // ctx.Field; default spec.replicas
	random   bool   // ctx.AllowRandom
	diags    []string
	want     any   // when no diags: Eval result on widgetObj
	wantErr  error // engine.ErrAbsent, or
	errText  string
}

func runValueCases(t *testing.T, b *Backend, cases []valueCase) {
	t.Helper()
	obj := objYAML(t, widgetObj)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := &engine.Context{Entry: "widget", Field: tc.field, Pos: testPos, Self: widget(t), SelfVersion: "v1", AllowRandom: tc.random}
			if ctx.Field == "" {
				ctx.Field = "spec.replicas"
			}
			if tc.expected != "" {
				ctx.Expected = schemaYAML(t, expectedSchemas[tc.expected])
			}
			e, diags := b.CompileValue(tc.src, ctx)
			got := make([]string, len(diags))
			for i, d := range diags {
				got[i] = d.Error()
			}
			if !reflect.DeepEqual(got, nilIfEmpty(tc.diags)) && !(len(got) == 0 && len(tc.diags) == 0) {
				t.Fatalf("diagnostics:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(tc.diags, "\n     "))
			}
			if len(tc.diags) > 0 {
				if e != nil {
					t.Fatalf("an expression with errors compiled")
				}
				for _, d := range diags {
					if d.Entry != "widget" || d.Field != ctx.Field || d.Severity != katalog.Error {
						t.Errorf("diagnostic context %+v", d)
					}
				}
				return
			}
			if e.Engine() != "cel" || e.Source() != tc.src || e.Pos() != testPos {
				t.Errorf("Engine/Source/Pos = %q %q %v", e.Engine(), e.Source(), e.Pos())
			}
			v, err := e.Eval(engine.NewScope(obj))
			switch {
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Eval = %#v, %v; want error %v", v, err, tc.wantErr)
				}
			case tc.errText != "":
				if err == nil || err.Error() != tc.errText {
					t.Fatalf("Eval error:\n got %v\nwant %s", err, tc.errText)
				}
			default:
				if err != nil {
					t.Fatalf("Eval: %v", err)
				}
				if !reflect.DeepEqual(v, tc.want) {
					t.Fatalf("Eval = %#v (%T), want %#v (%T)", v, v, tc.want, tc.want)
				}
			}
		})
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return []string{}
	}
	return s
}

// at prefixes a message with the diagnostic header for column col of line 10.
func at(col int, msg string) string {
	return "katalog.yaml:10:" + strconv.Itoa(col) + ": [widget] spec.replicas: " + msg
}

func atField(col int, field, msg string) string {
	return "katalog.yaml:10:" + strconv.Itoa(col) + ": [widget] " + field + ": " + msg
}

func TestTypedWholeFieldOutputs(t *testing.T) {
	b := newBackend(t, Options{})
	runValueCases(t, b, []valueCase{
		{name: "int stays int", src: "${self.spec.replicas}", expected: "integer", want: int64(3)},
		{name: "int arithmetic", src: "${self.spec.replicas * 2}", expected: "integer", want: int64(6)},
		{name: "int into number", src: "${self.spec.replicas}", expected: "number", want: int64(3)},
		{name: "double", src: "${self.spec.ratio}", expected: "number", want: 0.5},
		{name: "bool", src: "${self.spec.enabled}", expected: "boolean", want: true},
		{name: "string", src: "${self.spec.image}", expected: "string", want: "nginx"},
		{name: "uint into integer", src: "${uint(self.spec.replicas)}", expected: "integer", want: int64(3)},
		{name: "int into int-or-string", src: "${self.spec.replicas}", expected: "intOrString", want: int64(3)},
		{name: "string into int-or-string", src: "${self.spec.image}", expected: "intOrString", want: "nginx"},
		{name: "int-or-string source", src: "${self.spec.port}", expected: "intOrString", want: int64(8080)},
		{name: "list", src: "${self.spec.items}", expected: "strings", want: []any{"a", "b"}},
		{name: "list literal", src: "${[self.spec.image, 'x']}", expected: "strings", want: []any{"nginx", "x"}},
		{name: "map", src: "${self.metadata.labels}", expected: "stringMap", want: map[string]any{"app": "w1", "tier": "web"}},
		{name: "map literal into object", src: "${ {'a': dyn(self.spec.replicas), 'b': dyn(self.spec.image)} }", expected: "ab", want: map[string]any{"a": int64(3), "b": "nginx"}},
		{name: "object into object", src: "${self.spec.nested}", expected: "ab", want: map[string]any{"a": int64(1), "b": "two"}},
		{name: "object into map", src: "${self.spec.labels}", expected: "stringMap", want: map[string]any{"k": "v"}},
		{name: "list of objects", src: "${self.spec.objs}", expected: "objs", want: []any{map[string]any{"name": "first", "value": int64(1)}, map[string]any{"name": "second", "value": int64(2)}}},
		{name: "computed list of objects", src: "${self.spec.objs.map(o, {'name': o.name, 'value': string(o.value)})}", expected: "objsStr",
			want: []any{map[string]any{"name": "first", "value": "1"}, map[string]any{"name": "second", "value": "2"}}},
		{name: "anything", src: "${self.spec.config}", expected: "any", want: map[string]any{"deep": map[string]any{"num": int64(1), "list": []any{int64(1), 2.5, "s"}, "flag": true}, "size": 1.5, "whole": int64(2)}},
		{name: "timestamp into string", src: "${timestamp(self.spec.created) + duration('1h')}", expected: "string", want: "2024-01-02T04:04:05Z"},
		{name: "duration into string", src: "${duration('90m')}", expected: "string", want: "1h30m0s"},
		{name: "bytes into byte string", src: "${b'hi'}", expected: "bytes", want: "aGk="},
		{name: "null into nullable", src: "${null}", expected: "nullable", want: nil},
		{name: "ternary", src: "${self.spec.replicas > 2 ? 'big' : 'small'}", expected: "string", want: "big"},
		{name: "enum subset", src: "${self.spec.plan}", expected: "tier", wantErr: engine.ErrAbsent},
		{name: "enum constant", src: "${'pro'}", expected: "tier", want: "pro"},
		{name: "date-time stays a string", src: "${self.spec.created}", expected: "string", want: "2024-01-02T03:04:05Z"},
		{name: "dyn checked at runtime", src: "${self.spec.config.deep.num}", expected: "integer", want: int64(1)},
		{name: "dyn whole float into integer", src: "${self.spec.config.whole}", expected: "integer", want: int64(2)},
		{name: "dyn checked at runtime: mismatch", src: "${self.spec.config.size}", expected: "integer",
			errText: "expression ${self.spec.config.size} yields double at runtime, but spec.replicas expects an integer"},
		{name: "dyn map checked at runtime: unknown field", src: "${self.spec.config.deep}", expected: "ab",
			errText: "expression ${self.spec.config.deep} yields an object with field flag, but spec.replicas has no field flag (it has a, b)"},
		{name: "dyn map into object", src: "${self.spec.config.deep}", expected: "abOpen", want: map[string]any{"num": int64(1), "list": []any{int64(1), 2.5, "s"}, "flag": true}},
		{name: "map into open object", src: "${ {'a': dyn(1), 'extra': dyn('x')} }", expected: "abOpen", want: map[string]any{"a": int64(1), "extra": "x"}},
	})
}

func TestOutputTypeMismatches(t *testing.T) {
	b := newBackend(t, Options{})
	runValueCases(t, b, []valueCase{
		{name: "string into integer", src: "${self.spec.image}", expected: "integer",
			diags: []string{at(20, "expression ${self.spec.image} yields string, but spec.replicas expects an integer; convert with int(self.spec.image)")}},
		{name: "double into integer", src: "${self.spec.ratio}", expected: "integer",
			diags: []string{at(20, "expression ${self.spec.ratio} yields double, but spec.replicas expects an integer; convert with int(self.spec.ratio)")}},
		{name: "string into number", src: "${self.spec.image}", expected: "number",
			diags: []string{at(20, "expression ${self.spec.image} yields string, but spec.replicas expects a number; convert with double(self.spec.image)")}},
		{name: "int into string", src: "${self.spec.replicas}", expected: "string", field: "spec.image",
			diags: []string{atField(20, "spec.image", "expression ${self.spec.replicas} yields int, but spec.image expects a string; convert with string(self.spec.replicas)")}},
		{name: "bool into string", src: "${self.spec.enabled}", expected: "string",
			diags: []string{at(20, "expression ${self.spec.enabled} yields bool, but spec.replicas expects a string; convert with string(self.spec.enabled)")}},
		{name: "string into boolean", src: "${self.spec.image}", expected: "boolean",
			diags: []string{at(20, "expression ${self.spec.image} yields string, but spec.replicas expects a boolean; compare it, e.g. self.spec.image == 'true'")}},
		{name: "int into boolean", src: "${self.spec.replicas}", expected: "boolean",
			diags: []string{at(20, "expression ${self.spec.replicas} yields int, but spec.replicas expects a boolean; compare it, e.g. self.spec.replicas > 0")}},
		{name: "double into int-or-string", src: "${self.spec.ratio}", expected: "intOrString",
			diags: []string{at(20, "expression ${self.spec.ratio} yields double, but spec.replicas expects an integer or a string; convert with int(self.spec.ratio) or string(self.spec.ratio)")}},
		{name: "bytes into string", src: "${b'x'}", expected: "string",
			diags: []string{at(20, "expression ${b'x'} yields bytes, but spec.replicas expects a string; convert with string(b'x')")}},
		{name: "null into string", src: "${null}", expected: "string",
			diags: []string{at(20, "expression ${null} yields null, but spec.replicas expects a string; leave the field out instead (an optional value, e.g. self.?spec.?x, leaves it unset when absent)")}},
		{name: "list into string", src: "${self.spec.items}", expected: "string",
			diags: []string{at(20, "expression ${self.spec.items} yields list(string), but spec.replicas expects a string")}},
		{name: "scalar into list", src: "${self.spec.image}", expected: "strings",
			diags: []string{at(20, "expression ${self.spec.image} yields string, but spec.replicas expects a list of strings")}},
		{name: "list element type", src: "${self.spec.items}", expected: "ints",
			diags: []string{at(20, "expression ${self.spec.items} (its elements) yields string, but spec.replicas[*] expects an integer; convert with int(...)")}},
		{name: "heterogeneous list literal", src: "${[1, self.spec.replicas, 'x']}", expected: "ints",
			diags: []string{at(46, "expression ${[1, self.spec.replicas, 'x']}: expected type 'int' but found 'string'; Kubernetes CEL needs list and map literals of one type: wrap each value in dyn(), e.g. {'a': dyn(1), 'b': dyn('x')}")}},
		{name: "list literal with dyn", src: "${[dyn(1), dyn(self.spec.replicas), dyn('x')]}", expected: "ints",
			diags: []string{at(60, "expression ${[dyn(1), dyn(self.spec.replicas), dyn('x')]}: list element 2 yields string, but spec.replicas[*] expects an integer; convert with int('x')")}},
		{name: "list literal of strings", src: "${[self.spec.image, 'x']}", expected: "ints",
			diags: []string{
				at(23, "expression ${[self.spec.image, 'x']}: list element 0 yields string, but spec.replicas[*] expects an integer; convert with int(self.spec.image)"),
				at(40, "expression ${[self.spec.image, 'x']}: list element 1 yields string, but spec.replicas[*] expects an integer; convert with int('x')"),
			}},
		{name: "map value type", src: "${self.metadata.labels}", expected: "intMap",
			diags: []string{at(20, "expression ${self.metadata.labels} (its values) yields string, but spec.replicas[*] expects an integer; convert with int(...)")}},
		{name: "map into list", src: "${self.metadata.labels}", expected: "strings",
			diags: []string{at(20, "expression ${self.metadata.labels} yields map(string, string), but spec.replicas expects a list of strings")}},
		{name: "map literal value", src: "${ {'a': dyn('one'), 'b': dyn(2)} }", expected: "ab",
			diags: []string{
				at(33, "expression ${ {'a': dyn('one'), 'b': dyn(2)} }: the value of \"a\" yields string, but spec.replicas.a expects an integer; convert with int('one')"),
				at(50, "expression ${ {'a': dyn('one'), 'b': dyn(2)} }: the value of \"b\" yields int, but spec.replicas.b expects a string; convert with string(2)"),
			}},
		{name: "heterogeneous map literal", src: "${ {'a': 1, 'b': 'x'} }", expected: "ab",
			diags: []string{at(37, "expression ${ {'a': 1, 'b': 'x'} }: expected type 'int' but found 'string'; Kubernetes CEL needs list and map literals of one type: wrap each value in dyn(), e.g. {'a': dyn(1), 'b': dyn('x')}")}},
		{name: "object field type", src: "${self.spec.nested}", expected: "objsStr",
			diags: []string{at(20, "expression ${self.spec.nested} yields object(self.spec.nested), but spec.replicas expects a list of objects")}},
	})
}

func TestUnknownTargetFields(t *testing.T) {
	b := newBackend(t, Options{})
	runValueCases(t, b, []valueCase{
		{name: "map literal key with did-you-mean", src: "${ {'a': dyn(1), 'bb': dyn('x')} }", expected: "ab", field: "spec.seo",
			diags: []string{atField(37, "spec.seo", "expression ${ {'a': dyn(1), 'bb': dyn('x')} }: spec.seo has no field \"bb\"; did you mean b?")}},
		{name: "map literal key without close match", src: "${ {'zzz': 1} }", expected: "ab", field: "spec.seo",
			diags: []string{atField(24, "spec.seo", "expression ${ {'zzz': 1} }: spec.seo has no field \"zzz\" (it has a, b)")}},
		{name: "object field", src: "${self.spec.objs[0]}", expected: "ab", field: "spec.seo",
			diags: []string{
				atField(20, "spec.seo", "expression ${self.spec.objs[0]} yields an object with field name, but spec.seo has no field name (it has a, b)"),
				atField(20, "spec.seo", "expression ${self.spec.objs[0]} yields an object with field value, but spec.seo has no field value (it has a, b)"),
			}},
		{name: "open object accepts unknown fields", src: "${ {'a': 1, 'zzz': 2} }", expected: "abOpen", want: map[string]any{"a": int64(1), "zzz": int64(2)}},
	})
}

func TestEnumSubset(t *testing.T) {
	b := newBackend(t, Options{})
	runValueCases(t, b, []valueCase{
		{name: "subset", src: "${self.spec.plan}", expected: "tier", field: "spec.tier", wantErr: engine.ErrAbsent},
		{name: "not a subset", src: "${self.spec.tier}", expected: "tier", field: "spec.tier",
			diags: []string{atField(20, "spec.tier", "expression ${self.spec.tier} can yield gold, which spec.tier does not allow (self.spec.tier allows free, pro, enterprise, gold; spec.tier allows free, pro, enterprise); map those values, e.g. ${self.spec.tier == 'gold' ? 'free' : self.spec.tier}")}},
		{name: "optional reference", src: "${self.spec.?tier}", expected: "tier", field: "spec.tier",
			diags: []string{atField(20, "spec.tier", "expression ${self.spec.?tier} can yield gold, which spec.tier does not allow (self.spec.tier allows free, pro, enterprise, gold; spec.tier allows free, pro, enterprise); map those values, e.g. ${self.spec.tier == 'gold' ? 'free' : self.spec.tier}")}},
		{name: "constant not allowed", src: "${'gold'}", expected: "tier", field: "spec.tier",
			diags: []string{atField(20, "spec.tier", "expression ${'gold'} yields \"gold\", which spec.tier does not allow (allowed: free, pro, enterprise)")}},
		{name: "mapped", src: "${self.spec.tier == 'gold' ? 'enterprise' : self.spec.tier}", expected: "tier", field: "spec.tier", want: "pro"},
	})
}

func TestInterpolation(t *testing.T) {
	b := newBackend(t, Options{})
	runValueCases(t, b, []valueCase{
		{name: "string", src: "${self.metadata.name}-svc", expected: "string", want: "w1-svc"},
		{name: "int", src: "replicas=${self.spec.replicas}", expected: "string", want: "replicas=3"},
		{name: "double", src: "ratio=${self.spec.ratio}", want: "ratio=0.5"},
		{name: "whole double", src: "${double(self.spec.replicas)}", expected: "number", want: float64(3)},
		{name: "whole double interpolated", src: "x${double(self.spec.replicas)}", want: "x3"},
		{name: "large double", src: "x${1e6 * 1.0}", want: "x1000000"},
		{name: "huge double", src: "x${1e21}", want: "x1e+21"},
		{name: "tiny double", src: "x${1e-7}", want: "x1e-07"},
		{name: "small double", src: "x${0.000001}", want: "x0.000001"},
		{name: "negative double", src: "x${-2.25}", want: "x-2.25"},
		{name: "bool", src: "enabled=${self.spec.enabled}", want: "enabled=true"},
		{name: "uint", src: "x${uint(7)}", want: "x7"},
		{name: "several", src: "${self.metadata.name}.${self.metadata.namespace}.svc.cluster.local", want: "w1.default.svc.cluster.local"},
		{name: "escape", src: "$${HOME}/${self.metadata.name}", want: "${HOME}/w1"},
		{name: "only escape", src: "$${x}", expected: "string", want: "${x}"},
		{name: "dyn formatted at runtime", src: "n=${self.spec.config.deep.num}", want: "n=1"},
		{name: "int-or-string formatted", src: "port ${self.spec.port}", want: "port 8080"},
		{name: "timestamp formatted", src: "at ${timestamp(self.spec.created)}", want: "at 2024-01-02T03:04:05Z"},
		{name: "into int-or-string", src: "${self.spec.replicas}%", expected: "intOrString", want: "3%"},
		{name: "absent field", src: "x-${self.spec.plan}",
			errText: "expression ${self.spec.plan}: self.spec.plan is absent; give it a default, e.g. ${self.?spec.?plan.orValue('')}"},
		{name: "dyn map at runtime", src: "x-${self.spec.config.deep}",
			errText: "expression ${self.spec.config.deep} yields a map at runtime, which cannot be interpolated into a string"},
		{name: "list", src: "items: ${self.spec.items}",
			diags: []string{at(27, "expression ${self.spec.items} yields list(string), which cannot be interpolated into a string; join it, e.g. ${self.spec.items.join(',')}, or make the expression the whole value to keep the list")}},
		{name: "list of ints", src: "x${[1, 2]}",
			diags: []string{at(21, "expression ${[1, 2]} yields list(int), which cannot be interpolated into a string; join it, e.g. ${[1, 2].map(x, string(x)).join(',')}, or make the expression the whole value to keep the list")}},
		{name: "map", src: "${self.metadata.labels}!",
			diags: []string{at(20, "expression ${self.metadata.labels} yields map(string, string), which cannot be interpolated into a string; make the expression the whole value to keep the map, or pick a field of it")}},
		{name: "object", src: "${self.spec.nested}!",
			diags: []string{at(20, "expression ${self.spec.nested} yields object(self.spec.nested), which cannot be interpolated into a string; make the expression the whole value to keep the map, or pick a field of it")}},
		{name: "optional", src: "${self.spec.?plan}!",
			diags: []string{at(20, "expression ${self.spec.?plan} yields optional(string), which cannot be interpolated into a string; give it a default, e.g. ${self.spec.?plan.orValue('')}")}},
		{name: "into integer", src: "${self.spec.replicas}0", expected: "integer",
			diags: []string{at(20, "\"${self.spec.replicas}0\" interpolates text into a string, but spec.replicas expects an integer; write the value as a single ${…} expression to keep its type")}},
		{name: "text into integer", src: "$${x}", expected: "integer",
			diags: []string{at(20, "\"$${x}\" is a string, but spec.replicas expects an integer")}},
		{name: "every problem", src: "${self.spec.items}-${self.metadata.labels}-${nope}",
			diags: []string{
				at(20, "expression ${self.spec.items} yields list(string), which cannot be interpolated into a string; join it, e.g. ${self.spec.items.join(',')}, or make the expression the whole value to keep the list"),
				at(39, "expression ${self.metadata.labels} yields map(string, string), which cannot be interpolated into a string; make the expression the whole value to keep the map, or pick a field of it"),
				at(65, "expression ${nope}: undeclared reference to 'nope'"),
			}},
	})
}

func TestCompileErrors(t *testing.T) {
	b := newBackend(t, Options{})
	runValueCases(t, b, []valueCase{
		{name: "undefined field", src: "${self.spec.replicaz}",
			diags: []string{at(32, "expression ${self.spec.replicaz}: undefined field 'replicaz'; did you mean replicas?")}},
		{name: "undefined field in interpolation", src: "name: ${self.metadata.nmae}",
			diags: []string{at(42, "expression ${self.metadata.nmae}: undefined field 'nmae'; did you mean name?")}},
		{name: "undefined field lists fields", src: "${self.spec.nested.zzz}",
			diags: []string{at(39, "expression ${self.spec.nested.zzz}: undefined field 'zzz'; self.spec.nested has a, b")}},
		{name: "undefined dashed field", src: "${self.spec.foo_bar}",
			diags: []string{at(32, "expression ${self.spec.foo_bar}: undefined field 'foo_bar'; did you mean `foo-bar`?")}},
		{name: "undeclared self", src: "${slef.spec.image}",
			diags: []string{at(22, "expression ${slef.spec.image}: undeclared reference to 'slef'; did you mean self?")}},
		{name: "root field without self", src: "${spec.image}",
			diags: []string{at(22, "expression ${spec.image}: undeclared reference to 'spec'; did you mean self.spec? (the custom resource is self)")}},
		{name: "overload", src: "${self.spec.image + 1}",
			diags: []string{at(38, "expression ${self.spec.image + 1}: found no matching overload for '_+_' applied to '(string, int)'")}},
		{name: "syntax", src: "${self.spec.replicas +}",
			diags: []string{at(42, "expression ${self.spec.replicas +}: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}")}},
		{name: "reserved word", src: "${self.spec.in}",
			diags: []string{
				at(32, "expression ${self.spec.in}: Syntax error: no viable alternative at input '.in'; in is a reserved word: select it as `in` or __in__"),
				at(34, "expression ${self.spec.in}: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}; in is a reserved word: select it as `in` or __in__"),
			}},
		{name: "unterminated", src: "x-${self.spec.image",
			diags: []string{at(22, "unterminated ${: add the closing }, or write $${ for a literal ${")}},
		{name: "empty", src: "${}",
			diags: []string{at(20, "empty ${}: write an expression inside, e.g. ${self.metadata.name}, or $${} for the literal text")}},
		{name: "empty and unknown", src: "${} ${self.nope}",
			diags: []string{
				at(20, "empty ${}: write an expression inside, e.g. ${self.metadata.name}, or $${} for the literal text"),
				at(31, "expression ${self.nope}: undefined field 'nope'; self has apiVersion, kind, metadata, spec, status"),
			}},
		{name: "mixed", src: "${self.metadata.name}-{{ .spec.x }}",
			diags: []string{at(42, "a string may not mix CEL ${…} with a legacy {{…}} template; write it all in CEL, e.g. ${self.metadata.name} for {{ .metadata.name }}")}},
	})
}

package gotmpl

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
)

// Every expected value below is derived by hand from testObject() and the
// function's documented semantics.
func TestFunctions(t *testing.T) {
	cases := []struct {
		src  string
		want string
		err  string // substring of the evaluation error
	}{
		// default: both argument orders and the pipe form mean "x, else y"
		{src: `{{ default .spec.environment "dev" }}`, want: "production"},
		{src: `{{ default .spec.missing "dev" }}`, want: "dev"},
		{src: `{{ default "dev" .spec.environment }}`, want: "production"},
		{src: `{{ default "dev" .spec.missing }}`, want: "dev"},
		{src: `{{ .spec.environment | default "dev" }}`, want: "production"},
		{src: `{{ .spec.missing | default "dev" }}`, want: "dev"},
		{src: `{{ .spec.missing | default .spec.tier }}`, want: "enterprise"},
		{src: `{{ default .spec.empty "dev" }}`, want: "dev"},
		{src: `{{ default .spec.count 5 }}`, want: "5"},       // 0 is empty
		{src: `{{ default .spec.debug true }}`, want: "true"}, // false is empty
		{src: `{{ default .spec.replicas 1 }}`, want: "3"},
		{src: `{{ default (toUpper .spec.tier) "x" }}`, want: "ENTERPRISE"},
		// coalesce, ternary, empty
		{src: `{{ coalesce .spec.missing .spec.empty .spec.tier "x" }}`, want: "enterprise"},
		{src: `{{ coalesce .spec.missing "" }}`, want: ""},
		{src: `{{ ternary .spec.enabled "on" "off" }}`, want: "on"},
		{src: `{{ ternary .spec.debug "on" "off" }}`, want: "off"},
		{src: `{{ ternary .spec.missing "set" "unset" }}`, want: "unset"},
		{src: `{{ ternary .spec.count "a" "b" }}`, want: "b"},
		{src: `{{ ternary "false" "a" "b" }}`, want: "a"}, // a non-empty string is true
		{src: `{{ empty .spec.missing }}`, want: "true"},
		{src: `{{ empty .spec.empty }}`, want: "true"},
		{src: `{{ empty .spec.count }}`, want: "true"},
		{src: `{{ empty .spec.tags }}`, want: "false"},
		{src: `{{ empty (split "" ",") }}`, want: "false"}, // []string{} prints "[]"
		{src: `{{ notEmpty .spec.image }}`, want: "true"},
		// strings
		{src: `{{ toUpper .metadata.name }}`, want: "BLOG"},
		{src: `{{ toLower "ABC" }}`, want: "abc"},
		{src: `[{{ trimSpace "  x  " }}]`, want: "[x]"},
		{src: `{{ trim "/images/nginx/" "/" }}`, want: "images/nginx"},
		{src: `{{ trimPrefix .metadata.name "bl" }}`, want: "og"},
		{src: `{{ trimSuffix .spec.image ":5" }}`, want: "ghost"},
		{src: `{{ hasPrefix .spec.image "ghost" }}`, want: "true"},
		{src: `{{ hasSuffix .spec.image ":4" }}`, want: "false"},
		{src: `{{ contains .spec.environment "prod" }}`, want: "true"},
		{src: `{{ contains .spec.environment "stag" }}`, want: "false"},
		{src: `{{ replace .spec.domain "." "-" }}`, want: "my-app-example-com"},
		{src: `{{ index (split "a,b,c" ",") 1 }}`, want: "b"},
		{src: `{{ len (split "" ",") }}`, want: "0"},
		{src: `{{ join (split "a,b" ",") "+" }}`, want: "a+b"},
		{src: `{{ join .spec.tags ", " }}`, want: "a, b"},
		{src: `{{ repeat "ab" 3 }}`, want: "ababab"},
		{src: `{{ truncate "abcdefgh" 5 }}`, want: "ab..."},
		{src: `{{ truncate "abc" 5 }}`, want: "abc"},
		{src: `{{ truncate "abcdef" 2 }}`, want: "ab"},
		{src: `{{ printf "%s-%d" .metadata.name .spec.port }}`, want: "blog-8080"},
		{src: `{{ toUpper .spec.missing }}`, err: "expected string; got interface {} (the field is missing)"},
		// math: int64 when whole, float64 otherwise
		{src: `{{ add .spec.port 1 }}`, want: "8081"},
		{src: `{{ add 1.5 1 }}`, want: "2.5"},
		{src: `{{ add "2" 3 }}`, want: "5"},
		{src: `{{ add true 1 }}`, want: "2"},
		{src: `{{ add .spec.missing 1 }}`, err: "add: non-numeric arguments <missing>, 1"},
		{src: `{{ sub .spec.replicas 1 }}`, want: "2"},
		{src: `{{ mul .spec.replicas 2 }}`, want: "6"},
		{src: `{{ div 7 2 }}`, want: "3.5"},
		{src: `{{ div 6 3 }}`, want: "2"},
		{src: `{{ div 1 0 }}`, err: "div: division by zero"},
		{src: `{{ mod 7 3 }}`, want: "1"},
		{src: `{{ mod 7.9 3 }}`, want: "1"},
		{src: `{{ mod 1 0.5 }}`, err: "mod: division by zero"},
		{src: `{{ min .spec.replicas 10 }}`, want: "3"},
		{src: `{{ max .spec.replicas 10 }}`, want: "10"},
		{src: `{{ abs -4 }}`, want: "4"},
		{src: `{{ clamp 15 1 10 }}`, want: "10"},
		{src: `{{ clamp 0 1 10 }}`, want: "1"},
		{src: `{{ clamp 5 1 10 }}`, want: "5"},
		// types
		{src: `{{ toString .spec.replicas }}`, want: "3"},
		{src: `{{ toString .spec.missing }}`, want: ""},
		{src: `{{ toInt "3.7" }}`, want: "3"},
		{src: `{{ toInt true }}`, want: "1"},
		{src: `{{ toInt .spec.ratio }}`, want: "1"},
		{src: `{{ toInt "x" }}`, err: `toInt: strconv.ParseFloat: parsing "x": invalid syntax`},
		{src: `{{ toFloat "0.75" }}`, want: "0.75"},
		{src: `{{ toBool "yes" }}`, want: "true"},
		{src: `{{ toBool "off" }}`, want: "false"},
		{src: `{{ toBool .spec.count }}`, want: "false"},
		{src: `{{ toBool "maybe" }}`, err: `toBool: unrecognised value "maybe"`},
		{src: `{{ toBool .spec.missing }}`, err: "toBool: cannot convert <nil>"},
		{src: `{{ toJson .spec.config }}`, want: `{"a":1,"b":"two"}`},
		{src: `{{ toJson .spec.tags }}`, want: `["a","b"]`},
		{src: `{{ toJson .spec.missing }}`, want: "null"},
		{src: `{{ typeOf .spec.config }}`, want: "map"},
		{src: `{{ typeOf .spec.tags }}`, want: "slice"},
		{src: `{{ typeOf .spec.port }}`, want: "number"},
		{src: `{{ typeOf .spec.image }}`, want: "string"},
		{src: `{{ typeOf .spec.enabled }}`, want: "bool"},
		{src: `{{ typeOf .spec.missing }}`, want: "null"},
		{src: `{{ len .spec.tags }}`, want: "2"},
		{src: `{{ len .spec.missing }}`, want: "0"},
		{src: `{{ len .metadata.name }}`, want: "4"},
		{src: `{{ len .spec.config }}`, want: "2"},
		// safe access
		{src: `{{ get . "spec" "nested" "inner" "value" }}`, want: "deep"},
		{src: `{{ get . "spec" "nope" "x" }}`, want: ""},
		{src: `{{ getOr .spec.missing "x" }}`, want: "x"},
		{src: `{{ getOr .spec.tier "x" }}`, want: "enterprise"},
		{src: `{{ getStringOr .spec.port "x" }}`, want: "x"},
		{src: `{{ getStringOr .spec.image "x" }}`, want: "ghost:5"},
		{src: `{{ getIntOr .spec.replicas 1 }}`, want: "3"},
		{src: `{{ getIntOr .spec.missing 1 }}`, want: "1"},
		{src: `{{ getIntOr .spec.ratio 7 }}`, want: "1"},
		{src: `{{ getBoolOr .spec.enabled false }}`, want: "true"},
		{src: `{{ getBoolOr .spec.image true }}`, want: "true"},
		// cron
		{src: `{{ cronFromAny .spec.schedule }}`, want: "*/5 0 * * 1"},
		{src: `{{ cronFromAny "@daily" }}`, want: "0 0 * * *"},
		{src: `{{ cronFromAny .spec.missing }}`, want: "* * * * *"},
		{src: `{{ cronFromMap .spec.schedule }}`, err: "cronFromMap: expected map, got string"},
		{src: `{{ cronNormalize "@weekly" }}`, want: "0 0 * * 0"},
		{src: `{{ cronNormalize "bad" }}`, want: "* * * * *"},
		{src: `{{ cronExpr "*/1" "" "" "" "" }}`, want: "*/1 * * * *"},
		// builtins and control structures
		{src: `{{ if eq .spec.tier "enterprise" }}big{{ else }}small{{ end }}`, want: "big"},
		{src: `{{ range .spec.tags }}{{ . }};{{ end }}`, want: "a;b;"},
		{src: `{{ range $i, $t := .spec.tags }}{{ $i }}={{ $t }} {{ end }}`, want: "0=a 1=b"},
		{src: `{{ with .spec.nested.inner }}{{ .value }}{{ end }}`, want: "deep"},
		{src: `{{ $s := .spec }}{{ $s.image }}@{{ $.metadata.name }}`, want: "ghost:5@blog"},
		{src: `{{ index .metadata.labels "tier" }}`, want: "gold"},
		{src: `{{ and .spec.enabled .spec.image }}`, want: "ghost:5"},
		// rendering
		{src: `{{ .spec.missing }}`, want: ""},
		{src: `{{ .spec.missing }} x`, want: " x"}, // trimmed first, then <no value> removed
		{src: `  {{ .spec.image }}  `, want: "ghost:5"},
		{src: `{{ .spec.big }}`, want: "1e+06"},
		{src: `{{ .spec.ratio }}`, want: "1.5"},
		{src: `{{ .spec.config.nope.x }}`, err: "nil pointer evaluating interface {}.x (a field on the way is missing"},
	}
	obj := testObject()
	for _, tc := range cases {
		got, err := render(t, tc.src, obj)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want %q", tc.src, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.src, err)
		case tc.err == "" && got != tc.want:
			t.Errorf("%s = %q, want %q", tc.src, got, tc.want)
		}
	}
}

func TestCronFromMapAndToMap(t *testing.T) {
	obj := testObject()
	obj["spec"].(map[string]any)["schedule"] = map[string]any{"minute": "*/5", "hour": "0", "dayOfWeek": int64(1)}
	for src, want := range map[string]string{
		`{{ cronFromMap .spec.schedule }}`: "*/5 0 * * 1",
		`{{ cronFromAny .spec.schedule }}`: "*/5 0 * * 1",
	} {
		if got, err := render(t, src, obj); err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", src, got, err, want)
		}
	}
	// cronToMap turns a conversion value into a map.
	ctx := testCtx(t)
	ctx.Coerce = engine.CoerceGuess
	for _, tc := range []struct {
		src  string
		obj  map[string]any
		want map[string]any
	}{
		{`{{ cronToMap .spec.schedule }}`, testObject(), map[string]any{"minute": "*/5", "hour": "0", "dayOfMonth": "*", "month": "*", "dayOfWeek": "1"}},
		{`{{ cronToMap "@hourly" }}`, testObject(), map[string]any{"minute": "0", "hour": "*", "dayOfMonth": "*", "month": "*", "dayOfWeek": "*"}},
		{`{{ .spec.schedule | cronToMap }}`, obj, map[string]any{"minute": "*/5", "hour": "0", "dayOfWeek": int64(1)}},
	} {
		e, diags := New(nil).CompileValue(tc.src, ctx)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		got, err := e.Eval(engine.NewScope(tc.obj))
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s = %#v, %v; want %#v", tc.src, got, err, tc.want)
		}
	}
}

func TestRandomFunctions(t *testing.T) {
	for src, re := range map[string]string{
		`{{ randomHex 16 }}`:          `^[0-9a-f]{32}$`,
		`{{ randomHex 0 }}`:           `^$`,
		`{{ randomAlphanumeric 20 }}`: `^[a-zA-Z0-9]{20}$`,
		`{{ randomBase64 32 }}`:       `^[A-Za-z0-9_-]{43}=$`,
		`{{ uuidv4 }}`:                `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`,
	} {
		a, err := render(t, src, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(re).MatchString(a) {
			t.Errorf("%s = %q, want %s", src, a, re)
		}
		if b, _ := render(t, src, nil); a == b && a != "" {
			t.Errorf("%s gave %q twice", src, a)
		}
	}
}

// TestFunctionList keeps the documented list and the function map in step.
func TestFunctionList(t *testing.T) {
	for _, name := range []string{"default", "coalesce", "ternary", "empty", "toUpper", "toLower", "trim", "replace", "split", "join",
		"contains", "hasPrefix", "hasSuffix", "printf", "add", "sub", "mul", "div", "mod", "min", "max", "toString", "toInt", "toBool",
		"toJson", "get", "getOr", "randomHex", "randomAlphanumeric", "randomBase64", "uuidv4", "cronToMap", "cronFromMap", "cronFromAny"} {
		if _, ok := funcs[name]; !ok {
			t.Errorf("%s is missing", name)
		}
	}
	for name, f := range funcs {
		if f.fn != nil && funcMap[name] == nil {
			t.Errorf("%s is not in the FuncMap", name)
		}
	}
}

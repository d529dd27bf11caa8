package cel

import (
	"errors"
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/engine"
)

func shoutLib() cel.EnvOption {
	return cel.Function("shout", cel.Overload("shout_string", []*cel.Type{cel.StringType}, cel.StringType,
		cel.UnaryBinding(func(v ref.Val) ref.Val { return types.String(strings.ToUpper(string(v.(types.String))) + "!") })))
}

func TestObjectMetaAccess(t *testing.T) {
	b := newBackend(t, Options{})
	runValueCases(t, b, []valueCase{
		{name: "name", src: "${self.metadata.name}", want: "w1"},
		{name: "generateName", src: "${self.metadata.generateName}", want: "w-"},
		{name: "namespace", src: "${self.metadata.namespace}", want: "default"},
		{name: "uid", src: "${self.metadata.uid}", want: "6a1f8a9e-0000-4000-8000-000000000001"},
		{name: "resourceVersion", src: "${self.metadata.resourceVersion}", want: "42"},
		{name: "generation is an int", src: "${self.metadata.generation + 1}", expected: "integer", want: int64(4)},
		{name: "creationTimestamp is a string", src: "${self.metadata.creationTimestamp}", expected: "string", want: "2024-01-02T03:04:05Z"},
		{name: "label", src: "${self.metadata.labels.app}", want: "w1"},
		{name: "label by index", src: "${self.metadata.labels['tier']}", want: "web"},
		{name: "labels map", src: "${self.metadata.labels}", expected: "stringMap", want: map[string]any{"app": "w1", "tier": "web"}},
		{name: "label in", src: "${'app' in self.metadata.labels}", expected: "boolean", want: true},
		{name: "label keys sorted", src: "${self.metadata.labels.map(k, k)}", want: []any{"app", "tier"}},
		{name: "label values", src: "${self.metadata.labels.map(k, self.metadata.labels[k])}", want: []any{"w1", "web"}},
		{name: "annotation", src: "${self.metadata.annotations.note}", want: "hello"},
		{name: "absent annotation", src: "${self.metadata.annotations.nope}", wantErr: engine.ErrAbsent},
		{name: "optional annotation", src: "${self.metadata.?annotations[?'missing'].orValue('none')}", want: "none"},
		{name: "finalizers", src: "${self.metadata.finalizers}", expected: "strings", want: []any{"orkestra.orkspace.io/finalizer"}},
		{name: "owner reference", src: "${self.metadata.ownerReferences[0].name}", want: "boss"},
		{name: "owner controller", src: "${self.metadata.ownerReferences.exists(o, o.controller)}", expected: "boolean", want: true},
		{name: "deletionTimestamp absent", src: "${has(self.metadata.deletionTimestamp)}", want: false},
		{name: "apiVersion and kind", src: "${self.apiVersion}/${self.kind}", want: "test.orkestra.io/v1/Widget"},
	})
}

func TestEscapedFieldNames(t *testing.T) {
	b := newBackend(t, Options{})
	runValueCases(t, b, []valueCase{
		{name: "dash escaped", src: "${self.spec.foo__dash__bar}", want: "fb"},
		{name: "dash backticks", src: "${self.spec.`foo-bar`}", want: "fb"},
		{name: "dot escaped", src: "${self.spec.a__dot__b}", want: "ab"},
		{name: "dot backticks", src: "${self.spec.`a.b`}", want: "ab"},
		{name: "keyword as field", src: "${self.spec.namespace}", want: "ns"},
		{name: "keyword escaped", src: "${self.spec.__namespace__}", want: "ns"},
		{name: "reserved word escaped", src: "${self.spec.__in__}", expected: "integer", want: int64(7)},
		{name: "reserved word backticks", src: "${self.spec.`in`}", expected: "integer", want: int64(7)},
		{name: "has with escape", src: "${has(self.spec.foo__dash__bar)}", want: true},
		{name: "optional with backticks", src: "${self.spec.?`foo-bar`.orValue('')}", want: "fb"},
		{name: "object keys iterate escaped", src: "${dyn(self.spec).exists(k, k == 'foo__dash__bar')}", want: true},
		{name: "object keys sorted", src: "${dyn(self.spec.nested).map(k, k)}", want: []any{"a", "b"}},
		{name: "string format", src: "${'%s-%d'.format([self.spec.image, self.spec.replicas])}", want: "nginx-3"},
	})
}

func TestPreserveUnknownFields(t *testing.T) {
	b := newBackend(t, Options{})
	runValueCases(t, b, []valueCase{
		{name: "nested field", src: "${self.spec.config.deep.num}", want: int64(1)},
		{name: "list element", src: "${self.spec.config.deep.list[1]}", want: 2.5},
		{name: "whole subtree", src: "${self.spec.config.deep}", want: map[string]any{"num": int64(1), "list": []any{int64(1), 2.5, "s"}, "flag": true}},
		{name: "has", src: "${has(self.spec.config.deep.num)}", want: true},
		{name: "has absent", src: "${has(self.spec.config.deep.nope)}", want: false},
		{name: "optional", src: "${self.spec.config.?deep.?nope.orValue(0)}", want: int64(0)},
		{name: "absent plain reference", src: "${self.spec.config.nope}", wantErr: engine.ErrAbsent},
		{name: "absent deep plain reference", src: "${self.spec.config.nope.deeper}", wantErr: engine.ErrAbsent},
		{name: "size", src: "${size(self.spec.config)}", want: int64(3)},
		{name: "iteration is over budget", src: "${self.spec.config.map(k, k)}",
			diags: []string{at(20, "expression ${self.spec.config.map(k, k)}: estimated cost 4.1e+07 exceeds budget by factor of 4.1x (limit 1e+07); declare the properties of spec.config (it preserves unknown fields, so its size is only bounded by the request size), or simplify the expression")}},
		{name: "in", src: "${'deep' in self.spec.config}", want: true},
		{name: "equality", src: "${self.spec.config.deep.list == [dyn(1), dyn(2.5), dyn('s')]}", want: true},
		{name: "flag in condition-like", src: "${self.spec.config.deep.flag == true}", want: true},
		{name: "int-or-string type test", src: "${type(self.spec.port) == int ? int(self.spec.port) + 1 : 0}", want: int64(8081)},
	})
}

func TestPreserveUnknownIteration(t *testing.T) {
	b := newBackend(t, Options{CostLimit: 1e9})
	runValueCases(t, b, []valueCase{
		{name: "keys sorted", src: "${self.spec.config.map(k, k)}", want: []any{"deep", "size", "whole"}},
		{name: "two-variable", src: "${self.spec.config.deep.transformMap(k, v, k == 'num' ? v : 0)}", want: map[string]any{"num": int64(1), "list": int64(0), "flag": int64(0)}},
		{name: "exists", src: "${self.spec.config.deep.list.exists(x, x == 's')}", want: true},
	})
}

func TestAbsentPlainReferences(t *testing.T) {
	b := newBackend(t, Options{})
	runValueCases(t, b, []valueCase{
		{name: "absent field", src: "${self.spec.plan}", wantErr: engine.ErrAbsent},
		{name: "absent parent", src: "${self.status.phase}", wantErr: engine.ErrAbsent},
		{name: "optional absent", src: "${self.spec.?plan}", wantErr: engine.ErrAbsent},
		{name: "optional present", src: "${self.spec.?tier}", want: "pro"},
		{name: "absent map key", src: "${self.spec.labels.missing}", wantErr: engine.ErrAbsent},
		{name: "absent map key by index", src: "${self.spec.labels['missing']}", wantErr: engine.ErrAbsent},
		{name: "optional index", src: "${self.spec.labels[?'missing']}", wantErr: engine.ErrAbsent},
		{name: "not a plain reference", src: "${self.spec.plan + '!'}",
			errText: "expression ${self.spec.plan + '!'}: no such key: plan"},
		{name: "none from a non-reference", src: "${optional.none()}", wantErr: engine.ErrAbsent},
		{name: "default", src: "${self.spec.?plan.orValue('free')}", want: "free"},
	})
}

func TestRandomFunctions(t *testing.T) {
	b := newBackend(t, Options{})
	obj := objYAML(t, widgetObj)
	for _, tc := range []struct {
		src string
		re  string
	}{
		{"${randomHex(16)}", `^[0-9a-f]{32}$`},
		{"${randomAlphanumeric(24)}", `^[A-Za-z0-9]{24}$`},
		{"${randomBase64(12)}", `^[A-Za-z0-9+/]{16}$`},
		{"${uuid()}", `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`},
		{"key-${randomHex(4)}", `^key-[0-9a-f]{8}$`},
	} {
		ctx := &engine.Context{Entry: "widget", Field: "data.key", Pos: testPos, Self: widget(t), AllowRandom: true}
		e, diags := b.CompileValue(tc.src, ctx)
		if len(diags) > 0 {
			t.Fatalf("%s: %v", tc.src, diags)
		}
		v1, err := e.Eval(engine.NewScope(obj))
		if err != nil {
			t.Fatal(err)
		}
		v2, _ := e.Eval(engine.NewScope(obj))
		if !regexp.MustCompile(tc.re).MatchString(v1.(string)) {
			t.Errorf("%s = %q, want %s", tc.src, v1, tc.re)
		}
		if v1 == v2 {
			t.Errorf("%s yielded %q twice", tc.src, v1)
		}
	}
	runValueCases(t, b, []valueCase{
		{name: "forbidden", src: "${randomHex(16)}",
			diags: []string{at(22, "randomHex() yields a new value on every reconcile, which is endless drift; use it only in the data of a `once: true` secret")}},
		{name: "forbidden in interpolation", src: "key-${uuid()}-${randomBase64(4)}",
			diags: []string{
				at(26, "uuid() yields a new value on every reconcile, which is endless drift; use it only in the data of a `once: true` secret"),
				at(36, "randomBase64() yields a new value on every reconcile, which is endless drift; use it only in the data of a `once: true` secret"),
			}},
		{name: "forbidden inside a macro", src: "${self.spec.bounded.map(x, x + randomAlphanumeric(2))}",
			diags: []string{at(51, "randomAlphanumeric() yields a new value on every reconcile, which is endless drift; use it only in the data of a `once: true` secret")}},
		{name: "length out of range", src: "${randomHex(-1)}", random: true,
			errText: "expression ${randomHex(-1)}: randomHex(-1): n must be between 0 and 4096"},
	})
}

func TestCronFunctions(t *testing.T) {
	b := newBackend(t, Options{})
	runValueCases(t, b, []valueCase{
		{name: "to map", src: "${cronToMap(self.spec.schedule)}", expected: "stringMap",
			want: map[string]any{"minute": "*/5", "hour": "*", "dayOfMonth": "*", "month": "*", "dayOfWeek": "*"}},
		{name: "field", src: "${cronToMap('30 2 * * 1-5').dayOfWeek}", want: "1-5"},
		{name: "macro daily", src: "${cronToMap('@daily')}", want: map[string]any{"minute": "0", "hour": "0", "dayOfMonth": "*", "month": "*", "dayOfWeek": "*"}},
		{name: "macro hourly", src: "${cronFromMap(cronToMap('@hourly'))}", want: "0 * * * *"},
		{name: "macro weekly", src: "${cronFromMap(cronToMap('@weekly'))}", want: "0 0 * * 0"},
		{name: "macro monthly", src: "${cronFromMap(cronToMap('@monthly'))}", want: "0 0 1 * *"},
		{name: "macro yearly", src: "${cronFromMap(cronToMap('@yearly'))}", want: "0 0 1 1 *"},
		{name: "macro annually", src: "${cronFromMap(cronToMap('@annually'))}", want: "0 0 1 1 *"},
		{name: "macro midnight", src: "${cronFromMap(cronToMap('@midnight'))}", want: "0 0 * * *"},
		{name: "from map", src: "${cronFromMap({'minute': '5', 'hour': '2'})}", want: "5 2 * * *"},
		{name: "from map with ints", src: "${cronFromMap({'minute': 5, 'hour': 2})}", want: "5 2 * * *"},
		{name: "round trip", src: "${cronFromMap(cronToMap(self.spec.schedule))}", want: "*/5 * * * *"},
		{name: "edit a field", src: "${cronFromMap(cronToMap(self.spec.schedule).transformMap(k, v, k == 'hour' ? '3' : v))}", want: "*/5 3 * * *"},
		{name: "too few fields", src: "${cronToMap('* * *')}",
			errText: `expression ${cronToMap('* * *')}: cronToMap("* * *"): a schedule has 5 fields (minute hour dayOfMonth month dayOfWeek), got 3`},
		{name: "unknown macro", src: "${cronToMap('@often')}",
			errText: `expression ${cronToMap('@often')}: cronToMap("@often"): unknown macro @often; use @hourly, @daily, @midnight, @weekly, @monthly, @yearly or @annually`},
		{name: "bad character", src: "${cronToMap('* * * * ;')}",
			errText: `expression ${cronToMap('* * * * ;')}: cronToMap("* * * * ;"): dayOfWeek field ";": unexpected character ';'`},
		{name: "unknown key", src: "${cronFromMap({'minutes': '5'})}",
			errText: "expression ${cronFromMap({'minutes': '5'})}: cronFromMap: unknown key minutes; the keys are minute, hour, dayOfMonth, month, dayOfWeek"},
		{name: "whitespace in a field", src: "${cronFromMap({'minute': '1 2'})}",
			errText: `expression ${cronFromMap({'minute': '1 2'})}: cronFromMap: minute "1 2" contains whitespace`},
	})
}

func TestConditions(t *testing.T) {
	b := newBackend(t, Options{})
	obj := objYAML(t, widgetObj)
	for _, tc := range []struct {
		name, src, field string
		want             bool
		diags            []string
		errText          string
	}{
		{name: "comparison", src: "self.spec.tier != 'free'", want: true},
		{name: "wrapped in ${}", src: "${self.spec.replicas > 5}", want: false},
		{name: "wrapped with spaces", src: "  ${self.spec.replicas > 1}  ", want: true},
		{name: "optional default", src: "self.spec.?plan.orValue('free') == 'free'", want: true},
		{name: "has", src: "has(self.spec.nested)", want: true},
		{name: "dyn checked at runtime", src: "self.spec.config.deep.flag", want: true},
		{name: "dyn not a bool at runtime", src: "self.spec.config.deep.num",
			errText: "when must be a bool, but `self.spec.config.deep.num` yielded int at runtime"},
		{name: "absent is an error", src: "self.spec.plan == 'pro'",
			errText: "when `self.spec.plan == 'pro'`: no such key: plan"},
		{name: "int", src: "self.spec.replicas",
			diags: []string{"katalog.yaml:10:20: [widget] operatorBox.onReconcile.services[1].when: when must be a bool, but `self.spec.replicas` yields int; compare it, e.g. `self.spec.replicas > 0`"}},
		{name: "string under or", src: "self.spec.image", field: "operatorBox.onReconcile.services[1].or[0]",
			diags: []string{"katalog.yaml:10:20: [widget] operatorBox.onReconcile.services[1].or[0]: or must be a bool, but `self.spec.image` yields string; compare it, e.g. `self.spec.image == 'value'`"}},
		{name: "list", src: "${self.spec.items}",
			diags: []string{"katalog.yaml:10:20: [widget] operatorBox.onReconcile.services[1].when: when must be a bool, but `self.spec.items` yields list(string); test its size, e.g. `size(self.spec.items) > 0`"}},
		{name: "optional", src: "self.spec.?plan",
			diags: []string{"katalog.yaml:10:20: [widget] operatorBox.onReconcile.services[1].when: when must be a bool, but `self.spec.?plan` yields optional(string); test it, e.g. `self.spec.?plan.hasValue()`, or give it a default with .orValue(false)"}},
		{name: "template", src: "${self.spec.enabled} && true",
			diags: []string{"katalog.yaml:10:20: [widget] operatorBox.onReconcile.services[1].when: when takes a bare CEL expression such as `self.spec.replicas > 0`, not a template; remove the ${…}"}},
		{name: "empty", src: " ",
			diags: []string{"katalog.yaml:10:20: [widget] operatorBox.onReconcile.services[1].when: when is empty; write a CEL expression that yields a bool, e.g. `self.spec.replicas > 0`"}},
		{name: "undefined field", src: "self.spec.teir == 'pro'",
			diags: []string{"katalog.yaml:10:30: [widget] operatorBox.onReconcile.services[1].when: when `self.spec.teir == 'pro'`: undefined field 'teir'; did you mean tier?"}},
		{name: "undefined field wrapped", src: "${self.spec.teir == 'pro'}",
			diags: []string{"katalog.yaml:10:32: [widget] operatorBox.onReconcile.services[1].when: when `self.spec.teir == 'pro'`: undefined field 'teir'; did you mean tier?"}},
		{name: "random", src: "randomHex(2) == 'ab'",
			diags: []string{"katalog.yaml:10:20: [widget] operatorBox.onReconcile.services[1].when: randomHex() yields a new value on every reconcile, which is endless drift; use it only in the data of a `once: true` secret"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			field := tc.field
			if field == "" {
				field = "operatorBox.onReconcile.services[1].when"
			}
			ctx := &engine.Context{Entry: "widget", Field: field, Pos: testPos, Self: widget(t)}
			c, diags := b.CompileCondition(tc.src, ctx)
			got := make([]string, len(diags))
			for i, d := range diags {
				got[i] = d.Error()
			}
			if strings.Join(got, "\n") != strings.Join(tc.diags, "\n") {
				t.Fatalf("diagnostics:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(tc.diags, "\n     "))
			}
			if len(tc.diags) > 0 {
				if c != nil {
					t.Fatal("condition with errors compiled")
				}
				return
			}
			if c.Source() != tc.src || c.Pos() != testPos {
				t.Errorf("Source/Pos = %q %v", c.Source(), c.Pos())
			}
			v, err := c.Eval(engine.NewScope(obj))
			if tc.errText != "" {
				if err == nil || err.Error() != tc.errText {
					t.Fatalf("Eval error:\n got %v\nwant %s", err, tc.errText)
				}
				return
			}
			if err != nil || v != tc.want {
				t.Fatalf("Eval = %v, %v; want %v", v, err, tc.want)
			}
		})
	}
}

func TestCostBudget(t *testing.T) {
	b := newBackend(t, Options{})
	runValueCases(t, b, []valueCase{
		{name: "quadratic over an unbounded list", src: "${self.spec.items.all(x, self.spec.items.all(y, x == y))}",
			diags: []string{at(20, "expression ${self.spec.items.all(x, self.spec.items.all(y, x == y))}: estimated cost 3.5e+17 exceeds budget by factor of more than 100x (limit 1e+07); add maxItems/maxLength/maxProperties to the schema of spec.items (spec.items: maxItems, spec.items[*]: maxLength), or simplify the expression")}},
		{name: "quadratic over a bounded list", src: "${self.spec.bounded.all(x, self.spec.bounded.all(y, x == y))}", want: true},
		{name: "linear over an unbounded list", src: "${self.spec.items.exists(x, x == 'a')}", want: true},
		{name: "optional chains keep their bounds", src: "${self.spec.?bounded.orValue([]).join(',')}", want: "x"},
		{name: "in interpolation", src: "n=${self.spec.items.map(x, self.spec.items.filter(y, y == x).size()).sum()}",
			diags: []string{at(22, "expression ${self.spec.items.map(x, self.spec.items.filter(y, y == x).size()).sum()}: estimated cost 3.5e+17 exceeds budget by factor of more than 100x (limit 1e+07); add maxItems/maxLength/maxProperties to the schema of spec.items (spec.items: maxItems, spec.items[*]: maxLength), or simplify the expression")}},
	})

	// A tighter limit from the context, and the factor when it is small.
	ctx := &engine.Context{Entry: "widget", Field: "spec.x", Pos: testPos, Self: widget(t), CostLimit: 100}
	_, diags := b.CompileValue("${self.spec.bounded.all(x, self.spec.bounded.all(y, x == y))}", ctx)
	want := "katalog.yaml:10:20: [widget] spec.x: expression ${self.spec.bounded.all(x, self.spec.bounded.all(y, x == y))}: estimated cost 1.4e+03 exceeds budget by factor of 13.7x (limit 1e+02); simplify the expression"
	if len(diags) != 1 || diags[0].Error() != want {
		t.Errorf("diagnostics %v\nwant %s", diags, want)
	}
	// A condition over budget.
	_, diags = b.CompileCondition("self.spec.items.all(x, self.spec.items.all(y, x == y))", ctx)
	want = "katalog.yaml:10:20: [widget] spec.x: when `self.spec.items.all(x, self.spec.items.all(y, x == y))`: estimated cost 3.5e+17 exceeds budget by factor of more than 100x (limit 1e+02); add maxItems/maxLength/maxProperties to the schema of spec.items (spec.items: maxItems, spec.items[*]: maxLength), or simplify the expression"
	if len(diags) != 1 || diags[0].Error() != want {
		t.Errorf("diagnostics %v\nwant %s", diags, want)
	}
}

func TestRuntimeCostLimit(t *testing.T) {
	// The static limit is lifted: the list is unbounded.
	b := newBackend(t, Options{RuntimeCostLimit: 1000, CostLimit: math.MaxUint64})
	items := make([]any, 200)
	for i := range items {
		items[i] = "item"
	}
	obj := objYAML(t, widgetObj)
	obj["spec"].(map[string]any)["items"] = items
	ctx := &engine.Context{Entry: "widget", Field: "spec.x", Pos: testPos, Self: widget(t)}
	e, diags := b.CompileValue("${self.spec.items.map(x, x + '!').join(',')}", ctx)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	_, err := e.Eval(engine.NewScope(obj))
	want := "expression ${self.spec.items.map(x, x + '!').join(',')} exceeded the runtime cost limit of 1000 per evaluation (operation cancelled: actual cost limit exceeded); the data is larger than the expression can handle: bound it in the schema (maxItems, maxLength, maxProperties) or simplify the expression"
	if err == nil || err.Error() != want {
		t.Fatalf("Eval error:\n got %v\nwant %s", err, want)
	}
	// Under the limit with less data.
	obj["spec"].(map[string]any)["items"] = items[:3]
	v, err := e.Eval(engine.NewScope(obj))
	if err != nil || v != "item!,item!,item!" {
		t.Fatalf("Eval = %v, %v", v, err)
	}
	// Conditions carry the limit too.
	obj["spec"].(map[string]any)["items"] = items
	c, _ := b.CompileCondition("self.spec.items.map(x, x + '!').size() > 0", ctx)
	if _, err := c.Eval(engine.NewScope(obj)); err == nil || !strings.Contains(err.Error(), "exceeded the runtime cost limit of 1000") {
		t.Fatalf("condition Eval error %v", err)
	}
}

func TestEnvironmentBuiltOncePerSchema(t *testing.T) {
	b := newBackend(t, Options{})
	schemas := crdSchemas(t, "testdata/website-crd.yaml")
	for i := 0; i < 2000; i++ {
		for _, v := range []string{"v1alpha1", "v1"} {
			ctx := &engine.Context{Entry: "website", Field: "spec.image", Pos: testPos, Self: schemas[v]}
			if _, diags := b.CompileValue("${self.spec.image}", ctx); len(diags) > 0 {
				t.Fatal(diags)
			}
		}
	}
	if n := b.envCount(); n != 2 {
		t.Fatalf("%d environments for 2 schemas", n)
	}
}

func TestWebsiteExample(t *testing.T) {
	b := newBackend(t, Options{})
	schemas := crdSchemas(t, "testdata/website-crd.yaml")
	obj := objYAML(t, `
apiVersion: demo.orkestra.io/v1
kind: Website
metadata: {name: blog, namespace: web}
spec: {image: "nginx:1.27", replicas: 2, port: 8080, tier: pro, seo: {enabled: true, keywords: [fast, small]}}
`)
	v1, v1alpha1 := schemas["v1"], schemas["v1alpha1"]
	prop := func(s *structuralschema.Structural, path ...string) *structuralschema.Structural {
		for _, p := range path {
			c := s.Properties[p]
			s = &c
		}
		return s
	}
	for _, tc := range []struct {
		src      string
		expected *structuralschema.Structural
		want     any
	}{
		{"${self.spec.image}", prop(v1alpha1, "spec", "image"), "nginx:1.27"},
		{"${self.spec.replicas}", prop(v1alpha1, "spec", "replicas"), int64(2)},
		{"${self.spec.tier}", prop(v1alpha1, "spec", "tier"), "pro"},
		{"${self.metadata.name}.${self.metadata.namespace}.svc.cluster.local", prop(v1, "status", "endpoint"), "blog.web.svc.cluster.local"},
		{"${self.spec.?seo.?keywords.orValue([]).join(',')}", nil, "fast,small"},
		{"${self.metadata.name}-svc", nil, "blog-svc"},
	} {
		e, diags := b.CompileValue(tc.src, &engine.Context{Entry: "website-v1", Field: "x", Pos: testPos, Self: v1, Expected: tc.expected})
		if len(diags) > 0 {
			t.Fatalf("%s: %v", tc.src, diags)
		}
		v, err := e.Eval(engine.NewScope(obj))
		if err != nil || !reflect.DeepEqual(v, tc.want) {
			t.Errorf("%s = %#v, %v; want %#v", tc.src, v, err, tc.want)
		}
	}
	for _, src := range []string{"self.spec.tier != 'free'", "self.spec.?seo.?enabled.orValue(false)"} {
		c, diags := b.CompileCondition(src, &engine.Context{Entry: "website-v1", Field: "when", Pos: testPos, Self: v1})
		if len(diags) > 0 {
			t.Fatalf("%s: %v", src, diags)
		}
		if ok, err := c.Eval(engine.NewScope(obj)); !ok || err != nil {
			t.Errorf("%s = %v, %v", src, ok, err)
		}
	}
}

func TestExtraLibraries(t *testing.T) {
	b, err := New(Options{Libraries: []cel.EnvOption{shoutLib()}})
	if err != nil {
		t.Fatal(err)
	}
	e, diags := b.CompileValue("${shout(self.metadata.name)}", &engine.Context{Field: "x", Pos: testPos, Self: widget(t)})
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	v, err := e.Eval(engine.NewScope(objYAML(t, widgetObj)))
	if err != nil || v != "W1!" {
		t.Fatalf("Eval = %v, %v", v, err)
	}
	// Backends without the library do not know it.
	_, diags = newBackend(t, Options{}).CompileValue("${shout('x')}", &engine.Context{Field: "x", Pos: testPos, Self: widget(t)})
	if len(diags) != 1 || !strings.Contains(diags[0].Message, "undeclared reference to 'shout'") {
		t.Fatalf("diagnostics %v", diags)
	}
}

func TestErrorsWrapCELErrors(t *testing.T) {
	b := newBackend(t, Options{})
	e, diags := b.CompileValue("${self.spec.items[5]}", &engine.Context{Field: "x", Pos: testPos, Self: widget(t)})
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	_, err := e.Eval(engine.NewScope(objYAML(t, widgetObj)))
	if err == nil || err.Error() != "expression ${self.spec.items[5]}: index out of bounds: 5" || errors.Is(err, engine.ErrAbsent) {
		t.Fatalf("Eval error %v", err)
	}
}

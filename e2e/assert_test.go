package e2e

import (
	"regexp"
	"strings"
	"testing"
)

func sp(s string) *string          { return &s }
func fp(f float64) *float64        { return &f }
func rng(a, b float64) *[2]float64 { return &[2]float64{a, b} }

// TestAssertions: every operator, a holding and a failing output each, and
// the message of the failure (upstream's semantics, documented in
// documentation/reference/schema/04-e2e/03-expect.md: outputContains on the
// raw output, the others on the trimmed one, numbers parsed).
func TestAssertions(t *testing.T) {
	cases := []struct {
		name       string
		a          Assertions
		pass, fail string
		msg        string
	}{
		{"equals (trimmed)", Assertions{Equals: sp("Ready")}, "  Ready\n", "Pending", `equals: want "Ready", got "Pending"`},
		{"notEquals", Assertions{NotEquals: sp("Failed")}, "Ready", " Failed\n", `notEquals "Failed"`},
		{"outputContains", Assertions{Contains: sp("ok")}, "status: ok\n", "status: down", `outputContains "ok": not in the output`},
		{"outputNotContains", Assertions{NotContains: sp("ERROR")}, "all fine", "ERROR: x", `outputNotContains "ERROR"`},
		{"regex", Assertions{Regex: regexp.MustCompile(`^v\d+$`)}, "v12\n", "12", `regex "^v\\d+$": no match in "12"`},
		{"greaterThan (strict)", Assertions{GT: fp(3)}, "4", "3", "greaterThan 3: got 3"},
		{"lessThan (strict)", Assertions{LT: fp(3)}, "2.5", "3", "lessThan 3: got 3"},
		{"greaterThanOrEqual", Assertions{GTE: fp(3)}, "3", "2", "greaterThanOrEqual 3: got 2"},
		{"lessThanOrEqual", Assertions{LTE: fp(3)}, "3", "4", "lessThanOrEqual 3: got 4"},
		{"between (inclusive)", Assertions{Between: rng(1, 3)}, "3", "4", "between 1,3: got 4"},
		{"notBetween", Assertions{NotBetween: rng(1, 3)}, "0", "1", "notBetween 1,3: got 1"},
		{"numbers need a number", Assertions{GT: fp(1)}, "2", "two", `a numeric assertion needs a number, the output is "two"`},
		{"exists", Assertions{Exists: true}, "x", " \n", "exists: the output is empty"},
		{"notExists", Assertions{NotExists: true}, "\n", "x", `notExists: the output is "x"`},
		{"oneOf", Assertions{OneOf: []string{"Peak", "Steady"}, hasOneOf: true}, "Steady\n", "Low", `oneOf ["Peak" "Steady"]: got "Low"`},
		{"notOneOf", Assertions{NotOneOf: []string{"Failed"}, hasNotOneOf: true}, "Ready", "Failed", `notOneOf ["Failed"]: got "Failed"`},
		{"all set must hold", Assertions{Contains: sp("2"), GT: fp(1), LT: fp(3)}, "2", "12", "lessThan 3: got 12"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !c.a.Any() {
				t.Fatal("Any() is false with an assertion set")
			}
			if err := c.a.Check(c.pass); err != nil {
				t.Errorf("%q: %v", c.pass, err)
			}
			err := c.a.Check(c.fail)
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("%q: want %q, got %v", c.fail, c.msg, err)
			}
		})
	}
	if (&Assertions{}).Any() {
		t.Error("Any() on no assertion")
	}
}

// TestExtract: jq -r and yq e semantics (upstream pipes outputs through
// them in pkg/e2e/verify.go applyExtract).
func TestExtract(t *testing.T) {
	obj := `{"status":{"phase":"Ready","replicas":3,"ok":true,"hard":{"pods":"10"}},"items":[{"n":"a"},{"n":"b"}]}`
	cases := []struct {
		x        Extract
		in, want string
	}{
		{Extract{JQ: ".status.phase"}, obj, "Ready"}, // strings raw
		{Extract{JQ: "status.replicas"}, obj, "3"},   // a bare name gets its dot
		{Extract{JQ: ".status.ok"}, obj, "true"},
		{Extract{JQ: ".status.missing"}, obj, "null"},
		{Extract{JQ: ".items[].n"}, obj, "a\nb"},                                                // several results, one a line
		{Extract{JQ: "[.items[].n] | join(\",\")"}, obj, "a,b"},                                 // an expression that does not start with a name stays
		{Extract{JQ: ".status.hard"}, obj, "{\n  \"pods\": \"10\"\n}"},                          // objects as indented JSON
		{Extract{JQ: ".level"}, "{\"level\":\"info\"}\n{\"level\":\"error\"}\n", "info\nerror"}, // a stream of JSON lines
		{Extract{YQ: ".data.max"}, "data:\n  max: 100\n", "100"},
		{Extract{YQ: ".data"}, "data:\n  a: x\n", "a: x"}, // objects as YAML
		{Extract{}, "unchanged", "unchanged"},
	}
	for _, c := range cases {
		got, err := c.x.apply(c.in)
		if err != nil || got != c.want {
			t.Errorf("%+v on %q: got %q, %v; want %q", c.x, c.in, got, err, c.want)
		}
	}
	for _, bad := range []Extract{{JQ: ".a |"}, {YQ: ":"}} {
		if _, err := bad.apply(obj); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	if _, err := (Extract{JQ: ".a"}).apply("not json"); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("jq on text: %v", err)
	}
}

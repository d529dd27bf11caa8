package e2e

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// AssertionKeys are the output assertions every command and DSL read takes
// (upstream's E2ECommand and E2EKubectl* fields). Each one set must hold.
var AssertionKeys = []string{
	"equals", "notEquals", "outputContains", "outputNotContains", "regex",
	"greaterThan", "lessThan", "greaterThanOrEqual", "lessThanOrEqual",
	"between", "notBetween", "exists", "notExists", "oneOf", "notOneOf",
}

// Assertions are the output assertions of one command or DSL entry. As
// upstream: outputContains and outputNotContains look at the output as it
// is, every other one at the output trimmed of surrounding white space; the
// numeric ones parse it as a number.
type Assertions struct {
	Equals, NotEquals     *string
	Contains, NotContains *string
	Regex                 *regexp.Regexp
	GT, LT, GTE, LTE      *float64
	Between, NotBetween   *[2]float64
	Exists, NotExists     bool
	OneOf, NotOneOf       []string
	hasOneOf, hasNotOneOf bool
}

// Any reports whether any assertion is set.
func (a *Assertions) Any() bool {
	return a.Equals != nil || a.NotEquals != nil || a.Contains != nil || a.NotContains != nil || a.Regex != nil ||
		a.GT != nil || a.LT != nil || a.GTE != nil || a.LTE != nil || a.Between != nil || a.NotBetween != nil ||
		a.Exists || a.NotExists || a.hasOneOf || a.hasNotOneOf
}

// Check returns nil when every assertion holds on output, else an error
// naming the first that does not and what was observed.
func (a *Assertions) Check(output string) error {
	t := strings.TrimSpace(output)
	switch {
	case a.Contains != nil && !strings.Contains(output, *a.Contains):
		return fmt.Errorf("outputContains %q: not in the output", *a.Contains)
	case a.NotContains != nil && strings.Contains(output, *a.NotContains):
		return fmt.Errorf("outputNotContains %q: the output contains it", *a.NotContains)
	case a.Equals != nil && t != *a.Equals:
		return fmt.Errorf("equals: want %q, got %q", *a.Equals, t)
	case a.NotEquals != nil && t == *a.NotEquals:
		return fmt.Errorf("notEquals %q: the output is exactly that", *a.NotEquals)
	case a.Regex != nil && !a.Regex.MatchString(t):
		return fmt.Errorf("regex %q: no match in %q", a.Regex, t)
	case a.Exists && t == "":
		return fmt.Errorf("exists: the output is empty")
	case a.NotExists && t != "":
		return fmt.Errorf("notExists: the output is %q", t)
	case a.hasOneOf && !slices.Contains(a.OneOf, t):
		return fmt.Errorf("oneOf %q: got %q", a.OneOf, t)
	case a.hasNotOneOf && slices.Contains(a.NotOneOf, t):
		return fmt.Errorf("notOneOf %q: got %q", a.NotOneOf, t)
	}
	return a.checkNumbers(t)
}

func (a *Assertions) checkNumbers(t string) error {
	if a.GT == nil && a.LT == nil && a.GTE == nil && a.LTE == nil && a.Between == nil && a.NotBetween == nil {
		return nil
	}
	got, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return fmt.Errorf("a numeric assertion needs a number, the output is %q", t)
	}
	num := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	switch {
	case a.GT != nil && !(got > *a.GT):
		return fmt.Errorf("greaterThan %s: got %s", num(*a.GT), t)
	case a.LT != nil && !(got < *a.LT):
		return fmt.Errorf("lessThan %s: got %s", num(*a.LT), t)
	case a.GTE != nil && !(got >= *a.GTE):
		return fmt.Errorf("greaterThanOrEqual %s: got %s", num(*a.GTE), t)
	case a.LTE != nil && !(got <= *a.LTE):
		return fmt.Errorf("lessThanOrEqual %s: got %s", num(*a.LTE), t)
	case a.Between != nil && (got < a.Between[0] || got > a.Between[1]):
		return fmt.Errorf("between %s,%s: got %s", num(a.Between[0]), num(a.Between[1]), t)
	case a.NotBetween != nil && got >= a.NotBetween[0] && got <= a.NotBetween[1]:
		return fmt.Errorf("notBetween %s,%s: got %s", num(a.NotBetween[0]), num(a.NotBetween[1]), t)
	}
	return nil
}

package e2e

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/specyaml"
)

var (
	expectKeys    = []string{"include", "name", "after", "timeout", "wait", "resources", "commands", "kubectl", "when", "or", "onFailure"}
	resourceKeys  = []string{"kind", "name", "namespace", "count", "ready"}
	commandKeys   = append([]string{"run", "exitCode"}, AssertionKeys...)
	onFailureKeys = []string{"kubectl", "commands"}
	afterValues   = []string{AfterSetupComplete, AfterCRApplied, AfterCRDeleted}
)

// expectations reads spec.expect; top is false inside an included file,
// where include: may not nest.
func (r *reader) expectations(n *yaml.Node, path, dir string, top bool) []*Expectation {
	var out []*Expectation
	for i, it := range r.Items(n, path) {
		p := fmt.Sprintf("%s[%d]", path, i)
		f := r.Mapping(it, p, expectKeys, nil)
		if f.Has("include") {
			if len(f) > 1 {
				r.Errorf(it, p, "an include: entry takes no other keys; move them into the included file")
			}
			if !top {
				r.Errorf(f["include"].Key, p+".include", "includes do not nest (as upstream): write the entries here")
				continue
			}
			out = append(out, r.include(f.V("include"), p+".include", dir)...)
			continue
		}
		out = append(out, r.expectation(it, f, p, dir))
	}
	return out
}

// include reads an included file: a map with expect: holding a list of
// entries, whose relative paths resolve against its own directory.
func (r *reader) include(n *yaml.Node, path, dir string) []*Expectation {
	before := len(*r.Diags)
	file := r.Existing(n, path, dir)
	if file == "" || len(*r.Diags) > before {
		return nil
	}
	y, root := specyaml.Open(file, r.Diags)
	if root == nil {
		return nil
	}
	ir := &reader{y}
	f := ir.Mapping(root, "", []string{"expect"}, nil)
	if !f.Has("expect") {
		r.Errorf(n, path, "%s has no expect: (an included file holds `expect:` with a list of entries)", file)
		return nil
	}
	return ir.expectations(f.V("expect"), "expect", ir.Dir, false)
}

func (r *reader) expectation(n *yaml.Node, f fields, p, dir string) *Expectation {
	e := &Expectation{Pos: r.Pos(n), Dir: dir, Name: r.Str(f.V("name"), p+".name"),
		After: r.Str(f.V("after"), p+".after"), Wait: r.Duration(f.V("wait"), p+".wait")}
	if e.Name == "" {
		r.Errorf(n, p+".name", "an expectation needs name: (it is printed in the results)")
		e.Name = p
	}
	switch {
	case e.After == "":
		e.After = AfterSetupComplete // upstream's runner: no after is setup-complete
	case !slices.Contains(afterValues, e.After):
		r.Errorf(f.V("after"), p+".after", "after %q is not a lifecycle event%s; write one of %s", e.After, katalog.DidYouMean(e.After, afterValues), strings.Join(afterValues, ", "))
	}
	if e.Timeout = r.Duration(f.V("timeout"), p+".timeout"); e.Timeout == 0 {
		e.Timeout = DefaultTimeout
	}
	for i, it := range r.Items(f.V("resources"), p+".resources") {
		e.Resources = append(e.Resources, r.resource(it, fmt.Sprintf("%s.resources[%d]", p, i)))
	}
	for i, it := range r.Items(f.V("commands"), p+".commands") {
		e.Commands = append(e.Commands, r.command(it, fmt.Sprintf("%s.commands[%d]", p, i)))
	}
	if f.Has("kubectl") {
		e.Kubectl = r.kubectl(f.V("kubectl"), p+".kubectl", dir, false)
	}
	if f.Has("when") {
		e.When = r.when(f.V("when"), p+".when")
	}
	if f.Has("or") {
		e.Or = r.when(f.V("or"), p+".or")
	}
	if f.Has("onFailure") {
		e.OnFailure = r.onFailure(f.V("onFailure"), p+".onFailure", dir)
	}
	if len(e.Resources) == 0 && len(e.Commands) == 0 && e.Kubectl.empty() {
		r.Errorf(n, p, "the expectation %q checks nothing: add resources:, commands: or kubectl:", e.Name)
	}
	return e
}

func (r *reader) when(n *yaml.Node, path string) *katalog.When {
	w, diags := katalog.DecodeWhen(r.File, n, path)
	*r.Diags = append(*r.Diags, diags...)
	return w
}

func (r *reader) resource(n *yaml.Node, p string) *ResourceCheck {
	f := r.Mapping(n, p, resourceKeys, nil)
	c := &ResourceCheck{Pos: r.Pos(n), Kind: r.Str(f.V("kind"), p+".kind"), Name: r.Str(f.V("name"), p+".name"),
		Namespace: r.Str(f.V("namespace"), p+".namespace"), Ready: r.Bool(f.V("ready"), p+".ready")}
	if c.Kind == "" {
		r.Errorf(n, p+".kind", "a resource check needs kind: (Deployment, Service, your custom kind, …)")
	}
	if f.Has("count") {
		if v, ok := r.Int(f.V("count"), p+".count"); ok {
			if v < 0 {
				r.Errorf(f.V("count"), p+".count", "count must be 0 or more")
			}
			c.Count = &v
		}
	}
	if c.Ready && c.Count != nil && *c.Count == 0 {
		r.Errorf(f.V("ready"), p+".ready", "ready: true with count: 0 asks for ready objects that must not exist; drop one")
	}
	return c
}

func (r *reader) command(n *yaml.Node, p string) *Command {
	f := r.Mapping(n, p, commandKeys, nil)
	c := &Command{Pos: r.Pos(n), Run: r.Str(f.V("run"), p+".run"), Assert: r.assertions(f, p)}
	if c.Run == "" {
		r.Errorf(n, p+".run", "a command needs run: (a shell command, run with sh -c)")
	}
	if f.Has("exitCode") {
		c.ExitCode, _ = r.Int(f.V("exitCode"), p+".exitCode")
	}
	return c
}

// assertions reads the assertion keys of f. A key given the empty string
// asserts nothing, as upstream: a warning says what to write instead.
func (r *reader) assertions(f fields, p string) Assertions {
	var a Assertions
	strs := map[string]**string{"equals": &a.Equals, "notEquals": &a.NotEquals, "outputContains": &a.Contains, "outputNotContains": &a.NotContains}
	for _, k := range []string{"equals", "notEquals", "outputContains", "outputNotContains"} {
		if s := r.OptStr(f, k, p); s != nil {
			if *s == "" {
				r.Warnf(f[k].Key, specyaml.Join(p, k), "%s: \"\" asserts nothing (as upstream, which skips empty assertions); write notExists: true to require an empty output, exists: true a non-empty one", k)
				continue
			}
			*strs[k] = s
		}
	}
	if s := r.OptStr(f, "regex", p); s != nil && *s != "" {
		re, err := regexp.Compile(*s)
		if err != nil {
			r.Errorf(f.V("regex"), p+".regex", "not an RE2 regular expression: %v", err)
		}
		a.Regex = re
	}
	nums := map[string]**float64{"greaterThan": &a.GT, "lessThan": &a.LT, "greaterThanOrEqual": &a.GTE, "lessThanOrEqual": &a.LTE}
	for _, k := range []string{"greaterThan", "lessThan", "greaterThanOrEqual", "lessThanOrEqual"} {
		if s := r.OptStr(f, k, p); s != nil && *s != "" {
			v, err := strconv.ParseFloat(strings.TrimSpace(*s), 64)
			if err != nil {
				r.Errorf(f.V(k), specyaml.Join(p, k), "%s takes a number, got %q", k, *s)
				continue
			}
			*nums[k] = &v
		}
	}
	a.Between = r.numRange(f, "between", p)
	a.NotBetween = r.numRange(f, "notBetween", p)
	a.Exists = r.Bool(f.V("exists"), p+".exists")
	a.NotExists = r.Bool(f.V("notExists"), p+".notExists")
	if a.Exists && a.NotExists {
		r.Errorf(f.V("notExists"), p+".notExists", "exists and notExists cannot both hold; keep one")
	}
	if f.Has("oneOf") {
		a.OneOf, a.hasOneOf = r.StrList(f.V("oneOf"), p+".oneOf"), true
	}
	if f.Has("notOneOf") {
		a.NotOneOf, a.hasNotOneOf = r.StrList(f.V("notOneOf"), p+".notOneOf"), true
	}
	return a
}

// numRange reads "min,max" (inclusive).
func (r *reader) numRange(f fields, k, p string) *[2]float64 {
	s := r.OptStr(f, k, p)
	if s == nil || *s == "" {
		return nil
	}
	lo, hi, ok := strings.Cut(*s, ",")
	a, err1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
	b, err2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
	if !ok || err1 != nil || err2 != nil || a > b {
		r.Errorf(f.V(k), specyaml.Join(p, k), "%s takes \"min,max\" (two numbers, min first), got %q", k, *s)
		return nil
	}
	return &[2]float64{a, b}
}

func (r *reader) onFailure(n *yaml.Node, p, dir string) *OnFailure {
	f := r.Mapping(n, p, onFailureKeys, nil)
	o := &OnFailure{Pos: r.Pos(n), Commands: r.StrList(f.V("commands"), p+".commands")}
	if f.Has("kubectl") {
		o.Kubectl = r.kubectl(f.V("kubectl"), p+".kubectl", dir, true)
	}
	return o
}

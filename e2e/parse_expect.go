package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/orkspace/orkestra-cel/katalog"
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
	for i, it := range r.items(n, path) {
		p := fmt.Sprintf("%s[%d]", path, i)
		f := r.mapping(it, p, expectKeys, nil)
		if f.has("include") {
			if len(f) > 1 {
				r.errorf(it, p, "an include: entry takes no other keys; move them into the included file")
			}
			if !top {
				r.errorf(f["include"].key, p+".include", "includes do not nest (as upstream): write the entries here")
				continue
			}
			out = append(out, r.include(f.v("include"), p+".include", dir)...)
			continue
		}
		out = append(out, r.expectation(it, f, p, dir))
	}
	return out
}

// include reads an included file: a map with expect: holding a list of
// entries, whose relative paths resolve against its own directory.
func (r *reader) include(n *yaml.Node, path, dir string) []*Expectation {
	file := r.existing(n, path, dir)
	if file == "" {
		return nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil // reported by existing
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		r.errorf(n, path, "%s is not YAML: %v", file, err)
		return nil
	}
	ir := &reader{file: file, dir: filepath.Dir(file), diags: r.diags}
	f := ir.mapping(&root, "", []string{"expect"}, nil)
	if !f.has("expect") {
		r.errorf(n, path, "%s has no expect: (an included file holds `expect:` with a list of entries)", file)
		return nil
	}
	return ir.expectations(f.v("expect"), "expect", ir.dir, false)
}

func (r *reader) expectation(n *yaml.Node, f fields, p, dir string) *Expectation {
	e := &Expectation{Pos: r.pos(n), Dir: dir, Name: r.str(f.v("name"), p+".name"),
		After: r.str(f.v("after"), p+".after"), Wait: r.duration(f.v("wait"), p+".wait")}
	if e.Name == "" {
		r.errorf(n, p+".name", "an expectation needs name: (it is printed in the results)")
		e.Name = p
	}
	switch {
	case e.After == "":
		e.After = AfterSetupComplete // upstream's runner: no after is setup-complete
	case !contains(afterValues, e.After):
		r.errorf(f.v("after"), p+".after", "after %q is not a lifecycle event%s; write one of %s", e.After, katalog.DidYouMean(e.After, afterValues), strings.Join(afterValues, ", "))
	}
	if e.Timeout = r.duration(f.v("timeout"), p+".timeout"); e.Timeout == 0 {
		e.Timeout = DefaultTimeout
	}
	for i, it := range r.items(f.v("resources"), p+".resources") {
		e.Resources = append(e.Resources, r.resource(it, fmt.Sprintf("%s.resources[%d]", p, i)))
	}
	for i, it := range r.items(f.v("commands"), p+".commands") {
		e.Commands = append(e.Commands, r.command(it, fmt.Sprintf("%s.commands[%d]", p, i)))
	}
	if f.has("kubectl") {
		e.Kubectl = r.kubectl(f.v("kubectl"), p+".kubectl", dir, false)
	}
	if f.has("when") {
		e.When = r.when(f.v("when"), p+".when")
	}
	if f.has("or") {
		e.Or = r.when(f.v("or"), p+".or")
	}
	if f.has("onFailure") {
		e.OnFailure = r.onFailure(f.v("onFailure"), p+".onFailure", dir)
	}
	if len(e.Resources) == 0 && len(e.Commands) == 0 && e.Kubectl.empty() {
		r.errorf(n, p, "the expectation %q checks nothing: add resources:, commands: or kubectl:", e.Name)
	}
	return e
}

func (r *reader) when(n *yaml.Node, path string) *katalog.When {
	w, diags := katalog.DecodeWhen(r.file, n, path)
	*r.diags = append(*r.diags, diags...)
	return w
}

func (r *reader) resource(n *yaml.Node, p string) *ResourceCheck {
	f := r.mapping(n, p, resourceKeys, nil)
	c := &ResourceCheck{Pos: r.pos(n), Kind: r.str(f.v("kind"), p+".kind"), Name: r.str(f.v("name"), p+".name"),
		Namespace: r.str(f.v("namespace"), p+".namespace"), Ready: r.boolean(f.v("ready"), p+".ready")}
	if c.Kind == "" {
		r.errorf(n, p+".kind", "a resource check needs kind: (Deployment, Service, your custom kind, …)")
	}
	if f.has("count") {
		if v, ok := r.integer(f.v("count"), p+".count"); ok {
			if v < 0 {
				r.errorf(f.v("count"), p+".count", "count must be 0 or more")
			}
			c.Count = &v
		}
	}
	if c.Ready && c.Count != nil && *c.Count == 0 {
		r.errorf(f.v("ready"), p+".ready", "ready: true with count: 0 asks for ready objects that must not exist; drop one")
	}
	return c
}

func (r *reader) command(n *yaml.Node, p string) *Command {
	f := r.mapping(n, p, commandKeys, nil)
	c := &Command{Pos: r.pos(n), Run: r.str(f.v("run"), p+".run"), Assert: r.assertions(f, p)}
	if c.Run == "" {
		r.errorf(n, p+".run", "a command needs run: (a shell command, run with sh -c)")
	}
	if f.has("exitCode") {
		c.ExitCode, _ = r.integer(f.v("exitCode"), p+".exitCode")
	}
	return c
}

// assertions reads the assertion keys of f. A key given the empty string
// asserts nothing, as upstream: a warning says what to write instead.
func (r *reader) assertions(f fields, p string) Assertions {
	var a Assertions
	strs := map[string]**string{"equals": &a.Equals, "notEquals": &a.NotEquals, "outputContains": &a.Contains, "outputNotContains": &a.NotContains}
	for _, k := range []string{"equals", "notEquals", "outputContains", "outputNotContains"} {
		if s := r.optStr(f, k, p); s != nil {
			if *s == "" {
				r.warnf(f[k].key, join(p, k), "%s: \"\" asserts nothing (as upstream, which skips empty assertions); write notExists: true to require an empty output, exists: true a non-empty one", k)
				continue
			}
			*strs[k] = s
		}
	}
	if s := r.optStr(f, "regex", p); s != nil && *s != "" {
		re, err := regexp.Compile(*s)
		if err != nil {
			r.errorf(f.v("regex"), p+".regex", "not an RE2 regular expression: %v", err)
		}
		a.Regex = re
	}
	nums := map[string]**float64{"greaterThan": &a.GT, "lessThan": &a.LT, "greaterThanOrEqual": &a.GTE, "lessThanOrEqual": &a.LTE}
	for _, k := range []string{"greaterThan", "lessThan", "greaterThanOrEqual", "lessThanOrEqual"} {
		if s := r.optStr(f, k, p); s != nil && *s != "" {
			v, err := strconv.ParseFloat(strings.TrimSpace(*s), 64)
			if err != nil {
				r.errorf(f.v(k), join(p, k), "%s takes a number, got %q", k, *s)
				continue
			}
			*nums[k] = &v
		}
	}
	a.Between = r.numRange(f, "between", p)
	a.NotBetween = r.numRange(f, "notBetween", p)
	a.Exists = r.boolean(f.v("exists"), p+".exists")
	a.NotExists = r.boolean(f.v("notExists"), p+".notExists")
	if a.Exists && a.NotExists {
		r.errorf(f.v("notExists"), p+".notExists", "exists and notExists cannot both hold; keep one")
	}
	if f.has("oneOf") {
		a.OneOf, a.hasOneOf = r.strList(f.v("oneOf"), p+".oneOf"), true
	}
	if f.has("notOneOf") {
		a.NotOneOf, a.hasNotOneOf = r.strList(f.v("notOneOf"), p+".notOneOf"), true
	}
	return a
}

// numRange reads "min,max" (inclusive).
func (r *reader) numRange(f fields, k, p string) *[2]float64 {
	s := r.optStr(f, k, p)
	if s == nil || *s == "" {
		return nil
	}
	lo, hi, ok := strings.Cut(*s, ",")
	a, err1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
	b, err2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
	if !ok || err1 != nil || err2 != nil || a > b {
		r.errorf(f.v(k), join(p, k), "%s takes \"min,max\" (two numbers, min first), got %q", k, *s)
		return nil
	}
	return &[2]float64{a, b}
}

func (r *reader) onFailure(n *yaml.Node, p, dir string) *OnFailure {
	f := r.mapping(n, p, onFailureKeys, nil)
	o := &OnFailure{Pos: r.pos(n), Commands: r.strList(f.v("commands"), p+".commands")}
	if f.has("kubectl") {
		o.Kubectl = r.kubectl(f.v("kubectl"), p+".kubectl", dir, true)
	}
	return o
}

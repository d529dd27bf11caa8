package simulate

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/orkspace/orkestra-cel/katalog"
	"github.com/orkspace/orkestra-cel/specyaml"
)

// includes reads rule lists, expanding `- include: FILE` entries: each is
// replaced, in place, by the ops: list of FILE (relative to the file that
// names it; it may include further files, not itself). An include file is
// a mapping with ops: and any x-… keys, which hold the anchors its rules
// merge (`<<: *base`).
type includes struct {
	r      *reader
	cycles int
}

var ruleKeys = []string{"include", "cycle", "verb", "resource", "name", "count"}

func (inc *includes) rules(y *specyaml.Reader, field string, n *yaml.Node, absent bool, stack []string) []Rule {
	var out []Rule
	for i, item := range y.Items(n, field) {
		at := fmt.Sprintf("%s[%d]", field, i)
		m := y.Mapping(item, at, ruleKeys, nil)
		if m == nil {
			continue
		}
		if m.Has("include") {
			for k, q := range m {
				if k != "include" {
					y.Errorf(q.Key, at+"."+k, "an include entry stands alone (it is replaced by the file's ops); move %s into the included rules or into a rule of its own", k)
				}
			}
			out = append(out, inc.include(y, at, m.V("include"), absent, stack)...)
			continue
		}
		if rule, ok := inc.rule(y, at, m, y.Pos(specyaml.Resolve(item)), absent); ok {
			out = append(out, rule)
		}
	}
	return out
}

func (inc *includes) include(y *specyaml.Reader, field string, n *yaml.Node, absent bool, stack []string) []Rule {
	r := inc.r
	before := len(r.problems)
	path := y.Existing(n, field+".include", y.Dir)
	if path == "" || len(r.problems) > before {
		return nil
	}
	if slices.Contains(stack, path) || path == y.File {
		y.Errorf(n, field+".include", "%s includes itself (through %s)", path, strings.Join(append(stack, path), " → "))
		return nil
	}
	iy, root := specyaml.Open(path, &r.problems)
	if root == nil {
		return nil
	}
	m := iy.Mapping(root, "", []string{"ops"}, nil)
	if m == nil {
		return nil
	}
	if !m.Has("ops") {
		iy.Errorf(specyaml.Resolve(root), "ops", "missing: an include file holds an ops: list of rules")
		return nil
	}
	rules := inc.rules(iy, "ops", m.V("ops"), absent, append(stack, y.File))
	rel := filepath.Base(path)
	for i := range rules {
		rules[i].Field = fmt.Sprintf("%s → %s %s", field, rel, rules[i].Field)
	}
	return rules
}

// rule reads one rule's keys.
func (inc *includes) rule(y *specyaml.Reader, field string, m specyaml.Fields, at katalog.Pos, absent bool) (Rule, bool) {
	r := inc.r
	rule := Rule{Field: field, Pos: at}
	before := len(r.problems)
	if c, ok := y.Int(m.V("cycle"), field+".cycle"); ok {
		if c < 1 || c > inc.cycles {
			y.Errorf(m.V("cycle"), field+".cycle", "is %d: cycles are numbered 1 to %d (spec.cycles); leave cycle out to look at every cycle", c, inc.cycles)
		}
		rule.Cycle = c
	}
	if m.Has("verb") {
		v := y.Str(m.V("verb"), field+".verb")
		if !slices.Contains(Verbs, v) {
			y.Errorf(m.V("verb"), field+".verb", "unknown verb %q%s (verbs: %s)", v, katalog.DidYouMean(v, Verbs), strings.Join(Verbs, ", "))
		}
		rule.Verb = v
	} else if !absent {
		r.errorf(at, field+".verb", "missing: an ops rule names the verb it expects (%s)", strings.Join(Verbs, ", "))
	}
	if m.Has("resource") {
		v := y.Str(m.V("resource"), field+".resource")
		if v == "" || v != strings.ToLower(v) || strings.Contains(v, ".") {
			y.Errorf(m.V("resource"), field+".resource", "%q: a resource is named by its lowercase plural, as kubectl names it (deployments, configmaps, websites), or with /status for its status", v)
		}
		rule.Resource = v
	} else {
		r.errorf(at, field+".resource", "missing: a rule names the resource it looks at (deployments, services, …)")
	}
	rule.Name = y.Str(m.V("name"), field+".name")
	if c, ok := y.Int(m.V("count"), field+".count"); ok {
		switch {
		case absent:
			y.Errorf(m["count"].Key, field+".count", "an absent rule takes no count: it holds when no op matches")
		case c < 1:
			y.Errorf(m.V("count"), field+".count", "must be at least 1")
		}
		rule.Count = c
	}
	return rule, len(r.problems) == before
}

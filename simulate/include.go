package simulate

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/orkspace/orkestra-cel/katalog"
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

func (inc *includes) rules(file, dir, field string, n *yaml.Node, absent bool, stack []string) []Rule {
	r := inc.r
	var out []Rule
	for i, item := range r.list(file, field, n) {
		at := fmt.Sprintf("%s[%d]", field, i)
		m := r.mapping(file, at, item, ruleKeys...)
		if m == nil {
			continue
		}
		if p, ok := m["include"]; ok {
			for k, q := range m {
				if k != "include" {
					r.errorf(posOf(file, q.keyAt), at+"."+k, "an include entry stands alone (it is replaced by the file's ops); move %s into the included rules or into a rule of its own", k)
				}
			}
			out = append(out, inc.include(file, dir, at, p.value, absent, stack)...)
			continue
		}
		if rule, ok := inc.rule(file, at, m, posOf(file, resolve(item)), absent); ok {
			out = append(out, rule)
		}
	}
	return out
}

func (inc *includes) include(file, dir, field string, n *yaml.Node, absent bool, stack []string) []Rule {
	r := inc.r
	path, ok := r.str(file, field+".include", n)
	if !ok {
		return nil
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	if slices.Contains(stack, path) || path == file {
		r.errorf(posOf(file, n), field+".include", "%s includes itself (through %s)", path, strings.Join(append(stack, path), " → "))
		return nil
	}
	root := r.parse(path, posOf(file, n), field+".include")
	if root == nil {
		return nil
	}
	m := r.mapping(path, "", root, "ops")
	if m == nil {
		return nil
	}
	ops, ok := m["ops"]
	if !ok {
		r.errorf(posOf(path, root), "ops", "missing: an include file holds an ops: list of rules")
		return nil
	}
	rules := inc.rules(path, filepath.Dir(path), "ops", ops.value, absent, append(stack, file))
	rel := filepath.Base(path)
	for i := range rules {
		rules[i].Field = fmt.Sprintf("%s → %s %s", field, rel, rules[i].Field)
	}
	return rules
}

// rule reads one rule's keys.
func (inc *includes) rule(file, field string, m map[string]pair, at katalog.Pos, absent bool) (Rule, bool) {
	r := inc.r
	rule := Rule{Field: field, Pos: at}
	before := len(r.problems)
	if p, ok := m["cycle"]; ok {
		if c, ok := r.integer(file, field+".cycle", p.value); ok {
			if c < 1 || c > inc.cycles {
				r.errorf(posOf(file, p.value), field+".cycle", "is %d: cycles are numbered 1 to %d (spec.cycles); leave cycle out to look at every cycle", c, inc.cycles)
			}
			rule.Cycle = c
		}
	}
	if p, ok := m["verb"]; ok {
		if v, ok := r.str(file, field+".verb", p.value); ok {
			if !slices.Contains(Verbs, v) {
				r.errorf(posOf(file, p.value), field+".verb", "unknown verb %q%s (verbs: %s)", v, katalog.DidYouMean(v, Verbs), strings.Join(Verbs, ", "))
			}
			rule.Verb = v
		}
	} else if !absent {
		r.errorf(at, field+".verb", "missing: an ops rule names the verb it expects (%s)", strings.Join(Verbs, ", "))
	}
	if p, ok := m["resource"]; ok {
		if v, ok := r.str(file, field+".resource", p.value); ok {
			if v == "" || v != strings.ToLower(v) || strings.Contains(v, ".") {
				r.errorf(posOf(file, p.value), field+".resource", "%q: a resource is named by its lowercase plural, as kubectl names it (deployments, configmaps, websites), or with /status for its status", v)
			}
			rule.Resource = v
		}
	} else {
		r.errorf(at, field+".resource", "missing: a rule names the resource it looks at (deployments, services, …)")
	}
	if p, ok := m["name"]; ok {
		rule.Name, _ = r.str(file, field+".name", p.value)
	}
	if p, ok := m["count"]; ok {
		if c, ok := r.integer(file, field+".count", p.value); ok {
			switch {
			case absent:
				r.errorf(posOf(file, p.keyAt), field+".count", "an absent rule takes no count: it holds when no op matches")
			case c < 1:
				r.errorf(posOf(file, p.value), field+".count", "must be at least 1")
			}
			rule.Count = c
		}
	}
	return rule, len(r.problems) == before
}

package katalog

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// dependsOn, one machinery for two levels: an entry waits for other entries
// (started, healthy; upstream pkg/types/types_dependson.go), a child for
// other children of the same custom resource (ready, created; kro's
// dependency graph, readiness.go). Both are written in upstream's three
// forms, and both refuse unknown names, unknown conditions and cycles.

// Dependency is one entry, or one child declaration, that another waits for.
type Dependency struct {
	Pos Pos
	// Name is the entry (entry dependsOn) or the declaration's id (child
	// dependsOn) depended on.
	Name string
	// Condition is what it waits for: "started" (the entry's informer
	// synced and workers run) or "healthy" (started, and its last reconcile
	// did not fail); for a child "ready" (it exists and its readyWhen
	// holds) or "created" (it exists).
	Condition string
}

// Dependency conditions.
const (
	DependencyStarted = "started"
	DependencyHealthy = "healthy"
	DependencyReady   = "ready"
	DependencyCreated = "created"
)

// dependencies decodes upstream's three forms: a list of names (the first
// of conds), a map of name → condition, a map of name → {condition: …}.
// what names what the names are, for messages.
func (d *decoder) dependencies(n *yaml.Node, path, what string, conds []string) []*Dependency {
	n = Resolve(n)
	if n == nil || isNull(n) {
		return nil
	}
	var out []*Dependency
	add := func(name *yaml.Node, cond string, condNode *yaml.Node, p string) {
		if cond == "" {
			cond = conds[0]
		}
		if !contains(conds, cond) {
			d.errorf(condNode, p, "condition %q is not one of %s%s", cond, joinWords(conds), DidYouMean(cond, conds))
			return
		}
		out = append(out, &Dependency{Pos: d.pos(name), Name: name.Value, Condition: cond})
	}
	switch n.Kind {
	case yaml.SequenceNode:
		for i, item := range n.Content {
			item = Resolve(item)
			if item == nil || item.Kind != yaml.ScalarNode {
				d.errorf(item, fmt.Sprintf("%s[%d]", path, i), "dependsOn lists %s names (or maps them to a condition)", what)
				continue
			}
			add(item, "", item, fmt.Sprintf("%s[%d]", path, i))
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], Resolve(n.Content[i+1])
			p := join(path, k.Value)
			switch {
			case v == nil || isNull(v):
				add(k, "", v, p)
			case v.Kind == yaml.ScalarNode:
				add(k, v.Value, v, p)
			default:
				o := d.mapping(v, p, []string{"condition"}, nil)
				add(k, d.str(o["condition"].value, p+".condition"), orNode(o["condition"].value, v), p+".condition")
			}
		}
	default:
		d.errorf(n, path, "dependsOn is a list of %s names or a map of name → condition (%s)", what, joinWords(conds))
	}
	return out
}

func joinWords(ws []string) string {
	out := ""
	for i, w := range ws {
		if i > 0 {
			out += ", "
		}
		out += w
	}
	return out
}

// findCycle returns one cycle among names (the first name repeated at the
// end), following deps; nil when there is none. Names deps returns that are
// not among names, and self-references, are left to the caller's checks.
func findCycle(names []string, deps func(string) []*Dependency) []string {
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}
	state := map[string]int{} // 1: on the stack, 2: done
	var stack []string
	var visit func(name string) []string
	visit = func(name string) []string {
		state[name] = 1
		stack = append(stack, name)
		for _, dep := range deps(name) {
			if !known[dep.Name] || dep.Name == name {
				continue
			}
			switch state[dep.Name] {
			case 1:
				for i, s := range stack {
					if s == dep.Name {
						return append(append([]string(nil), stack[i:]...), dep.Name)
					}
				}
			case 0:
				if c := visit(dep.Name); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[name] = 2
		return nil
	}
	for _, n := range names {
		if state[n] == 0 {
			if c := visit(n); c != nil {
				return c
			}
		}
	}
	return nil
}

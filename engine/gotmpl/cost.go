package gotmpl

import (
	"fmt"
	"strings"
	"text/template/parse"
)

// Static cost: where every range of a template is bounded — a list whose
// schema has maxItems, a map with maxProperties, a literal count — the
// template's worst-case cost is estimated at load, with the units of the
// runtime budget (exec.go: one per node per iteration, one per ten bytes a
// function builds), and a template over the limit is a load error, as a CEL
// expression over its estimated cost is. A range over unbounded data is
// bounded at run time only.

// loopBound is what the checker knows of a range: at most n iterations,
// and why (for the message).
type loopBound struct {
	n    float64
	what string
}

// rangeBound is the bound of a range over sh, or over a literal count.
func rangeBound(pipe *parse.PipeNode, res argInfo) (loopBound, bool) {
	if len(pipe.Cmds) == 1 && len(pipe.Cmds[0].Args) == 1 {
		if n, ok := pipe.Cmds[0].Args[0].(*parse.NumberNode); ok && n.IsInt {
			return loopBound{n: float64(max(n.Int64, 0)), what: fmt.Sprintf("{{ range %d }} runs %d times", n.Int64, n.Int64)}, true
		}
	}
	if !res.known || res.sh.s == nil || res.sh.s.ValueValidation == nil {
		return loopBound{}, false
	}
	v := res.sh.s.ValueValidation
	switch {
	case res.sh.s.Type == "array" && v.MaxItems != nil:
		return loopBound{n: float64(*v.MaxItems), what: fmt.Sprintf("%s has up to %d items (its maxItems)", res.sh.path, *v.MaxItems)}, true
	case res.sh.s.Type == "object" && v.MaxProperties != nil:
		return loopBound{n: float64(*v.MaxProperties), what: fmt.Sprintf("%s has up to %d entries (its maxProperties)", res.sh.path, *v.MaxProperties)}, true
	}
	return loopBound{}, false
}

// estimate is the worst-case cost of n; ok is false when a range in it is
// unbounded.
func (c *checker) estimate(n parse.Node) (cost float64, ok bool) {
	ok = true
	walkNodes(n, func(m parse.Node) bool {
		if !ok {
			return false
		}
		cost++
		switch x := m.(type) {
		case *parse.RangeNode:
			b, known := c.bounds[&x.BranchNode]
			if !known {
				ok = false
				return false
			}
			cost += float64(size(x.Pipe))
			body, bodyOK := c.estimate(x.List)
			if x.ElseList != nil {
				e, eOK := c.estimate(x.ElseList)
				cost += e
				bodyOK = bodyOK && eOK
			}
			cost += b.n * (1 + body)
			ok = ok && bodyOK
			return false
		case *parse.CommandNode:
			cost += builtSize(x) / 10
		}
		return true
	})
	return cost, ok
}

// builtSize is the size of the string a call builds where its row says it
// can be large (repeat with literal arguments).
func builtSize(cmd *parse.CommandNode) float64 {
	if len(cmd.Args) == 0 {
		return 0
	}
	id, ok := cmd.Args[0].(*parse.IdentifierNode)
	if !ok || funcs[id.Ident] == nil || funcs[id.Ident].built == nil {
		return 0
	}
	return funcs[id.Ident].built(cmd.Args[1:])
}

// checkCost reports a template whose estimated cost exceeds limit, an
// error. With finding set (a conversion's value, which must not fail on an
// object its schema accepts), it also reports a template whose estimate
// exceeds runtimeLimit, what one evaluation may spend: it passes the static
// limit (the API server's for one CRD rule, ten times the runtime budget),
// yet an object the schema accepts can make it fail at run time.
func (c *checker) checkCost(t *parse.Tree, limit, runtimeLimit uint64, finding func(off int, msg string)) {
	cost, ok := c.estimate(t.Root)
	if !ok || cost <= float64(min(limit, runtimeLimit)) {
		return
	}
	var why []string
	off := 0
	first := true
	walkNodes(t.Root, func(m parse.Node) bool {
		if r, isRange := m.(*parse.RangeNode); isRange {
			if b, known := c.bounds[&r.BranchNode]; known {
				why = append(why, b.what)
				if first {
					// the {{ that opens the range
					off, first = max(strings.LastIndex(c.src[:min(int(r.Pos), len(c.src))], "{{"), 0), false
				}
			}
		}
		return true
	})
	because := ""
	if len(why) > 0 {
		because = ": " + strings.Join(counted(why), "; ")
	}
	const fix = "; lower the bounds in the schema (maxItems, maxProperties) or simplify the template"
	if cost > float64(limit) {
		factor := cost / float64(limit)
		f := fmt.Sprintf("%.1fx", factor)
		if factor > 100 {
			f = "more than 100x"
		}
		c.report(off, fmt.Sprintf("estimated cost %.2g exceeds budget by factor of %s (limit %.2g)%s%s", cost, f, float64(limit), because, fix))
		return
	}
	if finding != nil && cost > float64(runtimeLimit) {
		version := c.version
		if version == "" {
			version = "its schema"
		}
		finding(off, fmt.Sprintf("the template can fail on objects %s accepts: its estimated cost %.2g exceeds the runtime budget of %.2g one evaluation may spend%s%s", version, cost, float64(runtimeLimit), because, fix))
	}
}

// counted lists each reason once, with how many ranges it stands for.
func counted(why []string) []string {
	var out []string
	n := map[string]int{}
	for _, w := range why {
		if n[w] == 0 {
			out = append(out, w)
		}
		n[w]++
	}
	for i, w := range out {
		if n[w] > 1 {
			out[i] = fmt.Sprintf("%s, %d ranges over it", w, n[w])
		}
	}
	return out
}

package cel

import (
	"slices"
	"sort"
	"strings"

	"github.com/google/cel-go/common/ast"
)

// inputPaths lists the data paths of self an expression reads: every chain
// of selections and constant indexes that starts at self, as far as the
// schema resolves it (a list index, a computed key or a function applied to
// the value ends the chain: the whole value is read). Paths covered by a
// shorter one are dropped.
func inputPaths(root *node, e ast.Expr) [][]string {
	var out [][]string
	var visit func(e ast.Expr)
	visit = func(e ast.Expr) {
		if path, ok := selfChain(root, e); ok {
			out = append(out, path)
			return
		}
		switch e.Kind() {
		case ast.SelectKind:
			visit(e.AsSelect().Operand())
		case ast.CallKind:
			call := e.AsCall()
			if call.IsMemberFunction() {
				visit(call.Target())
			}
			for _, a := range call.Args() {
				visit(a)
			}
		case ast.ListKind:
			for _, x := range e.AsList().Elements() {
				visit(x)
			}
		case ast.MapKind:
			for _, en := range e.AsMap().Entries() {
				me := en.AsMapEntry()
				visit(me.Key())
				visit(me.Value())
			}
		case ast.StructKind:
			for _, f := range e.AsStruct().Fields() {
				visit(f.AsStructField().Value())
			}
		case ast.ComprehensionKind:
			c := e.AsComprehension()
			for _, x := range []ast.Expr{c.IterRange(), c.AccuInit(), c.LoopCondition(), c.LoopStep(), c.Result()} {
				visit(x)
			}
		}
	}
	visit(e)
	return minimalPaths(out)
}

// selfChain returns the data path of e when e is self followed by
// selections and constant indexes, cut where the schema no longer tells the
// data key (ok is false when e does not start at self).
func selfChain(root *node, e ast.Expr) ([]string, bool) {
	type step struct {
		name  string
		index bool
	}
	var steps []step
	cur := e
	for {
		switch cur.Kind() {
		case ast.IdentKind:
			if cur.AsIdent() != "self" {
				return nil, false
			}
			slices.Reverse(steps)
			path := []string{}
			n := root
			for _, s := range steps {
				if n == nil {
					break
				}
				key, next, ok := dataStep(n, s.name, s.index)
				if !ok {
					break
				}
				path = append(path, key)
				n = next
			}
			return path, true
		case ast.SelectKind:
			sel := cur.AsSelect()
			steps = append(steps, step{name: sel.FieldName()})
			cur = sel.Operand()
		case ast.CallKind:
			call := cur.AsCall()
			switch call.FunctionName() {
			case "_?._", "_[_]", "_[?_]":
				args := call.Args()
				if len(args) != 2 {
					return nil, false
				}
				name, ok := literalString(args[1])
				if !ok {
					if args[1].Kind() != ast.LiteralKind {
						return nil, false
					}
					// A constant list index: the chain reads the whole list.
					steps = steps[:0]
				}
				steps = append(steps, step{name: name, index: !ok || call.FunctionName() != "_?._"})
				cur = args[0]
				continue
			}
			return nil, false
		default:
			return nil, false
		}
	}
}

// dataStep resolves one step of a chain: the data key and the schema below.
func dataStep(n *node, name string, index bool) (string, *node, bool) {
	switch n.kind {
	case kObject:
		p := n.prop(name)
		if p == nil {
			if n.preserve && !index {
				return name, dynNode, true
			}
			return "", nil, false
		}
		return p.name, p.n, true
	case kMap:
		return name, n.elem, name != "" || !index
	case kDyn:
		if name == "" {
			return "", nil, false
		}
		return name, dynNode, true
	}
	return "", nil, false
}

// minimalPaths sorts paths and drops those below another one.
func minimalPaths(paths [][]string) [][]string {
	sort.Slice(paths, func(i, j int) bool {
		return strings.Join(paths[i], "\x00") < strings.Join(paths[j], "\x00")
	})
	out := paths[:0]
	for _, p := range paths {
		covered := false
		for _, q := range out {
			if len(q) <= len(p) && slices.Equal(q, p[:len(q)]) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, p)
		}
	}
	return out
}

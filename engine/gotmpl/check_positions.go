package gotmpl

import (
	"strings"
	"text/template/parse"
)

// startOf is the offset where a node's text starts (text/template records
// chains at their second part).
func startOf(src string, n parse.Node) int {
	switch x := n.(type) {
	case *parse.FieldNode:
		if offs := fieldOffsets(src, x); len(offs) > 0 && offs[0] > 0 {
			return offs[0] - 1
		}
	case *parse.VariableNode:
		if len(x.Ident) > 1 {
			if start := int(x.Pos) - len(x.Ident[0]); start >= 0 && strings.HasPrefix(src[start:], x.Ident[0]) {
				return start
			}
		}
	case *parse.ChainNode:
		if p := int(x.Node.Position()); p > 0 && src[p-1] == '(' {
			return p - 1
		}
		return int(x.Node.Position())
	}
	return int(n.Position())
}

// fieldOffsets returns, for each segment of a field chain, the byte offset
// of its name. text/template records the position of a multi-segment field
// at its second segment.
func fieldOffsets(src string, f *parse.FieldNode) []int {
	pos := int(f.Pos)
	start := pos
	if len(f.Ident) > 1 {
		start = pos - 1 - len(f.Ident[0])
	}
	if start < 0 || !strings.HasPrefix(src[start:], "."+f.Ident[0]) {
		start = -1
	}
	return segmentOffsets(start, pos, f.Ident)
}

func variableOffsets(src string, v *parse.VariableNode) []int {
	pos := int(v.Pos)
	start := pos
	if len(v.Ident) > 1 {
		start = pos - len(v.Ident[0])
	}
	if start < 0 || !strings.HasPrefix(src[start:], v.Ident[0]) {
		start = -1
	}
	if start >= 0 {
		start += len(v.Ident[0])
	}
	return segmentOffsets(start, pos, v.Ident[1:])
}

func chainOffsets(src string, ch *parse.ChainNode) []int {
	pos := int(ch.Pos)
	start := pos
	if len(ch.Field) == 0 || pos >= len(src) || !strings.HasPrefix(src[pos:], "."+ch.Field[0]) {
		start = -1
	}
	return segmentOffsets(start, pos, ch.Field)
}

// segmentOffsets lays segments out from start (the dot of the first one);
// start < 0 means unknown: every segment then points at fallback.
func segmentOffsets(start, fallback int, segs []string) []int {
	offs := make([]int, len(segs))
	for i, s := range segs {
		if start < 0 {
			offs[i] = fallback
			continue
		}
		offs[i] = start + 1
		start += 1 + len(s)
	}
	return offs
}

// plainRef returns the field path of a template that is exactly one field
// reference (`{{ .spec.x }}` or `{{ $.spec.x }}`, whitespace around it), or
// nil.
func plainRef(root *parse.ListNode) []string {
	act := soleAction(root)
	if act == nil || len(act.Pipe.Decl) != 0 || len(act.Pipe.Cmds) != 1 || len(act.Pipe.Cmds[0].Args) != 1 {
		return nil
	}
	switch x := act.Pipe.Cmds[0].Args[0].(type) {
	case *parse.FieldNode:
		return x.Ident
	case *parse.VariableNode:
		if x.Ident[0] == "$" && len(x.Ident) > 1 {
			return x.Ident[1:]
		}
	}
	return nil
}

// soleAction returns the only action of a template (whitespace text around
// it allowed), or nil.
func soleAction(root *parse.ListNode) *parse.ActionNode {
	var act *parse.ActionNode
	for _, n := range root.Nodes {
		switch x := n.(type) {
		case *parse.TextNode:
			if strings.TrimSpace(string(x.Text)) != "" {
				return nil
			}
		case *parse.ActionNode:
			if act != nil {
				return nil
			}
			act = x
		default:
			return nil
		}
	}
	return act
}

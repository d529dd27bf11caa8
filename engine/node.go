package engine

import (
	"fmt"

	"github.com/orkspace/orkestra-cel/katalog"
)

// Node is a compiled value tree mirroring the katalog YAML: literal scalars,
// expressions, maps and lists. Evaluating it yields plain Go data.
type Node struct {
	// Field is the node's path where it lands (e.g. spec.replicas), for messages.
	Field string
	Pos   katalog.Pos
	// Exactly one of the following describes the node.
	Expr    Expr // a string leaf holding an expression
	Literal any  // a literal scalar, already typed (string, int64, float64, bool, nil)
	Fields  []NodeField
	Items   []*Node
	// Select is a value chosen by a name (a profile named by an
	// expression; selection.go).
	Select *Selection
	kind   nodeKind
}

type nodeKind int

const (
	literalNode nodeKind = iota
	exprNode
	mapNode
	listNode
	selectNode
)

// NodeField is one key of a map node, in document order.
type NodeField struct {
	Key   string
	Value *Node
}

// NewLiteral, NewExpr, NewMap and NewList build nodes.
func NewLiteral(field string, pos katalog.Pos, v any) *Node {
	return &Node{Field: field, Pos: pos, Literal: v, kind: literalNode}
}

func NewExpr(field string, e Expr) *Node {
	return &Node{Field: field, Pos: e.Pos(), Expr: e, kind: exprNode}
}

func NewMap(field string, pos katalog.Pos, fields []NodeField) *Node {
	return &Node{Field: field, Pos: pos, Fields: fields, kind: mapNode}
}

func NewList(field string, pos katalog.Pos, items []*Node) *Node {
	return &Node{Field: field, Pos: pos, Items: items, kind: listNode}
}

// IsMap, IsList, IsExpr and IsLiteral tell the node's shape.
func (n *Node) IsMap() bool     { return n.kind == mapNode }
func (n *Node) IsList() bool    { return n.kind == listNode }
func (n *Node) IsExpr() bool    { return n.kind == exprNode }
func (n *Node) IsLiteral() bool { return n.kind == literalNode }

// Get returns the field of a map node, or nil.
func (n *Node) Get(key string) *Node {
	if n == nil {
		return nil
	}
	for _, f := range n.Fields {
		if f.Key == key {
			return f.Value
		}
	}
	return nil
}

// EvalError is an expression that failed: it names the target field, the
// expression and where it is written.
type EvalError struct {
	Field  string
	Source string
	Pos    katalog.Pos
	Err    error
}

func (e *EvalError) Error() string {
	return fmt.Sprintf("%s: evaluating %s (at %s): %v", e.Field, e.Source, e.Pos, e.Err)
}

func (e *EvalError) Unwrap() error { return e.Err }

// Eval evaluates the tree. present is false when the node is a plain field
// reference whose source is absent (the target is then left unset); map
// fields and list items that are absent are dropped.
func (n *Node) Eval(s *Scope) (value any, present bool, err error) {
	switch n.kind {
	case literalNode:
		return n.Literal, true, nil
	case exprNode:
		v, err := n.Expr.Eval(s)
		if err == ErrAbsent {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, &EvalError{Field: n.Field, Source: n.Expr.Source(), Pos: n.Expr.Pos(), Err: err}
		}
		return v, true, nil
	case mapNode:
		m := make(map[string]any, len(n.Fields))
		for _, f := range n.Fields {
			v, ok, err := f.Value.Eval(s)
			if err != nil {
				return nil, false, err
			}
			if ok {
				m[f.Key] = v
			}
		}
		return m, true, nil
	case selectNode:
		return n.evalSelect(s)
	case listNode:
		l := make([]any, 0, len(n.Items))
		for _, item := range n.Items {
			v, ok, err := item.Eval(s)
			if err != nil {
				return nil, false, err
			}
			if ok {
				l = append(l, v)
			}
		}
		return l, true, nil
	}
	return nil, false, fmt.Errorf("%s: unknown node", n.Field)
}

// Walk calls f for every node of the tree, parents first.
func (n *Node) Walk(f func(*Node)) {
	if n == nil {
		return
	}
	f(n)
	for _, fl := range n.Fields {
		fl.Value.Walk(f)
	}
	for _, item := range n.Items {
		item.Walk(f)
	}
	if n.Select != nil {
		n.Select.Key.Walk(f)
		for _, c := range n.Select.Cases {
			c.Value.Walk(f)
		}
	}
}

// Source is the expression of an expression node, else the literal as text
// (for messages).
func (n *Node) Source() string {
	if n.kind == exprNode {
		return n.Expr.Source()
	}
	return fmt.Sprint(n.Literal)
}

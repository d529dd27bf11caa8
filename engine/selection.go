package engine

import (
	"fmt"
	"sort"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/katalog"
)

// A selection is a value chosen by a name when the object is reconciled: a
// profile named by an expression (katalog.Selection). Its key compiles as a
// string expression; each case compiles against the same expected type as
// the value it stands for, so every profile the name may pick is checked
// at load.

// Selection is the compiled form of katalog.Selection.
type Selection struct {
	Key   *Node
	What  string
	Cases []SelectionCase
}

// SelectionCase is one name a selection may pick; Value nil leaves the
// field unset.
type SelectionCase struct {
	Name  string
	Fold  bool
	Value *Node
}

func (c *compiler) selectValue(sc compileScope, v *katalog.Value, expected *structuralschema.Structural, t target) *Node {
	s := v.Select
	kt := t
	kt.rawRefs = nil // the name is always a whole string, never left unset
	out := &Selection{Key: c.stringValue(sc, s.Key, stringSchema, kt), What: s.What}
	for _, sc2 := range s.Cases {
		cs := SelectionCase{Name: sc2.Name, Fold: sc2.Fold}
		if sc2.Value != nil {
			cs.Value = c.value(sc, sc2.Value, expected, t)
		}
		out.Cases = append(out.Cases, cs)
	}
	return &Node{Field: t.field, Pos: v.Pos, Select: out, kind: selectNode}
}

var stringSchema = &structuralschema.Structural{Generic: structuralschema.Generic{Type: "string"}}

// pick returns the case name selects: a profile the katalog defines by its
// exact name, else a built-in in any case.
func (s *Selection) pick(name string) (*SelectionCase, error) {
	for i := range s.Cases {
		if !s.Cases[i].Fold && s.Cases[i].Name == name {
			return &s.Cases[i], nil
		}
	}
	for i := range s.Cases {
		if s.Cases[i].Fold && strings.EqualFold(s.Cases[i].Name, name) {
			return &s.Cases[i], nil
		}
	}
	names := make([]string, len(s.Cases))
	for i, c := range s.Cases {
		names[i] = c.Name
	}
	sort.Strings(names)
	return nil, fmt.Errorf("unknown %s %q; one of %s", s.What, name, strings.Join(names, ", "))
}

func (n *Node) evalSelect(s *Scope) (any, bool, error) {
	k, ok, err := n.Select.Key.Eval(s)
	if err != nil {
		return nil, false, err
	}
	name, _ := k.(string)
	if !ok || name == "" {
		return nil, false, &EvalError{Field: n.Field, Source: fmt.Sprint(n.Select.Key.Source()), Pos: n.Select.Key.Pos, Err: fmt.Errorf("the %s name is empty", n.Select.What)}
	}
	c, err := n.Select.pick(name)
	if err != nil {
		return nil, false, &EvalError{Field: n.Field, Source: n.Select.Key.Source(), Pos: n.Select.Key.Pos, Err: err}
	}
	if c.Value == nil {
		return nil, false, nil
	}
	return c.Value.Eval(s)
}

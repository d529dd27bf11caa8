package engine

import (
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/katalog"
)

// A motif's expressions read the inputs its import binds (katalog/inputs.go):
// legacy templates as .inputs.NAME, CEL as the variable inputs, an object
// typed by the inputs' declared types. The import's values are expressions
// over the importing entry's custom resource, evaluated once per reconcile
// before the motif's declarations read them.

// InputsVar is the CEL variable (and legacy root key) of a motif's inputs.
const InputsVar = "inputs"

// Inputs are a motif import's inputs, compiled.
type Inputs struct {
	Fields []InputField
	schema *structuralschema.Structural
}

// InputField is one input: the import's value, else the input's default; nil
// when neither (the input is then absent).
type InputField struct {
	Name  string
	Value *Node
}

// inputsMemo keys an import's evaluated inputs in a scope's memo.
type inputsMemo struct{ in *Inputs }

type evaluatedInputs struct {
	values map[string]any
	err    error
}

// Scope returns base with the inputs evaluated in it readable: the
// variable inputs, and .inputs of the legacy root. They are evaluated once
// per base scope.
func (in *Inputs) Scope(base *Scope) (*Scope, error) {
	r := base.Memo(inputsMemo{in}, func() any {
		vals := make(map[string]any, len(in.Fields))
		for _, f := range in.Fields {
			if f.Value == nil {
				continue
			}
			v, ok, err := f.Value.Eval(base)
			if err != nil {
				return evaluatedInputs{err: err}
			}
			if ok {
				vals[f.Name] = v
			}
		}
		return evaluatedInputs{values: vals}
	}).(evaluatedInputs)
	if r.err != nil {
		return nil, r.err
	}
	self := make(map[string]any, len(base.Self)+1)
	for k, v := range base.Self {
		self[k] = v
	}
	self[InputsVar] = r.values
	vars := make(map[string]any, len(base.Vars)+1)
	for k, v := range base.Vars {
		vars[k] = v
	}
	vars[InputsVar] = r.values
	s := NewScope(self)
	s.Children, s.Vars, s.Roots = base.Children, vars, base.Roots
	return s, nil
}

var inputSchemas = map[string]string{"string": "string", "integer": "integer", "number": "number", "boolean": "boolean"}

// inputs compiles an import's inputs once: each value against its input's
// type, in the entry's scope (the values read the custom resource).
func (c *compiler) inputs(sc compileScope, imp *katalog.MotifImport) *Inputs {
	if in, ok := c.imports[imp]; ok {
		return in
	}
	in := &Inputs{schema: &structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Properties: map[string]structuralschema.Structural{}}}
	for _, decl := range imp.Inputs {
		typ := &structuralschema.Structural{Generic: structuralschema.Generic{Type: inputSchemas[decl.Type]}}
		in.schema.Properties[decl.Name] = *typ
		f := InputField{Name: decl.Name}
		if v := imp.Value(decl); v != nil {
			field := imp.Path + ".with." + decl.Name
			if imp.With[decl.Name] == nil {
				field = "inputs." + decl.Name + ".default"
			}
			f.Value = c.value(sc, v, typ, target{field: field, coerce: CoerceTyped})
		}
		in.Fields = append(in.Fields, f)
	}
	if c.imports == nil {
		c.imports = map[*katalog.MotifImport]*Inputs{}
	}
	c.imports[imp] = in
	return in
}

// withInputs is the scope of a motif's declaration: its import's inputs
// readable as the CEL variable inputs and the legacy root's .inputs.
func (sc compileScope) withInputs(in *Inputs) compileScope {
	vars := append(append([]Var(nil), sc.vars...), Var{Name: InputsVar, Schema: in.schema})
	root := structuralschema.Structural{}
	if self := sc.rootFor(Legacy); self != nil {
		root = *self
	}
	props := make(map[string]structuralschema.Structural, len(root.Properties)+1)
	for k, v := range root.Properties {
		props[k] = v
	}
	props[InputsVar] = *in.schema
	root.Properties = props
	out := sc
	out.vars, out.legacyRoot = vars, &root
	return out
}

package cel

import (
	"fmt"
	"strings"

	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"

	"github.com/orkspace/orkestra-cel/engine"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// outCheck checks the type of an expression's output against the schema of
// the field where the value lands.
type outCheck struct {
	tree *schemaTree
	ast  *ast.AST
	// src is the expression as the user wrote it, for messages: ${…}.
	src string
	// srcText is the expression source (inside ${…}), to compute offsets.
	srcText  string
	problems []problem
	// runtime is set when part of the output is dyn: the value is checked
	// against the schema when it is computed.
	runtime bool
}

// problem is a message at a byte offset inside the expression source, or at
// the `${` when off < 0.
type problem struct {
	off int
	msg string
}

func (c *outCheck) add(e ast.Expr, format string, args ...any) {
	off := -1
	if e != nil && e.ID() != c.ast.Expr().ID() {
		off = spanStart(c.ast, c.srcText, e)
	}
	c.problems = append(c.problems, problem{off: off, msg: fmt.Sprintf(format, args...)})
}

// check checks a value of CEL type t, computed by expression e (nil when not
// known), against schema exp at where. subject is what yields the value, for
// messages.
func (c *outCheck) check(t *types.Type, e ast.Expr, exp *structuralschema.Structural, where, subject string) {
	if exp == nil || t == nil {
		return
	}
	k := t.Kind()
	switch k {
	case types.DynKind, types.AnyKind, types.TypeParamKind, types.ErrorKind:
		c.runtime = true
		return
	case types.OpaqueKind:
		if t.TypeName() == "optional_type" && len(t.Parameters()) == 1 {
			// none leaves the field unset; a value must fit.
			if e != nil && e.Kind() != ast.CallKind {
				e = nil
			}
			c.check(t.Parameters()[0], e, exp, where, subject)
			return
		}
	}
	if k == types.NullTypeKind {
		if exp.Nullable || isAnything(exp) {
			return
		}
		c.add(e, "%s yields null, but %s expects %s; leave the field out instead (an optional value, e.g. self.?spec.?x, leaves it unset when absent)", subject, where, expectedWord(exp))
		return
	}
	if isAnything(exp) {
		return
	}
	mismatch := func() {
		c.add(e, "%s yields %s, but %s expects %s%s", subject, c.typeWord(t), where, expectedWord(exp), hint(t, exp, c.exprText(e)))
	}
	if exp.XIntOrString {
		switch k {
		case types.IntKind, types.UintKind, types.StringKind:
			return
		}
		mismatch()
		return
	}
	switch exp.Type {
	case "integer":
		if k == types.IntKind || k == types.UintKind {
			return
		}
		mismatch()
	case "number":
		if k == types.IntKind || k == types.UintKind || k == types.DoubleKind {
			return
		}
		mismatch()
	case "boolean":
		if k == types.BoolKind {
			return
		}
		mismatch()
	case "string":
		switch k {
		case types.StringKind:
			c.checkEnum(e, exp, where, subject)
			return
		case types.TimestampKind, types.DurationKind:
			return
		case types.BytesKind:
			if exp.ValueValidation != nil && exp.ValueValidation.Format == "byte" {
				return
			}
		}
		mismatch()
	case "array":
		if k != types.ListKind {
			mismatch()
			return
		}
		elemT := t.Parameters()[0]
		if e != nil && e.Kind() == ast.ListKind {
			for i, el := range e.AsList().Elements() {
				el, elT := c.unwrapDyn(el)
				c.check(elT, el, exp.Items, where+"[*]", fmt.Sprintf("%s: list element %d", c.src, i))
			}
			return
		}
		c.check(elemT, nil, exp.Items, where+"[*]", subject+" (its elements)")
	case "object":
		c.checkObject(t, e, exp, where, subject, mismatch)
	}
}

func (c *outCheck) checkObject(t *types.Type, e ast.Expr, exp *structuralschema.Structural, where, subject string, mismatch func()) {
	k := t.Kind()
	var addl *structuralschema.Structural
	if exp.AdditionalProperties != nil {
		addl = exp.AdditionalProperties.Structural
		if addl == nil {
			// additionalProperties: true: any values.
			if k == types.MapKind || k == types.StructKind {
				return
			}
			mismatch()
			return
		}
	}
	if k == types.MapKind {
		keyT := t.Parameters()[0]
		if kk := keyT.Kind(); kk != types.StringKind && kk != types.DynKind && kk != types.AnyKind {
			c.add(e, "%s yields %s, but %s expects %s with string keys", subject, c.typeWord(t), where, expectedWord(exp))
			return
		}
		if e != nil && e.Kind() == ast.MapKind {
			for _, entry := range e.AsMap().Entries() {
				me := entry.AsMapEntry()
				key := me.Key()
				keyName, constKey := literalString(key)
				if !constKey {
					c.runtime = true
					continue
				}
				target := c.fieldTarget(exp, addl, keyName)
				if target == nil {
					if len(exp.Properties) > 0 && !exp.XPreserveUnknownFields {
						c.add(key, "%s: %s has no field %q%s", c.src, where, keyName, fieldHint(keyName, exp))
					}
					continue
				}
				val, valT := c.unwrapDyn(me.Value())
				c.check(valT, val, target, joinField(where, keyName), fmt.Sprintf("%s: the value of %q", c.src, keyName))
			}
			return
		}
		if addl != nil {
			c.check(t.Parameters()[1], nil, addl, where+"[*]", subject+" (its values)")
			return
		}
		// A computed map into an object with declared fields: its keys are
		// only known at runtime.
		c.runtime = true
		return
	}
	if k != types.StructKind {
		mismatch()
		return
	}
	src := c.tree.byType[t.TypeName()]
	if src == nil {
		c.runtime = true
		return
	}
	for _, p := range src.fields {
		if p.cel == "" {
			continue
		}
		target := c.fieldTarget(exp, addl, p.name)
		if target == nil {
			if len(exp.Properties) > 0 && !exp.XPreserveUnknownFields {
				c.add(e, "%s yields an object with field %s, but %s has no field %s%s", subject, p.name, where, p.name, fieldHint(p.name, exp))
			}
			continue
		}
		c.check(p.n.decl.CelType(), nil, target, joinField(where, p.name), fmt.Sprintf("%s: field %s", c.src, p.name))
		if len(p.n.enum) > 0 {
			c.checkEnumSubset(nil, p.n, target, joinField(where, p.name), fmt.Sprintf("%s: field %s", c.src, p.name))
		}
	}
	if src.preserve {
		c.runtime = true
	}
}

// unwrapDyn looks through dyn(x), which Kubernetes CEL needs to mix types in
// list and map literals: x's own type is checked.
func (c *outCheck) unwrapDyn(e ast.Expr) (ast.Expr, *types.Type) {
	if e.Kind() == ast.CallKind {
		call := e.AsCall()
		if call.FunctionName() == "dyn" && !call.IsMemberFunction() && len(call.Args()) == 1 {
			arg := call.Args()[0]
			return arg, c.ast.GetType(arg.ID())
		}
	}
	return e, c.ast.GetType(e.ID())
}

func (c *outCheck) fieldTarget(exp, addl *structuralschema.Structural, name string) *structuralschema.Structural {
	if ps, ok := exp.Properties[name]; ok {
		return &ps
	}
	if addl != nil {
		return addl
	}
	if exp.XPreserveUnknownFields || len(exp.Properties) == 0 {
		return &structuralschema.Structural{Extensions: structuralschema.Extensions{XPreserveUnknownFields: true}}
	}
	return nil
}

func fieldHint(name string, exp *structuralschema.Structural) string {
	names := engine.PropertyNames(exp)
	if s := didYouMean(name, names); s != "" {
		return s
	}
	if len(names) <= 15 {
		return " (it has " + strings.Join(names, ", ") + ")"
	}
	return ""
}

func joinField(where, name string) string {
	if where == "" || where == "the target field" {
		return name
	}
	return where + "." + name
}

func literalString(e ast.Expr) (string, bool) {
	if e == nil || e.Kind() != ast.LiteralKind {
		return "", false
	}
	s, ok := e.AsLiteral().(types.String)
	return string(s), ok
}

// isAnything: a schema that accepts any value (no type, preserve unknown
// fields without declared properties).
func isAnything(s *structuralschema.Structural) bool {
	if s == nil {
		return true
	}
	if s.XIntOrString {
		return false
	}
	if s.Type == "" {
		return true
	}
	return s.Type == "object" && s.XPreserveUnknownFields && len(s.Properties) == 0 && s.AdditionalProperties == nil
}

// expectedWord names what a schema expects, in user terms.
func expectedWord(s *structuralschema.Structural) string {
	if s == nil {
		return "anything"
	}
	if s.XIntOrString {
		return "an integer or a string"
	}
	switch s.Type {
	case "integer":
		return "an integer"
	case "number":
		return "a number"
	case "boolean":
		return "a boolean"
	case "string":
		if s.ValueValidation != nil && len(s.ValueValidation.Enum) > 0 {
			return "a string (one of " + enumList(s) + ")"
		}
		return "a string"
	case "array":
		if s.Items == nil {
			return "a list"
		}
		return "a list of " + pluralWord(s.Items)
	case "object":
		if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil && len(s.Properties) == 0 {
			return "a map of " + pluralWord(s.AdditionalProperties.Structural)
		}
		return "an object"
	}
	return "anything"
}

func pluralWord(s *structuralschema.Structural) string {
	if s.XIntOrString {
		return "integers or strings"
	}
	switch s.Type {
	case "integer":
		return "integers"
	case "number":
		return "numbers"
	case "boolean":
		return "booleans"
	case "string":
		return "strings"
	case "array":
		return "lists"
	case "object":
		if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil && len(s.Properties) == 0 {
			return "maps"
		}
		return "objects"
	}
	return "values"
}

// typeWord names a CEL type for messages; objects of `self` by their path.
func (c *outCheck) typeWord(t *types.Type) string {
	return typeWord(c.tree, t)
}

func typeWord(tree *schemaTree, t *types.Type) string {
	switch t.Kind() {
	case types.IntKind:
		return "int"
	case types.UintKind:
		return "uint"
	case types.DoubleKind:
		return "double"
	case types.StringKind:
		return "string"
	case types.BoolKind:
		return "bool"
	case types.BytesKind:
		return "bytes"
	case types.NullTypeKind:
		return "null"
	case types.TimestampKind:
		return "timestamp"
	case types.DurationKind:
		return "duration"
	case types.DynKind:
		return "dyn"
	case types.ListKind:
		return "list(" + typeWord(tree, t.Parameters()[0]) + ")"
	case types.MapKind:
		return "map(" + typeWord(tree, t.Parameters()[0]) + ", " + typeWord(tree, t.Parameters()[1]) + ")"
	case types.StructKind:
		if tree != nil {
			if n := tree.byType[t.TypeName()]; n != nil {
				return "object(" + n.selfPath() + ")"
			}
		}
	case types.OpaqueKind:
		if t.TypeName() == "optional_type" && len(t.Parameters()) == 1 {
			return "optional(" + typeWord(tree, t.Parameters()[0]) + ")"
		}
	}
	return t.String()
}

// hint says how to convert a value of type t to what exp expects.
func hint(t *types.Type, exp *structuralschema.Structural, text string) string {
	k := t.Kind()
	if text == "" {
		text = "..."
	}
	if exp.XIntOrString {
		if k == types.DoubleKind {
			return "; convert with int(" + text + ") or string(" + text + ")"
		}
		return ""
	}
	switch exp.Type {
	case "integer":
		switch k {
		case types.StringKind, types.DoubleKind:
			return "; convert with int(" + text + ")"
		}
	case "number":
		if k == types.StringKind {
			return "; convert with double(" + text + ")"
		}
	case "string":
		switch k {
		case types.IntKind, types.UintKind, types.DoubleKind, types.BoolKind, types.BytesKind:
			return "; convert with string(" + text + ")"
		}
	case "boolean":
		switch k {
		case types.StringKind:
			return "; compare it, e.g. " + text + " == 'true'"
		case types.IntKind, types.UintKind, types.DoubleKind:
			return "; compare it, e.g. " + text + " > 0"
		}
	}
	return ""
}

// exprText is the source of a sub-expression when it is short, else "...".
func (c *outCheck) exprText(e ast.Expr) string {
	if e == nil {
		return ""
	}
	if e.ID() == c.ast.Expr().ID() {
		if len(c.srcText) <= 60 {
			return strings.TrimSpace(c.srcText)
		}
		return ""
	}
	runes := []rune(c.srcText)
	start, stop, ok := span(c.ast, runes, e)
	if !ok {
		return ""
	}
	if start < 0 || stop > len(runes) || start >= stop {
		return ""
	}
	text := strings.TrimSpace(string(runes[start:stop]))
	if len(text) > 60 {
		return ""
	}
	return text
}

// resolveChain returns the schema node of a plain field reference (selects,
// optional selects, constant indexes from self), or nil.
func resolveChain(tree *schemaTree, e ast.Expr) *node {
	switch e.Kind() {
	case ast.IdentKind:
		if e.AsIdent() == "self" {
			return tree.root
		}
	case ast.SelectKind:
		sel := e.AsSelect()
		if sel.IsTestOnly() {
			return nil
		}
		return childNode(resolveChain(tree, sel.Operand()), sel.FieldName(), false)
	case ast.CallKind:
		call := e.AsCall()
		switch call.FunctionName() {
		case "_?._", "_[_]", "_[?_]":
			args := call.Args()
			if len(args) != 2 {
				return nil
			}
			parent := resolveChain(tree, args[0])
			if name, ok := literalString(args[1]); ok {
				return childNode(parent, name, false)
			}
			if args[1].Kind() == ast.LiteralKind && call.FunctionName() != "_?._" {
				return childNode(parent, "", true)
			}
		}
	}
	return nil
}

func childNode(parent *node, name string, index bool) *node {
	if parent == nil {
		return nil
	}
	switch parent.kind {
	case kObject:
		if index {
			return nil
		}
		if p := parent.prop(name); p != nil {
			return p.n
		}
	case kMap:
		if !index {
			return parent.elem
		}
	case kList:
		if index {
			return parent.elem
		}
	}
	return nil
}

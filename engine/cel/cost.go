package cel

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"

	"k8s.io/apiserver/pkg/cel/library"
)

// estimateCost estimates the worst-case cost of a checked expression with
// Kubernetes' cost estimator and the schema's size estimates.
//
// CEL's estimator follows field paths through selections only, so
// `self.spec.?seo.?keywords.orValue([]).join(',')` would lose every bound
// and estimate 1e18. The estimate is therefore computed on a cost-equivalent
// rewrite of the expression: optional selections and indexes become plain
// ones (same cost, same value sizes), x.value() and optional.of(x) become x,
// and x.orValue(d) becomes x (d a literal) or `true ? x : d`.
func estimateCost(se *schemaEnv, checked *cel.Ast) (checker.CostEstimate, error) {
	est := &library.CostEstimator{SizeEstimator: se.est}
	if rewritten := costEquivalent(checked); rewritten != nil {
		if c, err := se.env.EstimateCost(rewritten, est); err == nil {
			return c, nil
		}
	}
	return se.env.EstimateCost(checked, est)
}

// costEquivalent returns the rewrite described at estimateCost, or nil when
// the expression has no optionals (or the rewrite fails).
func costEquivalent(checked *cel.Ast) *cel.Ast {
	native := checked.NativeRep()
	hasOptional := false
	ast.PreOrderVisit(native.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if e.Kind() == ast.CallKind {
			switch e.AsCall().FunctionName() {
			case "_?._", "_[?_]", "orValue", "value", "optional.of", "optional.ofNonZeroValue", "or":
				hasOptional = true
			}
		}
	}))
	if !hasOptional {
		return nil
	}
	cp := ast.Copy(native)
	typeMap := cp.TypeMap()
	refMap := cp.ReferenceMap()
	nextID := ast.MaxID(cp) + 1
	fac := ast.NewExprFactory()
	unwrap := func(t *types.Type) *types.Type {
		if t != nil && t.Kind() == types.OpaqueKind && t.TypeName() == "optional_type" && len(t.Parameters()) == 1 {
			return t.Parameters()[0]
		}
		return t
	}
	replaceWith := func(e, child ast.Expr) {
		t := typeMap[child.ID()]
		e.SetKindCase(child)
		delete(refMap, e.ID())
		if t != nil {
			typeMap[e.ID()] = t
		}
	}
	ast.PostOrderVisit(cp.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if e.Kind() != ast.CallKind {
			return
		}
		call := e.AsCall()
		args := call.Args()
		switch call.FunctionName() {
		case "_?._":
			if len(args) != 2 {
				return
			}
			field, ok := literalString(args[1])
			if !ok {
				return
			}
			t := unwrap(typeMap[e.ID()])
			e.SetKindCase(fac.NewSelect(e.ID(), args[0], field))
			delete(refMap, e.ID())
			typeMap[e.ID()] = t
		case "_[?_]":
			if len(args) != 2 {
				return
			}
			operandT := unwrap(typeMap[args[0].ID()])
			overload := "index_list"
			if operandT != nil && operandT.Kind() == types.MapKind {
				overload = "index_map"
			}
			t := unwrap(typeMap[e.ID()])
			e.SetKindCase(fac.NewCall(e.ID(), "_[_]", args[0], args[1]))
			refMap[e.ID()] = ast.NewFunctionReference(overload)
			typeMap[e.ID()] = t
		case "value":
			if call.IsMemberFunction() && len(args) == 0 && hasOverload(refMap, e.ID(), "optional_value") {
				replaceWith(e, call.Target())
			}
		case "optional.of", "optional.ofNonZeroValue":
			if !call.IsMemberFunction() && len(args) == 1 {
				replaceWith(e, args[0])
			}
		case "orValue", "or":
			if !call.IsMemberFunction() || len(args) != 1 ||
				!(hasOverload(refMap, e.ID(), "optional_orValue_value") || hasOverload(refMap, e.ID(), "optional_or_optional")) {
				return
			}
			target, def := call.Target(), args[0]
			if call.FunctionName() == "orValue" && isSmallLiteral(def) {
				replaceWith(e, target)
				return
			}
			t := unwrap(typeMap[e.ID()])
			lit := fac.NewLiteral(nextID, types.True)
			typeMap[nextID] = types.BoolType
			nextID++
			e.SetKindCase(fac.NewCall(e.ID(), "_?_:_", lit, target, def))
			refMap[e.ID()] = ast.NewFunctionReference("conditional")
			typeMap[e.ID()] = t
		}
	}))
	pb, err := ast.ToProto(cp)
	if err != nil {
		return nil
	}
	return cel.CheckedExprToAst(pb)
}

// isSmallLiteral: a default that costs nothing to build and is small: a
// scalar literal, or a list or map literal of at most 8 literal entries.
func isSmallLiteral(e ast.Expr) bool {
	switch e.Kind() {
	case ast.LiteralKind:
		if s, ok := e.AsLiteral().(types.String); ok {
			return len(s) <= 64
		}
		return true
	case ast.ListKind:
		elems := e.AsList().Elements()
		if len(elems) > 8 {
			return false
		}
		for _, el := range elems {
			if el.Kind() != ast.LiteralKind {
				return false
			}
		}
		return true
	case ast.MapKind:
		entries := e.AsMap().Entries()
		if len(entries) > 8 {
			return false
		}
		for _, en := range entries {
			me := en.AsMapEntry()
			if me.Key().Kind() != ast.LiteralKind || me.Value().Kind() != ast.LiteralKind {
				return false
			}
		}
		return true
	}
	return false
}

func hasOverload(refMap map[int64]*ast.ReferenceInfo, id int64, overload string) bool {
	r := refMap[id]
	if r == nil {
		return false
	}
	for _, o := range r.OverloadIDs {
		if o == overload {
			return true
		}
	}
	return false
}

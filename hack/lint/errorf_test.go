// Package lint checks conventions of the whole module that go vet does not.
package lint

import (
	"go/ast"
	"go/constant"
	"go/types"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// Every fmt.Errorf that passes an error wraps it with %w, so that callers
// can test for it (errors.Is, errors.As) and a test can tell which failure
// it got (the Brief: "Wrap with %w"). A call whose format has no %w but
// passes an error value — %v, %s of err — fails this test, with its
// position. A message that only quotes an error on purpose formats
// err.Error() instead, a string.
func TestErrorfWrapsErrors(t *testing.T) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo, Dir: "../.."}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		t.Fatal(err)
	}
	errorType := types.Universe.Lookup("error").Type().Underlying().(*types.Interface)
	n := 0
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Fatalf("%s: %v", p.PkgPath, e)
		}
		for _, f := range p.Syntax {
			ast.Inspect(f, func(node ast.Node) bool {
				call, ok := node.(*ast.CallExpr)
				if !ok || !isFmtErrorf(p.TypesInfo, call) || len(call.Args) < 2 {
					return true
				}
				n++
				format := p.TypesInfo.Types[call.Args[0]].Value
				if format == nil || format.Kind() != constant.String || strings.Contains(constant.StringVal(format), "%w") {
					return true
				}
				for _, a := range call.Args[1:] {
					if tv, ok := p.TypesInfo.Types[a]; ok && tv.Type != nil && types.Implements(tv.Type, errorType) {
						t.Errorf("%s: fmt.Errorf passes the error %s without %%w; wrap it (%%w) or format %s.Error()", p.Fset.Position(call.Pos()), types.ExprString(a), types.ExprString(a))
					}
				}
				return true
			})
		}
	}
	if n < 100 {
		t.Fatalf("found only %d fmt.Errorf calls; the check is not looking at the module", n)
	}
}

func isFmtErrorf(info *types.Info, call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	fn, ok := info.Uses[sel.Sel].(*types.Func)
	return ok && fn.Pkg() != nil && fn.Pkg().Path() == "fmt" && fn.Name() == "Errorf"
}

package engine

import (
	"errors"

	"github.com/orkspace/orkestra-cel/katalog"
)

// FailingExpr is what a backend compiles a value to when every evaluation
// of it fails — the original called a function with the wrong number of
// arguments — at a place whose Context.SkipsFailure says a failing value
// is left unwritten. The place drops it at load (the backend warned why).
type FailingExpr struct {
	Src    string
	At     katalog.Pos
	Reason string
}

func (f *FailingExpr) Eval(*Scope) (any, error) { return nil, errors.New(f.Reason) }
func (f *FailingExpr) Source() string           { return f.Src }
func (f *FailingExpr) Pos() katalog.Pos         { return f.At }
func (f *FailingExpr) Engine() string           { return "legacy" }

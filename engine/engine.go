// Package engine is the expression contract shared by the CEL and legacy
// backends, and the compiled plan of a katalog: every template, condition and
// conversion path compiled once at load, evaluated many times.
package engine

import (
	"errors"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/katalog"
)

// ErrAbsent is returned by Expr.Eval when the expression is a plain field
// reference (`${self.spec.x}`, `{{ .spec.x }}`) whose source field is absent:
// the target field is then left unset rather than failing.
var ErrAbsent = errors.New("referenced field is absent")

// Coerce says how a legacy template's rendered string becomes a value.
type Coerce int

const (
	// CoerceTyped: the target has a known type (resource fields, status
	// fields with a schema): parse the string as that type.
	CoerceTyped Coerce = iota
	// CoerceGuess: the target was untyped in the original engine (conversion
	// outputs, custom resources): integer, then float, then bool, then JSON,
	// else string; an empty result becomes null.
	CoerceGuess
	// CoerceString: a status field the schema does not type, without a
	// `type:` — the original wrote the rendered string.
	CoerceString
	// CoerceAuto: a status field with `type: auto` — integer, then float,
	// then bool, else the string ("" stays "").
	CoerceAuto
)

// Context tells a backend where a string value stands.
type Context struct {
	// Entry is the CRD entry name and Field the field path, for diagnostics.
	Entry string
	Field string
	// Pos is the position of the first character of the string's content
	// (after an opening quote), so that Pos.Offset(i) points at byte i.
	Pos katalog.Pos
	// Self is the structural schema of `self` (the CR at its version, or the
	// source version of a conversion path). The CEL backend adds full
	// ObjectMeta, apiVersion and kind.
	Self *structuralschema.Structural
	// SelfVersion names Self's version, for messages.
	SelfVersion string
	// Expected is the type the value must have where it lands; nil means any.
	Expected *structuralschema.Structural
	// Coerce applies to legacy templates.
	Coerce Coerce
	// AllowRandom permits randomHex() and friends (`once: true` secret data).
	AllowRandom bool
	// CostLimit is the static per-expression cost limit (0: backend default).
	CostLimit uint64
	// Vars are the variables a CEL expression may read besides self
	// (`children`; in a forEach declaration `each` or its alias, `index`,
	// `value`), typed by their schemas. The legacy adapter reads the same
	// values under the object's root instead (see Scope).
	Vars []Var
	// Total asks where the value can fail on an object Self's schema
	// accepts (conversion paths must not fail on valid objects); each place
	// is reported with TotalSeverity.
	Total         bool
	TotalSeverity katalog.Severity
	// LabelValue: the value is a label value; with Total, a value the
	// schema allows to be an invalid label value is reported too.
	LabelValue bool
	// SkipsFailure: the place writes nothing when its value fails and the
	// rest goes on (a status field: upstream wrote the others). A value
	// that fails on every evaluation is then a warning, compiled to a
	// *FailingExpr the place drops.
	SkipsFailure bool
}

// Var is a variable an expression may read besides self.
type Var struct {
	Name string
	// Schema types it; nil: any value (dyn).
	Schema *structuralschema.Structural
}

// Scope is the input of one evaluation: the object `self` stands for. A
// backend may memoise its own view of Self in it (the CEL backend converts the
// object to a CEL value once per scope, not once per expression).
type Scope struct {
	Self map[string]any
	// Children are the custom resource's children as the operator last
	// observed them, in the original engine's shape (the legacy `.children`
	// root; build it with ChildrenView): per declared child kind a plural
	// key ("deployments", "services", "customs", …) mapping child name →
	// object, and a singular key ("deployment", "service", "custom", …)
	// holding the first child by name, or a placeholder when there is none.
	// Nil where an evaluation has no children (conversion paths).
	Children map[string]any
	// Vars are the values of Context.Vars (CEL); a legacy template reads a
	// forEach item from Self, which then holds the item's keys too.
	Vars map[string]any
	// Roots are further keys of the legacy templates' root besides
	// .children: the live inputs' upstream views (.cross, .external).
	Roots map[string]any
	memo  map[any]any
}

// NewScope returns a scope over obj.
func NewScope(obj map[string]any) *Scope { return &Scope{Self: obj} }

// Memo returns the value cached under key, computing it with f the first time.
// A scope is used by one goroutine at a time.
func (s *Scope) Memo(key any, f func() any) any {
	if v, ok := s.memo[key]; ok {
		return v
	}
	if s.memo == nil {
		s.memo = make(map[any]any, 2)
	}
	v := f()
	s.memo[key] = v
	return v
}

// Expr is one compiled string value.
type Expr interface {
	// Eval returns a plain Go value ready for JSON (string, int64, float64,
	// bool, nil, map[string]any, []any), ErrAbsent, or an error.
	Eval(s *Scope) (any, error)
	// Source is the string as written in the katalog.
	Source() string
	Pos() katalog.Pos
	// Engine is "cel", "legacy" or "literal".
	Engine() string
}

// FieldRef is implemented by expressions that are a plain reference to a
// field of self. FieldPath is the data path they read (["spec", "image"]), or
// nil when it is not known statically. The conversion executor uses it to
// skip work for fields that provably survive a round trip.
type FieldRef interface {
	FieldPath() []string
}

// InputReader is implemented by expressions that know which fields of self
// they read. The conversion executor records those fields' values beside
// what it stashes, to tell an untouched round trip from an edit.
type InputReader interface {
	// Inputs are the data paths the expression reads (["spec", "image"]);
	// a path stands for everything below it, an empty path for the whole
	// object.
	Inputs() [][]string
}

// Condition is a compiled boolean.
type Condition interface {
	Eval(s *Scope) (bool, error)
	Source() string
	Pos() katalog.Pos
}

// Backend compiles string values and conditions of one expression language.
type Backend interface {
	// CompileValue compiles a string value that the backend recognises (see
	// engine.Classify) at ctx, checking it against ctx.Expected.
	CompileValue(src string, ctx *Context) (Expr, katalog.Diagnostics)
	// CompileCondition compiles a condition that must be a bool.
	CompileCondition(src string, ctx *Context) (Condition, katalog.Diagnostics)
}

// LegacyBackend is the text/template adapter: it also compiles the legacy
// structured conditions (`- field: … / equals: …`). all=true combines them
// with AND (`when:`), all=false with OR (`or:`).
type LegacyBackend interface {
	Backend
	CompileStructured(conds []*katalog.Condition, all bool, ctx *Context) (Condition, katalog.Diagnostics)
}

// Backends are the expression languages a plan compiles with.
type Backends struct {
	CEL    Backend
	Legacy LegacyBackend
}

// Language of a string value.
type Language int

const (
	Literal Language = iota
	CEL
	Legacy
	Mixed // both `${` and `{{`: an error
)

// Classify says which language a string value is written in. A string with
// `${` anywhere (including the escape `$${`) is CEL: the CEL lexer turns
// escapes back into literal text.
func Classify(s string) Language {
	hasCEL := strings.Contains(s, "${")
	hasLegacy := strings.Contains(s, "{{")
	switch {
	case hasCEL && hasLegacy:
		return Mixed
	case hasCEL:
		return CEL
	case hasLegacy:
		return Legacy
	}
	return Literal
}

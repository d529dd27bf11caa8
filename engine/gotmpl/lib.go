package gotmpl

import (
	"fmt"
	"sort"
	"strings"
	"text/template"
	"text/template/parse"

	celengine "github.com/orkspace/orkestra-cel/engine/cel"
)

// The function library of the legacy adapter. A function a template may
// call is one row: its Go implementation with the original engine's
// signature and semantics, what the checker knows of it beyond its arity
// and argument types, its CEL translation or the reason it has none, its
// counterpart in CEL and what that costs, and its line in the README. Rows
// are grouped by family, one file per family named for it (lib_<family>.go),
// as the original's note library groups them (upstream pkg/note/docs). A
// function of the original engine this runtime does not implement is a row
// too, refused with the reason. Anything else is a load error.
//
// Adding a function is one row in its family's file, with a case in
// funcs_test.go (what it renders) and one in translate_test.go (its CEL or
// why not); TestREADMEFunctionTable prints the README table to paste.

// function is one row of the library.
type function struct {
	name string
	// doc is the function's entry in the README's Functions table.
	doc string
	// fn is the implementation; nil for the text/template builtins, whose
	// arity min..max (max < 0: no limit) the checker enforces.
	fn       any
	min, max int
	// refused: the original engine has this function and this runtime does
	// not, for this reason (a load error naming it).
	refused string

	// random functions make a new value on every evaluation.
	random bool
	// pipeFirst functions take the value they work on first: in the pipe
	// form `X | f A` the piped X lands in the last parameter instead, which
	// silently changes the meaning (`.spec.x | contains "prod"` asks whether
	// "prod" contains spec.x). The pipe form is a load error for them, with
	// pipeHint (a format of the name) when the general message does not fit.
	pipeFirst bool
	pipeHint  string
	// clock: the function reads the clock; it returns the timer of a call
	// from its arguments (nil: the value never changes).
	clock func(args []parse.Node) timer
	// mapHint: the function renders a map (cronToMap), so it must be the
	// whole value of a field that can hold one; the hint says what to use
	// for a field that cannot. mapAuto warns where a type: auto status
	// field gets the map.
	mapHint, mapAuto string
	// check adds the load-time warnings where the original engine computed
	// a different value (the arguments as the checker saw them, the piped
	// one last).
	check func(c *checker, id *parse.IdentifierNode, args []argInfo)
	// built is the size of what a call with these literal arguments builds,
	// where it can be large, for the static cost (repeat).
	built func(args []parse.Node) float64

	// truthArgs: its arguments may be an and/or of values of different
	// kinds, of which it reads only the truth; shortCircuit: it stops at
	// the deciding argument (and, or).
	truthArgs, shortCircuit bool
	// translate gives the exact CEL form of a call; noCEL says why there is
	// none (exactly one of them is set).
	translate func(t *translator, x *call) val
	noCEL     string
	// cel names the CEL function the translation calls, where it is not
	// standard CEL; celDecl declares it (in CELLibrary) when this row owns
	// it, else the orkestra CEL library does.
	cel     string
	celDecl []celengine.Overload
}

// family is a group of functions: a README table row.
type family struct {
	// name is the group as the README names it; note follows the functions.
	name, note string
	functions  []*function
}

// families are the library in the README's order.
var families = []*family{
	&conditionalFamily, &stringsFamily, &dataFamily, &mathFamily, &quantityFamily, &typesFamily,
	&collectionsFamily, &domainFamily, &semverFamily, &validationFamily,
	&kubernetesFamily, &replicaFamily, &jobFamily, &podsFamily, &hpaFamily, &serviceFamily,
	&serveFamily, &timeFamily, &durationFamily, &safeAccessFamily, &randomFamily, &cronFamily,
	&builtinFamily, &enrichFamily,
}

// funcs are the functions a template may call, by name; refusedFuncs the
// original's functions this runtime refuses.
var (
	funcs        = map[string]*function{}
	refusedFuncs = map[string]*function{}
	funcMap      = template.FuncMap{}
)

func init() {
	for _, fam := range families {
		for _, f := range fam.functions {
			if _, dup := funcs[f.name]; dup || refusedFuncs[f.name] != nil {
				panic("gotmpl: function " + f.name + " has two rows")
			}
			if f.refused != "" {
				refusedFuncs[f.name] = f
				continue
			}
			if f.cel == "" && len(f.celDecl) > 0 {
				f.cel = f.celDecl[0].Function
			}
			funcs[f.name] = f
			if f.fn != nil {
				funcMap[f.name] = f.fn
			}
		}
	}
}

// FuncNames returns the names of every function a legacy template may call,
// sorted.
func FuncNames() []string {
	names := make([]string, 0, len(funcs))
	for n := range funcs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// celCounterparts are the CEL functions the rows declare, for CELLibrary.
func celCounterparts() celengine.Overloads {
	var out celengine.Overloads
	for _, fam := range families {
		for _, f := range fam.functions {
			out = append(out, f.celDecl...)
		}
	}
	return out
}

// call is a function call being translated: the CEL values of its
// arguments (the piped one last) and the nodes they were written as.
type call struct {
	id    *parse.IdentifierNode
	args  []val
	nodes []parse.Node
}

func (x *call) name() string { return x.id.Ident }

// node is where argument i was written (the call itself when unknown).
func (x *call) node(i int) parse.Node {
	if i < len(x.nodes) && x.nodes[i] != nil {
		return x.nodes[i]
	}
	return x.id
}

// arity fails a call with fewer than lo or more than hi (hi < 0: any)
// arguments.
func (t *translator) arity(x *call, lo, hi int) {
	if len(x.args) < lo || hi >= 0 && len(x.args) > hi {
		t.failf(x.id, "%s called with %d arguments", x.name(), len(x.args))
	}
}

// functionTable is the README's Functions table, from the rows.
func functionTable() string {
	var b strings.Builder
	b.WriteString("| group | functions |\n| --- | --- |\n")
	for _, fam := range families {
		var docs []string
		for _, f := range fam.functions {
			if f.refused == "" {
				docs = append(docs, f.doc)
			}
		}
		if len(docs) == 0 {
			continue
		}
		line := strings.Join(docs, ", ")
		if fam.note != "" {
			line += " " + fam.note
		}
		fmt.Fprintf(&b, "| %s | %s |\n", fam.name, line)
	}
	return b.String()
}

// refusedTable is the README's table of the original's functions this
// runtime refuses, from the rows: the functions sharing a reason on one
// line, in row order.
func refusedTable() string {
	var reasons []string
	names := map[string][]string{}
	for _, fam := range families {
		for _, f := range fam.functions {
			if f.refused == "" {
				continue
			}
			if names[f.refused] == nil {
				reasons = append(reasons, f.refused)
			}
			names[f.refused] = append(names[f.refused], "`"+f.name+"`")
		}
	}
	var b strings.Builder
	b.WriteString("| functions | why, and what to write instead |\n| --- | --- |\n")
	for _, r := range reasons {
		fmt.Fprintf(&b, "| %s | %s |\n", strings.Join(names[r], ", "), r)
	}
	return b.String()
}

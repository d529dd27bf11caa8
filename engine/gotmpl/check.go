package gotmpl

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"text/template/parse"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// checker walks a parsed template at load: every function must exist (and
// random ones be allowed here), be called with the right number and kind of
// arguments, and every field reference must exist in the schema.
type checker struct {
	src     string
	version string
	report  func(off int, msg string)
	warn    func(off int, msg string)
	random  bool // random functions allowed
	root    shape
	scopes  []map[string]shape
	// mapCalls are the calls of functions that render a map (cronToMap),
	// checked for placement by the caller.
	mapCalls []*parse.IdentifierNode
	// plain is the field path of a template that is exactly one field
	// reference ({{ .spec.x }}), else nil.
	plain []string
	// treeRoot is the template being checked.
	treeRoot *parse.ListNode
	// used are the library functions the template calls.
	used map[string]bool
	// noChildren: .children is not available here (conversion paths).
	noChildren bool
	// children: the template reads a root beyond the object (.children,
	// .cross, .external).
	children bool
	// timers of the clock-reading calls.
	timers []timer
	// bounds of the ranges whose iterations are bounded.
	bounds map[*parse.BranchNode]loopBound
	// conversion: the template is in a conversion path; stringTarget: it
	// lands in a string field. floatWarned: the float64 warning was given.
	conversion, stringTarget, floatWarned bool
	// skipsFailure: engine.Context.SkipsFailure; failing says why every
	// evaluation fails, when it does.
	skipsFailure bool
	failing      string

	// Notes: the backend that has them, the place's schema, entry and cost
	// limit to compile them with, the notes being compiled around this
	// template, the notes it calls, and their problems.
	b         *Backend
	self      *structuralschema.Structural
	entry     string
	costLimit uint64
	noteStack []string
	notesUsed map[string]*Template
	extra     katalog.Diagnostics
	// sentinels are the sentinels the template reads by name.
	sentinels map[string]bool
}

// noteSignature is how a note is called: no arguments, a string.
var noteSignature = &function{fn: (func() (string, error))(nil)}

// usedFuncs lists the library functions the template calls, sorted.
func (c *checker) usedFuncs() []string {
	out := make([]string, 0, len(c.used))
	for n := range c.used {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// argInfo is what the checker knows of an argument or a command's result.
type argInfo struct {
	sh        shape
	node      parse.Node
	fieldLike bool // a field, variable or chain: a value of the object
	known     bool // sh describes it
	// intResult: a call to a function that returns an integer.
	intResult bool
}

func (c *checker) pushScope() { c.scopes = append(c.scopes, map[string]shape{}) }
func (c *checker) popScope()  { c.scopes = c.scopes[:len(c.scopes)-1] }

func (c *checker) declare(name string, sh shape) { c.scopes[len(c.scopes)-1][name] = sh }

func (c *checker) assign(name string, sh shape) {
	for i := len(c.scopes) - 1; i >= 0; i-- {
		if _, ok := c.scopes[i][name]; ok {
			c.scopes[i][name] = sh
			return
		}
	}
}

func (c *checker) lookupVar(name string) shape {
	if name == "$" {
		return c.root
	}
	for i := len(c.scopes) - 1; i >= 0; i-- {
		if sh, ok := c.scopes[i][name]; ok {
			return sh
		}
	}
	return shape{}
}

func (c *checker) check(t *parse.Tree) {
	c.treeRoot = t.Root
	c.pushScope()
	c.list(t.Root, c.root)
	c.popScope()
	c.plain = plainRef(t.Root)
}

func (c *checker) list(l *parse.ListNode, dot shape) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		c.node(n, dot)
	}
}

func (c *checker) node(n parse.Node, dot shape) {
	switch x := n.(type) {
	case *parse.ActionNode:
		res := c.pipe(x.Pipe, dot)
		if len(x.Pipe.Decl) == 0 && isIntegerArg(res) && (c.stringTarget || soleAction(c.treeRoot) != x) {
			c.floatWarning(int(x.Pos), res)
		}
		if len(x.Pipe.Decl) == 0 && res.fieldLike && res.known && isComposite(res.sh.s) {
			name := res.sh.path
			if res.sh.root {
				name = "the whole object"
			}
			c.report(int(x.Pos), fmt.Sprintf("%s is %s; printing it gives Go syntax such as map[a:1] or [a b]; render it with toJson (%s) or print one of its fields",
				name, engine.DescribeSchema(res.sh.s), "{{ toJson "+x.Pipe.String()+" }}"))
		}
	case *parse.IfNode:
		c.branch(&x.BranchNode, dot, "if")
	case *parse.WithNode:
		c.branch(&x.BranchNode, dot, "with")
	case *parse.RangeNode:
		c.branch(&x.BranchNode, dot, "range")
	case *parse.TemplateNode:
		c.report(int(x.Pos), "{{ template }} is not supported: a value is a single template")
	}
}

func (c *checker) branch(b *parse.BranchNode, dot shape, kind string) {
	c.pushScope()
	defer c.popScope()
	res := c.pipeNoDecl(b.Pipe, dot)
	if kind == "range" {
		if lb, ok := rangeBound(b.Pipe, res); ok {
			if c.bounds == nil {
				c.bounds = map[*parse.BranchNode]loopBound{}
			}
			c.bounds[b] = lb
		}
	}
	inner := dot
	switch kind {
	case "with":
		inner = res.sh
		if !res.known {
			inner = shape{}
		}
	case "range":
		inner = shape{}
		if res.known && res.sh.s != nil {
			s := res.sh.s
			switch {
			case s.Type == "array" && s.Items != nil:
				inner = shape{s: s.Items, path: res.sh.path + "[*]"}
			case s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil:
				inner = shape{s: s.AdditionalProperties.Structural, path: res.sh.path + "[*]"}
			}
		}
	}
	// Declarations: `with $x := P`, `range $i, $e := P`.
	decl := b.Pipe.Decl
	switch {
	case kind == "range" && len(decl) == 2:
		c.declare(decl[0].Ident[0], shape{})
		c.declare(decl[1].Ident[0], inner)
	case kind == "range" && len(decl) == 1:
		c.declare(decl[0].Ident[0], inner)
	case len(decl) == 1:
		c.declare(decl[0].Ident[0], res.sh)
	}
	c.pushScope()
	c.list(b.List, inner)
	c.popScope()
	c.pushScope()
	c.list(b.ElseList, dot)
	c.popScope()
}

// pipe checks a pipeline and binds its declared variable.
func (c *checker) pipe(p *parse.PipeNode, dot shape) argInfo {
	res := c.pipeNoDecl(p, dot)
	if len(p.Decl) == 1 {
		sh := res.sh
		if !res.known {
			sh = shape{}
		}
		if p.IsAssign {
			c.assign(p.Decl[0].Ident[0], sh)
		} else {
			c.declare(p.Decl[0].Ident[0], sh)
		}
	}
	return res
}

func (c *checker) pipeNoDecl(p *parse.PipeNode, dot shape) argInfo {
	var res argInfo
	for i, cmd := range p.Cmds {
		var piped *argInfo
		if i > 0 {
			prev := res
			piped = &prev
		}
		res = c.command(cmd, dot, piped)
	}
	return res
}

func (c *checker) command(cmd *parse.CommandNode, dot shape, piped *argInfo) argInfo {
	if len(cmd.Args) == 0 {
		return argInfo{}
	}
	first := cmd.Args[0]
	id, isFunc := first.(*parse.IdentifierNode)
	if !isFunc {
		if len(cmd.Args) > 1 || piped != nil {
			c.report(startOf(c.src, first), fmt.Sprintf("%s is not a function; it takes no arguments", first))
		}
		if _, ok := first.(*parse.NilNode); ok {
			c.report(int(first.Position()), "nil is not a value a template can print")
		}
		return c.arg(first, dot)
	}
	info := c.function(id)
	args := cmd.Args[1:]
	c.clock(info, args)
	infos := make([]argInfo, len(args))
	for i, a := range args {
		infos[i] = c.arg(a, dot)
	}
	if info == nil {
		return argInfo{}
	}
	name := id.Ident
	if piped != nil && info.pipeFirst {
		c.report(int(id.Pos), pipeMessage(name, info))
	}
	n := len(args)
	if piped != nil {
		n++
	}
	if lo, hi := arity(info); n < lo || (hi >= 0 && n > hi) {
		msg := fmt.Sprintf("%s takes %s, got %d%s", name, describeArity(lo, hi), n, pipeNote(piped))
		if c.skipsFailure {
			// Upstream's engine failed the call on every evaluation and
			// left the value unwritten: so does this runtime.
			c.failing = msg
			c.warn(int(id.Pos), msg+": the call fails on every evaluation, as it did upstream, which never wrote this value; it is not written here either — call "+name+" with "+describeArity(lo, hi))
			return argInfo{}
		}
		c.report(int(id.Pos), msg)
		return argInfo{}
	}
	if info.fn != nil {
		ft := reflect.TypeOf(info.fn)
		for i, a := range args {
			c.argType(name, paramType(ft, i), a, infos[i])
		}
		if piped != nil {
			c.argType(name, paramType(ft, n-1), piped.node, *piped)
		}
	}
	if info.mapHint != "" {
		c.mapCalls = append(c.mapCalls, id)
	}
	if info.check != nil {
		all := infos
		if piped != nil {
			all = append(append([]argInfo(nil), infos...), *piped)
		}
		info.check(c, id, all)
	}
	return argInfo{node: cmd, intResult: info.fn != nil && isIntKind(reflect.TypeOf(info.fn).Out(0).Kind())}
}

// clock records the timer of a clock-reading call.
func (c *checker) clock(info *function, args []parse.Node) {
	if info == nil || info.clock == nil {
		return
	}
	if t := info.clock(args); t != nil {
		c.timers = append(c.timers, t)
	}
}

// function resolves a function name, reporting unknown and forbidden ones.
func (c *checker) function(id *parse.IdentifierNode) *function {
	name := id.Ident
	if n := c.b.note(name); n != nil {
		if t := c.note(name, n, int(id.Pos)); t != nil {
			if c.notesUsed == nil {
				c.notesUsed = map[string]*Template{}
			}
			c.notesUsed[name] = t
			c.children = c.children || t.children
			c.timers = append(c.timers, t.timers...)
		}
		return noteSignature
	}
	if katalog.IsSentinel(name) {
		return c.sentinel(id)
	}
	info, ok := funcs[name]
	switch {
	case name == "call":
		c.report(int(id.Pos), "call is not supported: templates call only the listed functions")
		return nil
	case refusedFuncs[name] != nil:
		c.report(int(id.Pos), fmt.Sprintf("%s is a function of the original engine that this runtime does not implement: %s", name, refusedFuncs[name].refused))
		return nil
	case !ok:
		msg := fmt.Sprintf("unknown function %q", name)
		known := FuncNames()
		for n := range c.b.notes {
			known = append(known, n)
		}
		if d := katalog.DidYouMean(name, known); d != "" {
			msg += d
		} else {
			msg += ": the legacy adapter knows only the functions listed in its README section; write this value in CEL (${…}) to do more"
		}
		c.report(int(id.Pos), msg)
		return nil
	case info.random && !c.random:
		c.report(int(id.Pos), fmt.Sprintf("%s makes a new value at every evaluation, so the object would change on every reconcile (drift); use it only in the data of a secret with once: true", name))
	}
	if c.used == nil {
		c.used = map[string]bool{}
	}
	c.used[name] = true
	return info
}

// arg checks an argument and says what it is.
func (c *checker) arg(n parse.Node, dot shape) argInfo {
	switch x := n.(type) {
	case *parse.FieldNode:
		return argInfo{sh: c.fields(dot, x.Ident, fieldOffsets(c.src, x), "."+strings.Join(x.Ident, ".")), node: n, fieldLike: true, known: true}
	case *parse.VariableNode:
		base := c.lookupVar(x.Ident[0])
		offs := variableOffsets(c.src, x)
		return argInfo{sh: c.fields(base, x.Ident[1:], offs, x.String()), node: n, fieldLike: true, known: true}
	case *parse.ChainNode:
		base := c.arg(x.Node, dot)
		sh := shape{}
		if base.known && base.fieldLike {
			sh = base.sh
		}
		return argInfo{sh: c.fields(sh, x.Field, chainOffsets(c.src, x), x.String()), node: n, fieldLike: true, known: true}
	case *parse.DotNode:
		return argInfo{sh: dot, node: n, fieldLike: true, known: true}
	case *parse.PipeNode:
		res := c.pipeNoDecl(x, dot)
		res.node = n
		return res
	case *parse.IdentifierNode:
		// A function called without arguments.
		if info := c.function(x); info != nil {
			c.clock(info, nil)
			if lo, hi := arity(info); lo > 0 {
				c.report(int(x.Pos), fmt.Sprintf("%s takes %s, got 0; call it in parentheses with its arguments: (%s …)", x.Ident, describeArity(lo, hi), x.Ident))
			}
		}
		return argInfo{node: n}
	}
	return argInfo{node: n}
}

// fields follows a field chain from base, reporting the first wrong step at
// its offset.
func (c *checker) fields(base shape, segs []string, offs []int, ref string) shape {
	sh := base
	live := -1 // the index of a live input's root (.cross, .external) in segs
	for i, seg := range segs {
		if sh.root && seg == "children" {
			if c.noChildren {
				c.report(offs[i], ".children is not available in a conversion path: a conversion sees only the object being converted")
				return shape{}
			}
			c.children = true
			sh = shape{children: true, path: "children"}
			continue
		}
		if sh.root && liveRoots[seg] {
			c.children = true
			live = i
		}
		next, prob := child(sh, seg, c.version)
		if prob != nil {
			written := ref
			if i < len(segs)-1 {
				written = refPrefix(ref, segs, i)
			}
			switch {
			case prob.kind == unknownField && live >= 0 && i-live <= 2:
				// The shape of a live input is the katalog's own: a
				// read or call it does not declare, or a key its result
				// does not have.
				c.report(offs[i], "unknown field "+written+": "+liveProblem(prob.msg, c.version))
			case prob.kind == unknownField && prob.typo:
				c.report(offs[i], "unknown field "+written+": "+prob.msg)
			case prob.kind == unknownField:
				// The API server prunes fields its schema does not declare,
				// so upstream read such a field as absent; so does this
				// runtime, with a warning. A likely typo stays an error.
				c.warn(offs[i], "unknown field "+written+": "+prob.msg+"; the API server drops fields the CRD does not declare, so it always reads as absent — declare it in the CRD's schema")
			case prob.kind == noFields:
				c.report(offs[i], written+": "+prob.msg)
			case prob.kind == absentKey:
				c.warn(offs[i], prob.msg)
			default:
				c.report(offs[i], prob.msg)
			}
			return shape{}
		}
		sh = next
	}
	return sh
}

// liveProblem words a schema problem below a live input's root: its shape
// is the katalog's (its cross reads and calls), not a CRD version's.
func liveProblem(msg, version string) string {
	msg = strings.Replace(msg, " in version "+version, "", 1)
	switch {
	case strings.HasPrefix(msg, "external has no field"):
		msg += " (a call reads the results of the calls declared before it; everything else, of them all)"
	case strings.HasPrefix(msg, "external.") && strings.Contains(msg, "it has body, called, error, json, status"):
		msg += " (the response body decoded as JSON reads as .json)"
	}
	return msg
}

// refPrefix cuts a reference as written after segment i.
func refPrefix(ref string, segs []string, i int) string {
	tail := ""
	for _, s := range segs[i+1:] {
		tail += "." + s
	}
	return strings.TrimSuffix(ref, tail)
}

// argType checks an argument against the Go parameter type it is passed to.
func (c *checker) argType(fn string, pt reflect.Type, n parse.Node, info argInfo) {
	if pt == nil || n == nil || pt.Kind() == reflect.Interface {
		return
	}
	k := pt.Kind()
	want := goKind(pt)
	switch x := n.(type) {
	case *parse.StringNode:
		if k != reflect.String {
			c.report(int(x.Pos), fmt.Sprintf("%s takes %s here, got the string %s", fn, want, x))
		}
		return
	case *parse.NumberNode:
		switch {
		case isIntKind(k) && x.IsInt, (k == reflect.Float32 || k == reflect.Float64) && x.IsFloat:
		default:
			c.report(int(x.Pos), fmt.Sprintf("%s takes %s here, got the number %s", fn, want, x))
		}
		return
	case *parse.BoolNode:
		if k != reflect.Bool {
			c.report(int(x.Pos), fmt.Sprintf("%s takes %s here, got %s", fn, want, x))
		}
		return
	}
	if !info.fieldLike {
		return
	}
	if isIntKind(k) {
		c.report(startOf(c.src, n), fmt.Sprintf("%s takes a literal number here; %s is a value of the object (int64), which text/template cannot pass to it", fn, n))
		return
	}
	if !info.known || info.sh.s == nil {
		return
	}
	s := info.sh.s
	switch {
	case k == reflect.String && s.Type != "string" && !s.XIntOrString && s.Type != "":
		c.report(startOf(c.src, n), fmt.Sprintf("%s takes a string, but %s is %s; convert it with (toString %s)", fn, info.sh.path, engine.DescribeSchema(s), n))
	case k == reflect.Bool && s.Type != "boolean" && s.Type != "":
		c.report(startOf(c.src, n), fmt.Sprintf("%s takes a boolean, but %s is %s", fn, info.sh.path, engine.DescribeSchema(s)))
	}
}

func isIntKind(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

func goKind(t reflect.Type) string {
	switch k := t.Kind(); {
	case k == reflect.String:
		return "a string"
	case isIntKind(k):
		return "an integer"
	case k == reflect.Float32 || k == reflect.Float64:
		return "a number"
	case k == reflect.Bool:
		return "a boolean"
	case k == reflect.Slice:
		return "a list"
	case k == reflect.Map:
		return "a map"
	}
	return t.String()
}

func paramType(ft reflect.Type, i int) reflect.Type {
	n := ft.NumIn()
	if ft.IsVariadic() && i >= n-1 {
		return ft.In(n - 1).Elem()
	}
	if i < n {
		return ft.In(i)
	}
	return nil
}

func arity(info *function) (lo, hi int) {
	if info.fn == nil {
		return info.min, info.max
	}
	ft := reflect.TypeOf(info.fn)
	n := ft.NumIn()
	if ft.IsVariadic() {
		return n - 1, -1
	}
	return n, n
}

func describeArity(lo, hi int) string {
	plural := func(n int) string {
		if n == 1 {
			return "1 argument"
		}
		return fmt.Sprintf("%d arguments", n)
	}
	switch {
	case hi == lo:
		return plural(lo)
	case hi < 0:
		return "at least " + plural(lo)
	}
	return fmt.Sprintf("%d to %d arguments", lo, hi)
}

func pipeNote(piped *argInfo) string {
	if piped != nil {
		return " (counting the piped value, which is passed last)"
	}
	return ""
}

func pipeMessage(name string, info *function) string {
	if info.pipeHint != "" {
		return fmt.Sprintf(info.pipeHint, name)
	}
	return fmt.Sprintf("%[1]s takes the value it works on first; in the pipe form the piped value is passed last, which changes the meaning; write the call form, e.g. {{ %[1]s .spec.x … }}", name)
}

// ── offsets of field segments ───────────────────────────────────────────────

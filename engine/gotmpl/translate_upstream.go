package gotmpl

import (
	"strings"

	"strconv"
	"text/template/parse"

	"github.com/orkspace/orkestra-cel/engine/notes"
)

// Translations of the original's functions over children, cron strings and
// the clock, and of user-defined notes: each into its counterpart of the
// orkestra CEL library (engine/cel/lib_upstream.go), which runs the same
// code (engine/notes).

// stringFns take one string (a typed parameter: a missing value failed)
// and return a string.
var stringFns = map[string]bool{
	"camelToKebab": true, "cronMinute": true, "cronHour": true, "cronDom": true,
	"cronMonth": true, "cronDow": true, "cronDescribe": true, "cronNormalize": true,
}

// objectFns take any value (a Kubernetes object); the kind of what they
// return.
var objectFns = map[string]vkind{
	"allReplicasReady": vBool, "readyReplicas": vInt, "resourceExists": vBool, "phase": vString,
	"resourceCPU": vString, "resourceMemory": vString, "cronJobLastScheduleTime": vString,
	"cronJobNextScheduleTime": vString, "podCount": vInt, "readyPodCount": vInt, "podNames": vString,
	"podMaxRestarts": vInt, "hasCrashingPod": vBool, "podContainerReasons": vString,
}

// objectZero is what an object function gives for a missing value (nil),
// as a CEL literal, computed with the function itself.
func objectZero(name string) string {
	var v any
	switch name {
	case "allReplicasReady":
		v = notes.AllReplicasReady(nil)
	case "readyReplicas":
		v = notes.ReadyReplicas(nil)
	case "resourceExists":
		v = notes.ResourceExists(nil)
	case "podCount":
		v = notes.PodCount(nil)
	case "readyPodCount":
		v = notes.ReadyPodCount(nil)
	case "podMaxRestarts":
		v = notes.PodMaxRestarts(nil)
	case "hasCrashingPod":
		v = notes.HasCrashingPod(nil)
	default: // the string functions give "" for nil
		v = ""
	}
	switch x := v.(type) {
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return "''"
}

// callUpstream translates the functions of this file; ok is false for
// any other name.
func (t *translator) callUpstream(id *parse.IdentifierNode, args []val, node func(int) parse.Node) (val, bool) {
	name := id.Ident
	arity := func(n int) {
		if len(args) != n {
			t.failf(id, "%s called with %d arguments", name, len(args))
		}
	}
	switch {
	case name == "boolTernary":
		arity(3)
		c := t.want(args[0], vBool, name, node(0))
		for i := 1; i <= 2; i++ {
			if !covered(args[i], args[0]) {
				t.failf(node(i), "this alternative can fail where the condition does not; the legacy engine evaluated both alternatives")
			}
		}
		a, b := t.unify(args[1], args[2], node(1), node(2))
		return t.choose(c.expr, c.prec, a, b), true
	case name == "typeMap":
		// A map is a map when present; anything else never. type() reads
		// the value, so it fails where the legacy read failed.
		arity(1)
		a := args[0]
		switch a.kind {
		case vMap:
			if a.opt != nil {
				return val{kind: vBool, expr: p(*a.opt, precPrimary) + ".hasValue()", prec: precPrimary}, true
			}
			if len(a.fails) == 0 && !a.failsOther {
				return val{kind: vBool, expr: "true", prec: precPrimary, lit: true, nonEmpty: true}, true
			}
			return val{kind: vBool, expr: "type(" + a.expr + ") == map", prec: precRel}, true
		case vString, vInt, vDouble, vBool, vList:
			if a.opt == nil && len(a.fails) == 0 && !a.failsOther {
				return val{kind: vBool, expr: "false", prec: precPrimary, lit: false}, true
			}
			return val{kind: vBool, expr: "type(" + orValue(a, zeroOf(a.kind, node(0), t)) + ") == map", prec: precRel}, true
		}
		if a.dyn && a.plain != nil {
			// whatever the untyped field holds: a map or not (missing: not)
			if a.opt != nil {
				return val{kind: vBool, expr: p(*a.opt, precPrimary) + ".optMap(v, type(v) == map).orValue(false)", prec: precPrimary}, true
			}
			return val{kind: vBool, expr: "type(" + a.expr + ") == map", prec: precRel}, true
		}
		t.failf(node(0), "typeMap of an untyped value depends on the data")
	case name == "cronExpr":
		arity(5)
		var fs []string
		for i := range args {
			fs = append(fs, t.want(args[i], vString, name, node(i)).expr)
		}
		return val{kind: vString, expr: "cronExpr(" + strings.Join(fs, ", ") + ")", prec: precPrimary, nonEmpty: true}, true
	case name == "domainHost":
		arity(1)
		a := args[0]
		if a.kind != vString {
			if len(a.fails) > 0 || a.failsOther {
				t.failf(node(0), "domainHost of %s is always empty, but reading it can fail, as it did in the legacy engine; write \"\" if that is meant", kindName(a))
			}
			return stringLit(""), true
		}
		return val{kind: vString, expr: "domainHost(" + orValue(a, "''") + ")", prec: precPrimary, ascii: a.ascii, noEdgeSpace: a.noSpace, noSpace: a.noSpace}, true
	case stringFns[name]:
		arity(1)
		s := t.want(args[0], vString, name, node(0))
		out := val{kind: vString, expr: name + "(" + s.expr + ")", prec: precPrimary, ascii: s.ascii, noSpace: s.noSpace, noEdgeSpace: s.noSpace, failsOther: name != "camelToKebab" && name != "cronDescribe" && name != "cronNormalize"}
		if name == "cronNormalize" {
			// five fields joined by single spaces: never empty, no white
			// space at the edges; ASCII when the input is
			out.nonEmpty, out.noEdgeSpace, out.noSpace = true, true, false
		}
		if name == "cronDescribe" {
			out.nonEmpty, out.noEdgeSpace, out.ascii = true, s.noEdgeSpace && s.ascii, s.ascii
		}
		return out, true
	case name == "cronValid":
		arity(1)
		s := t.want(args[0], vString, name, node(0))
		return val{kind: vBool, expr: "cronValid(" + s.expr + ")", prec: precPrimary}, true
	case objectFns[name] != vOther:
		arity(1)
		a := args[0]
		if a.kind != vMap {
			t.failf(node(0), "%s takes a Kubernetes object, %s", name, kindName(a))
		}
		k := objectFns[name]
		out := val{kind: k, prec: precPrimary, ascii: false}
		if a.opt == nil {
			out.expr = name + "(" + a.expr + ")"
			return out, true
		}
		out.expr = p(*a.opt, precPrimary) + ".hasValue() ? " + name + "(" + p(*a.opt, precPrimary) + ".value()) : " + objectZero(name)
		out.prec = precTernary
		return out, true
	case name == "weekday":
		arity(0)
		return val{kind: vBool, expr: "weekday()", prec: precPrimary}, true
	case name == "timeInWindow":
		arity(2)
		a, b := t.want(args[0], vString, name, node(0)), t.want(args[1], vString, name, node(1))
		return val{kind: vBool, expr: "timeInWindow(" + a.expr + ", " + b.expr + ")", prec: precPrimary}, true
	case name == "nextCron":
		arity(1)
		s := t.want(args[0], vString, name, node(0))
		return val{kind: vString, expr: "nextCron(" + s.expr + ")", prec: precPrimary, ascii: true, noSpace: true, noEdgeSpace: true}, true
	}
	if src, ok := t.opts.Notes[name]; ok {
		arity(0)
		return t.note(id, name, src), true
	}
	return val{}, false
}

// note inlines a user-defined note: its template's rendering (trimmed,
// `<no value>` removed) as a string.
func (t *translator) note(id *parse.IdentifierNode, name, src string) val {
	for _, active := range t.noteStack {
		if active == name {
			t.failf(id, "the note %s calls itself", name)
		}
	}
	tree, err := Parse(src)
	if err != nil {
		t.failf(id, "the note %s does not parse", name)
	}
	outer := t.src
	t.src, t.noteStack = src, append(t.noteStack, name)
	defer func() {
		t.src, t.noteStack = outer, t.noteStack[:len(t.noteStack)-1]
		if r := recover(); r != nil {
			u, ok := r.(*Untranslatable)
			if !ok {
				panic(r)
			}
			// a problem inside the note is reported at the call
			t.failf(id, "in the note %s: %s", name, u.Reason)
		}
	}()
	ps := trimStaticEdges(t.pieces(tree.Root))
	v := t.concat(ps)
	if t.edgeClean(ps, false) && t.edgeClean(ps, true) {
		v.nilInside, v.noEdgeSpace = false, true
		return v
	}
	if v.nilInside {
		t.failf(id, "the note %s's leading or trailing white space depends on missing fields", name)
	}
	return val{kind: vString, expr: p(v, precPrimary) + ".trim()", prec: precPrimary, fails: v.fails, failsOther: v.failsOther, ascii: v.ascii, noSpace: v.noSpace, noEdgeSpace: true}
}

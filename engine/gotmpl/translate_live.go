package gotmpl

import (
	"strings"
	"text/template/parse"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// Live inputs in migrate: the legacy roots .cross and .external hold the
// same values as the CEL variables cross and external, in upstream's shape
// (engine.Live). A read translates to the variable, rewritten where the two
// shapes differ:
//
//	.cross.X.found                   (has(cross.X) ? 'true' : 'false')
//	.cross.X.name, .namespace,       cross.X.metadata.name, …
//	  .labels, .annotations
//	.cross.X.status.phase            cross.X.status.phase (absent when X
//	                                 found nothing, as the legacy read)
//	.external.X.status               (external.X.status == 0 ? '' : string(external.X.status))
//	.external.X.called               string(external.X.called)
//	.external.X.body, .error, .json  external.X.body, …
//	.external.X.K (a JSON body key)  stays legacy in templates; in
//	                                 conditions legacy.str(external, 'X.json.K')

// liveVars are the live inputs' CEL variables an expression may read, by
// name.
func liveVars(ctx *engine.Context) map[string]*structuralschema.Structural {
	out := map[string]*structuralschema.Structural{}
	for _, v := range ctx.Vars {
		if liveRoots[v.Name] {
			out[v.Name] = v.Schema
		}
	}
	return out
}

// liveRead is how a read below a live root translates: the whole of it
// where the shapes differ (special), else the path to walk from start
// (segment from on). found, when set, is the cross read the value depends
// on: upstream's shape holds a placeholder (found "false", spec and status
// empty) where the CEL variable holds nothing, so a read that the
// placeholder gives as missing is none when nothing was found (foundOnly).
type liveRead struct {
	special *val
	path    []string
	start   step
	from    int
	found   string
}

func (t *translator) liveRead(segs []string, n parse.Node) liveRead {
	root := segs[0]
	s := t.live[root]
	if s == nil {
		t.failf(n, "the template reads .%s, which migrate does not translate to CEL here", root)
	}
	whole := liveRead{path: segs, start: step{s: s, expr: root, path: []string{root}}, from: 1}
	if len(segs) < 2 {
		return whole
	}
	x := segs[1]
	if !isCELIdent(x) {
		t.failf(n, "%s.%s has no CEL selector (write the name with letters, digits and _ to migrate it)", root, x)
	}
	ref := root + "." + x
	if root == engine.ExternalVar {
		switch {
		case len(segs) == 3 && segs[2] == "status":
			return liveRead{special: &val{kind: vString, expr: "(" + ref + ".status == 0 ? '' : string(" + ref + ".status))", prec: precPrimary, noEdgeSpace: true, noSpace: true, ascii: true}}
		case len(segs) == 3 && segs[2] == "called":
			return liveRead{special: &val{kind: vString, expr: "string(" + ref + ".called)", prec: precPrimary, nonEmpty: true, noEdgeSpace: true, noSpace: true, ascii: true}}
		case len(segs) >= 3 && !externalOwnKeys[segs[2]]:
			t.failf(n, ".%s is a key of the call's JSON response, which upstream merged into its result; its CEL form external.%s.json.%s fails where the legacy read is missing (no JSON body, or no such key), so it stays legacy", strings.Join(segs, "."), x, strings.Join(segs[2:], "."))
		}
		return whole
	}
	remote := isRemote(s, x)
	if remote && len(segs) >= 3 && segs[2] == "found" {
		t.failf(n, ".cross.%s is read through source:, where upstream derives found from the answer, which has no CEL counterpart; test has(cross.%s) instead", x, x)
	}
	if isList(s, x) {
		return whole
	}
	if len(segs) == 2 {
		t.failf(n, ".cross.%s is the whole object read (upstream's placeholder when nothing was found), which has no CEL counterpart; read one of its fields", x)
	}
	if segs[2] == "found" && len(segs) == 3 {
		return liveRead{special: &val{kind: vString, expr: "(has(" + ref + ") ? 'true' : 'false')", prec: precPrimary, nonEmpty: true, noEdgeSpace: true, noSpace: true, ascii: true}}
	}
	rest := segs[2:]
	if crossMeta[rest[0]] && !remote {
		rest = append([]string{"metadata"}, rest...)
	}
	// What the placeholder gives for the read: missing at the first or
	// second step (a field of spec or status, a metadata shortcut), a
	// failure further down, an empty map for spec or status themselves.
	placeholderMissing := len(rest) == 1 && rest[0] != "spec" && rest[0] != "status" ||
		len(rest) == 2 && (rest[0] == "spec" || rest[0] == "status" || rest[0] == "metadata" && !remote)
	if len(rest) == 1 && (rest[0] == "spec" || rest[0] == "status") {
		t.failf(n, ".cross.%s.%s is an empty map when nothing was found, which has no CEL counterpart; read one of its fields", x, rest[0])
	}
	obj := s.Properties[x]
	start := foundObject(&obj)
	if remote {
		// An answer is read as it came: nothing is added to it.
		start = &obj
	}
	read := liveRead{path: append([]string{root, x}, rest...), start: step{s: start, expr: ref, path: []string{root, x}}, from: 2}
	if placeholderMissing {
		read.found = ref
	}
	return read
}

// foundObject is the schema of a cross read's object as the walk reads it
// when it was found: apiVersion, kind, metadata, spec and status always
// there (engine.Live gives every object spec and status).
func foundObject(s *structuralschema.Structural) *structuralschema.Structural {
	out := *s
	vv := structuralschema.ValueValidation{}
	if s.ValueValidation != nil {
		vv = *s.ValueValidation
	}
	vv.Required = append(append([]string(nil), vv.Required...), "apiVersion", "kind", "metadata", "spec", "status")
	out.ValueValidation = &vv
	props := make(map[string]structuralschema.Structural, len(s.Properties)+2)
	for k, p := range s.Properties {
		props[k] = p
	}
	for _, k := range []string{"spec", "status"} {
		if _, ok := props[k]; !ok {
			props[k] = structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Extensions: structuralschema.Extensions{XPreserveUnknownFields: true}}
		}
	}
	out.Properties = props
	return &out
}

// foundOnly makes v, read from a cross read's object (ref), none where the
// read found nothing — what upstream's placeholder gives as missing: its
// optional form selects optionally from the cross read on (cross.?peer.?spec.?image).
func (t *translator) foundOnly(v val, ref string, n parse.Node) val {
	e := v.expr
	if v.opt != nil {
		e = v.opt.expr
	}
	chain, ok := optionalChain(e, ref)
	if !ok {
		t.failf(n, "the read of %s has no optional CEL form here", ref)
	}
	v.absent = chain
	v.opt = &val{kind: v.kind, elem: v.elem, prec: precPrimary, expr: chain}
	v.fails, v.at, v.parent, v.lastSel = nil, nil, "", ""
	return v
}

// optionalChain turns a field chain starting at ref (cross.peer.spec.?x)
// into one whose every step is optional (cross.?peer.?spec.?x); ok is false
// when e is not such a chain.
func optionalChain(e, ref string) (string, bool) {
	root, x, _ := strings.Cut(ref, ".")
	rest, ok := strings.CutPrefix(e, ref)
	if !ok {
		return "", false
	}
	var b strings.Builder
	b.WriteString(root + ".?" + x)
	for rest != "" {
		switch {
		case strings.HasPrefix(rest, ".?"), strings.HasPrefix(rest, "."):
			rest = strings.TrimPrefix(strings.TrimPrefix(rest, "."), "?")
			i := 0
			for i < len(rest) && (rest[i] == '_' || rest[i] >= 'a' && rest[i] <= 'z' || rest[i] >= 'A' && rest[i] <= 'Z' || rest[i] >= '0' && rest[i] <= '9') {
				i++
			}
			if i == 0 {
				return "", false
			}
			b.WriteString(".?" + rest[:i])
			rest = rest[i:]
		case strings.HasPrefix(rest, "[?'"), strings.HasPrefix(rest, "['"):
			rest = strings.TrimPrefix(strings.TrimPrefix(rest, "["), "?")
			end := strings.Index(rest, "']")
			if end < 0 || strings.Contains(rest[:end+1], "\\") {
				return "", false
			}
			b.WriteString("[?" + rest[:end+2])
			rest = rest[end+2:]
		default:
			return "", false
		}
	}
	return b.String(), true
}

// externalOwnKeys are the keys of a call's result in upstream's shape; any
// other is a key of its JSON object body (engine.Live.SetExternal).
var externalOwnKeys = map[string]bool{"called": true, "status": true, "body": true, "error": true, "json": true}

// crossMeta are upstream's shortcuts to a cross read's metadata.
var crossMeta = map[string]bool{"name": true, "namespace": true, "labels": true, "annotations": true}

// isRemote reports a cross read through source: (engine.RemoteTitle).
func isRemote(s *structuralschema.Structural, prop string) bool {
	p, ok := s.Properties[prop]
	return ok && p.Title == engine.RemoteTitle
}

func isList(s *structuralschema.Structural, prop string) bool {
	p, ok := s.Properties[prop]
	return ok && p.Type == "array"
}

// liveCondition translates a structured condition on a live input
// (cross.queue.status.depth, external.health.status) to the legacy.* helper
// form over the CEL variables, rewritten as liveRead rewrites templates
// (legacy.str of a missing step is "", as upstream's placeholder gives).
func liveCondition(c *katalog.Condition, ctx *engine.Context) (string, bool, error) {
	segs := strings.Split(c.Field, ".")
	s := liveVars(ctx)[segs[0]]
	if s == nil || len(segs) < 3 || !isCELIdent(segs[1]) {
		return "", false, &Untranslatable{Reason: "the condition reads ." + segs[0] + " in a form with no CEL translation here"}
	}
	src, err := ConditionCEL(c)
	if err != nil {
		return "", false, &Untranslatable{Reason: err.Error()}
	}
	root, x := segs[0], segs[1]
	ref := root + "." + x
	rest := segs[1:]
	read := ""
	switch {
	case root == engine.ExternalVar && len(segs) == 3 && segs[2] == "status":
		read = "(" + ref + ".status == 0 ? '' : string(" + ref + ".status))"
	case root == engine.ExternalVar && !externalOwnKeys[segs[2]]:
		// A key of a JSON object body, merged into the result upstream.
		rest = append([]string{x, "json"}, segs[2:]...)
	case root == engine.CrossVar && isRemote(s, x) && segs[2] == "found":
		return "", false, &Untranslatable{Reason: ".cross." + x + ".found of a read through source: is derived from the answer upstream; test has(cross." + x + ") instead"}
	case root == engine.CrossVar && isRemote(s, x):
	case root == engine.CrossVar && !isList(s, x) && len(segs) == 3 && segs[2] == "found":
		read = "(has(" + ref + ") ? 'true' : 'false')"
	case root == engine.CrossVar && !isList(s, x) && crossMeta[segs[2]]:
		rest = append([]string{x, "metadata"}, segs[2:]...)
	}
	if strings.Contains(src, "legacy.typeOf(self, ") && (read != "" || root == engine.ExternalVar) {
		return "", false, &Untranslatable{Reason: "a type test of ." + c.Field + " depends on how upstream typed it (a string), which its CEL counterpart is not"}
	}
	if read == "" {
		read = "legacy.str(" + root + ", " + celString(strings.Join(rest, ".")) + ")"
	}
	src = strings.ReplaceAll(src, "legacy.str(self, "+celString(c.Field)+")", read)
	src = strings.ReplaceAll(src, "legacy.typeOf(self, "+celString(c.Field)+")", "legacy.typeOf("+root+", "+celString(strings.Join(rest, "."))+")")
	if strings.Contains(src, "(self, ") {
		return "", false, &Untranslatable{Reason: "the condition reads ." + root + " in a form with no CEL translation here"}
	}
	return src, false, nil
}

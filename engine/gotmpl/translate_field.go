package gotmpl

import (
	"math"
	"regexp"
	"regexp/syntax"
	"strings"
	"text/template/parse"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// Field reads and what the schema says about the values they yield.

// step is where a field read stands: its CEL forms and schema.
type step struct {
	s *structuralschema.Structural
	// expr reads strictly: it fails when a step is missing, as the legacy
	// engine failed on a field of a missing value.
	expr string
	// absent is an optional chain that is none when any step so far is
	// missing; "" while every step is always present.
	absent string
	path   []string
	// dyn: the read went into an untyped value (no schema below).
	dyn bool
}

// field translates a field chain from the object root (.spec.x, $.spec.x).
func (t *translator) field(segs []string, n parse.Node) val {
	if len(segs) == 0 {
		return val{kind: vMap, expr: "self", prec: precPrimary, nonEmpty: true, at: &step{s: t.root, expr: "self"}}
	}
	st := step{s: t.root, expr: "self"}
	from := 0
	if v, ok := t.itemRoots[segs[0]]; ok {
		// .item (or its alias), .index, .value: the CEL variables each
		// (or the alias), index and value, typed by the forEach field.
		st, from = step{s: v.Schema, expr: v.Name, path: []string{segs[0]}, dyn: v.Schema == nil}, 1
	}
	if segs[0] == "children" {
		// .children is the CEL variable children: the same view of the
		// observed children, typed by each child kind's schema.
		if t.children == nil {
			t.failf(n, "the template reads the custom resource's children (.children), which migrate does not translate to CEL here")
		}
		st, from = step{s: t.children, expr: "children", path: []string{"children"}}, 1
	}
	var found string // a read of a cross read's object: it may have found nothing
	if liveRoots[segs[0]] {
		// .cross and .external are the CEL variables cross and external
		// (translate_live.go).
		lr := t.liveRead(segs, n)
		if lr.special != nil {
			return *lr.special
		}
		segs, st, from, found = lr.path, lr.start, lr.from, lr.found
	}
	var last step
	// a variable read without fields is always there
	always, nullable := true, false
	var fails []string
	for i := from; i < len(segs); i++ {
		seg := segs[i]
		last = st
		st, always, nullable = t.next(st, seg, n)
		if i < len(segs)-1 && (!always || nullable) {
			// a field of a missing value fails
			fails = append(fails, pathKey(segs[:i+1]))
		}
	}
	v := t.valueAt(st, n)
	v.dyn = st.dyn || st.s != nil && (st.s.XIntOrString || st.s.Type == "" && st.s.XPreserveUnknownFields)
	v.plain = segs
	v.at = &st
	v.path = pathKey(segs)
	v.fails = fails
	switch {
	case last.dyn:
		v.opt = &val{kind: v.kind, prec: precPrimary, expr: "legacy.field(" + last.expr + ", " + celString(seg(segs)) + ")"}
	case !always || nullable:
		sel := optSelect(st.s, seg(segs), last.s)
		v.opt = &val{kind: v.kind, elem: v.elem, prec: precPrimary, expr: last.expr + sel}
		v.parent, v.lastSel = last.expr, sel
	}
	v.absent = st.absent
	if found != "" {
		v = t.foundOnly(v, found, n)
	}
	return v
}

func seg(segs []string) string { return segs[len(segs)-1] }

// pathKey joins a field path with a separator no key holds.
func pathKey(segs []string) string { return strings.Join(segs, "\x00") }

// next steps from st into seg. always: the field is present in every
// object the schema admits; nullable: it may be null (which the legacy
// engine read as missing).
func (t *translator) next(st step, seg string, n parse.Node) (out step, always, nullable bool) {
	s := st.s
	path := append(append([]string(nil), st.path...), seg)
	out.path = path
	var sel string
	switch {
	case s == nil && !st.dyn:
		t.failf(n, "%s is untyped, so nothing is known about its fields", dotted(st.path))
	case s == nil:
		// A field of an untyped value: legacy.field fails, as the legacy
		// read did, unless the value is a map.
		out.dyn = true
		out.expr = "legacy.field(" + st.expr + ", " + celString(seg) + ").value()"
		if st.absent != "" {
			out.absent = st.absent + ".optFlatMap(v, legacy.field(v, " + celString(seg) + "))"
		} else {
			out.absent = "legacy.field(" + st.expr + ", " + celString(seg) + ")"
		}
		return out, false, true
	case s.XPreserveUnknownFields && !hasProp(s, seg) && s.AdditionalProperties == nil:
		// An untyped value (dyn) in an object the schema types: read with
		// an index, printed and coerced by the legacy engine's own code
		// (legacy.print, legacy.value).
		out.dyn = true
		sel = "[" + celString(seg) + "]"
		if isCELIdent(seg) {
			// the root object type accepts selection only
			sel = "." + seg
		}
	case s.Properties != nil && hasProp(s, seg):
		p := s.Properties[seg]
		out.s = &p
		if !isCELIdent(seg) {
			t.failf(n, "field %q has no CEL selector here", seg)
		}
		sel = "." + seg
		always = isRequired(s, seg) || t.alwaysMeta(path) || t.opts.Defaulted && p.Default.Object != nil
		nullable = p.Nullable
	case s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil:
		out.s = s.AdditionalProperties.Structural
		sel = "[" + celString(seg) + "]"
	default:
		t.failf(n, "%s is untyped (x-kubernetes-preserve-unknown-fields), so what it holds depends on the data", dotted(path))
	}
	out.expr = st.expr + sel
	switch {
	case st.absent != "":
		out.absent = st.absent + optSelect(out.s, seg, s)
	case !always || nullable:
		out.absent = st.expr + optSelect(out.s, seg, s)
	}
	return out, always, nullable
}

// optSelect is the optional selection of seg in an object (.?x) or a map
// ([?'x']) with schema parent.
func optSelect(_ *structuralschema.Structural, seg string, parent *structuralschema.Structural) string {
	if parent != nil && (hasProp(parent, seg) || parent.XPreserveUnknownFields && parent.AdditionalProperties == nil && isCELIdent(seg)) {
		return ".?" + seg
	}
	return "[?" + celString(seg) + "]"
}

func hasProp(s *structuralschema.Structural, name string) bool {
	_, ok := s.Properties[name]
	return ok
}

func isRequired(s *structuralschema.Structural, name string) bool {
	if s.ValueValidation == nil {
		return false
	}
	for _, r := range s.ValueValidation.Required {
		if r == name {
			return true
		}
	}
	return false
}

func dotted(path []string) string {
	if len(path) == 0 {
		return "the object"
	}
	return "." + strings.Join(path, ".")
}

// alwaysMeta: fields every object has, whatever the CRD schema says.
func (t *translator) alwaysMeta(path []string) bool {
	switch strings.Join(path, ".") {
	case "metadata", "apiVersion", "kind", "metadata.name":
		return true
	case "metadata.namespace":
		return t.opts.Namespaced
	}
	return false
}

var celReserved = map[string]bool{
	"in": true, "true": true, "false": true, "null": true, "as": true, "break": true, "const": true,
	"continue": true, "else": true, "for": true, "function": true, "if": true, "import": true,
	"let": true, "loop": true, "package": true, "return": true, "var": true, "void": true, "while": true,
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func isCELIdent(s string) bool { return identRE.MatchString(s) && !celReserved[s] }

// valueAt is the value of a field read at st (present).
func (t *translator) valueAt(st step, n parse.Node) val {
	s := st.s
	k, elem := kindOf(s)
	v := val{kind: k, elem: elem, expr: st.expr, prec: precPrimary}
	if s == nil {
		return v
	}
	switch k {
	case vString:
		f := t.stringFacts(s, st.path)
		v.nonEmpty, v.noEdgeSpace, v.noSpace, v.ascii = f.nonEmpty, f.noEdge || f.noSpace, f.noSpace, f.ascii
	case vInt, vDouble:
		v.nonEmpty = nonZero(s)
	case vBool:
		v.nonEmpty = s.ValueValidation != nil && len(s.ValueValidation.Enum) == 1 && s.ValueValidation.Enum[0].Object == true
	case vList:
		v.nonEmpty = s.ValueValidation != nil && s.ValueValidation.MinItems != nil && *s.ValueValidation.MinItems > 0
		if elem == vString && s.Items != nil {
			v.elemFacts = t.stringFacts(s.Items, append(append([]string(nil), st.path...), "*"))
		}
	case vMap:
		v.nonEmpty = s.ValueValidation != nil && s.ValueValidation.MinProperties != nil && *s.ValueValidation.MinProperties > 0
	}
	return v
}

func kindOf(s *structuralschema.Structural) (vkind, vkind) {
	switch {
	case s == nil, s.XIntOrString:
		return vOther, vOther
	case s.Type == "string":
		return vString, vOther
	case s.Type == "integer":
		return vInt, vOther
	case s.Type == "number":
		return vDouble, vOther
	case s.Type == "boolean":
		return vBool, vOther
	case s.Type == "array":
		e, _ := kindOf(s.Items)
		return vList, e
	case s.Type == "object":
		e := vOther
		if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
			e, _ = kindOf(s.AdditionalProperties.Structural)
		}
		return vMap, e
	}
	return vOther, vOther
}

// strFacts are what is known of a string: never empty, never white space
// at its edges, no white space at all, ASCII only.
type strFacts struct{ nonEmpty, noEdge, noSpace, ascii bool }

// stringFacts: what the schema (or, for metadata, the API server's
// validation) guarantees about the string at path.
func (t *translator) stringFacts(s *structuralschema.Structural, path []string) strFacts {
	if len(path) >= 2 && path[0] == "metadata" {
		switch {
		case len(path) == 2 && (path[1] == "name" || path[1] == "namespace"):
			// DNS subdomain / label names
			return strFacts{true, true, true, true}
		case len(path) == 2 && (path[1] == "generateName" || path[1] == "uid" || path[1] == "resourceVersion" || path[1] == "creationTimestamp" || path[1] == "deletionTimestamp" || path[1] == "selfLink"):
			return strFacts{false, true, true, true}
		case len(path) == 3 && path[1] == "labels":
			// label values: (([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?
			return strFacts{false, true, true, true}
		case len(path) == 3 && path[1] == "finalizers":
			return strFacts{true, true, true, true}
		}
		return strFacts{}
	}
	vv := s.ValueValidation
	if vv == nil {
		return strFacts{}
	}
	if len(vv.Enum) > 0 {
		f := strFacts{true, true, true, true}
		for _, e := range vv.Enum {
			str, ok := e.Object.(string)
			if !ok {
				return strFacts{}
			}
			f.nonEmpty = f.nonEmpty && str != ""
			f.noEdge = f.noEdge && strings.TrimSpace(str) == str
			f.noSpace = f.noSpace && !strings.ContainsFunc(str, isSpace)
			f.ascii = f.ascii && isASCII(str)
		}
		return f
	}
	var f strFacts
	if vv.MinLength != nil && *vv.MinLength > 0 {
		f.nonEmpty = true
	}
	if vv.Pattern != "" {
		if re, err := regexp.Compile(vv.Pattern); err == nil && !re.MatchString("") {
			f.nonEmpty = true
		}
		if ns, a := patternFacts(vv.Pattern); ns {
			f.noEdge, f.noSpace, f.ascii = true, true, a
		}
	}
	return f
}

// patternFacts analyses an anchored pattern (^…$): noSpace when no string
// it matches holds white space, ascii when none holds a non-ASCII
// character.
func patternFacts(pattern string) (noSpace, ascii bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return false, false
	}
	re = re.Simplify()
	for re.Op == syntax.OpCapture && len(re.Sub) == 1 {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 || re.Sub[0].Op != syntax.OpBeginText || re.Sub[len(re.Sub)-1].Op != syntax.OpEndText {
		return false, false
	}
	noSpace, ascii = true, true
	var walk func(r *syntax.Regexp)
	walk = func(r *syntax.Regexp) {
		switch r.Op {
		case syntax.OpLiteral:
			for _, c := range r.Rune {
				if isSpace(c) {
					noSpace = false
				}
				if c > '~' {
					ascii = false
				}
			}
			if r.Flags&syntax.FoldCase != 0 {
				ascii = false // (?i)k matches the Kelvin sign
			}
		case syntax.OpCharClass:
			for i := 0; i+1 < len(r.Rune); i += 2 {
				lo, hi := r.Rune[i], r.Rune[i+1]
				if hi > '~' {
					ascii = false
					noSpace = false
				}
				if lo <= ' ' {
					noSpace = false
				}
			}
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			noSpace, ascii = false, false
		case syntax.OpBeginLine, syntax.OpEndLine:
			// (?m): the pattern is anchored per line only
			noSpace, ascii = false, false
		}
		for _, sub := range r.Sub {
			walk(sub)
		}
	}
	for _, sub := range re.Sub[1 : len(re.Sub)-1] {
		walk(sub)
	}
	return noSpace, ascii
}

// nonZero: the schema excludes 0.
func nonZero(s *structuralschema.Structural) bool {
	vv := s.ValueValidation
	if vv == nil {
		return false
	}
	if len(vv.Enum) > 0 {
		for _, e := range vv.Enum {
			switch x := e.Object.(type) {
			case int64:
				if x == 0 {
					return false
				}
			case float64:
				if x == 0 {
					return false
				}
			default:
				return false
			}
		}
		return true
	}
	if vv.Minimum != nil && (*vv.Minimum > 0 || *vv.Minimum == 0 && vv.ExclusiveMinimum) {
		return true
	}
	if vv.Maximum != nil && (*vv.Maximum < 0 || *vv.Maximum == 0 && vv.ExclusiveMaximum) {
		return true
	}
	return false
}

// whole reports a float that is an integer CEL can write exactly.
func whole(f float64) bool {
	return f == math.Trunc(f) && math.Abs(f) < 1<<53
}

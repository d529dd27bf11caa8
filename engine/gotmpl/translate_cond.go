package gotmpl

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// TranslateStructured translates one structured condition (`- field:
// spec.tier` / `equals: gold`) into a CEL boolean. Where the field's schema
// type makes an idiomatic form exactly equivalent to the original string
// comparison (%v of the value, "" when missing), it writes that:
//
//	self.?spec.?tier.orValue('') == 'gold'
//	self.?spec.?enabled.orValue(false) == true
//	self.?spec.?replicas.orValue(0) > 3
//
// otherwise the legacy.* helper form of ConditionCEL, which keeps the
// original meaning for any data. idiomatic says which. A condition whose
// field or value is a template has no CEL form (an *Untranslatable).
func TranslateStructured(c *katalog.Condition, ctx *engine.Context, opts TranslateOptions) (src string, idiomatic bool, err error) {
	if c.Field == "children" || strings.HasPrefix(c.Field, "children.") {
		return childrenCondition(c, ctx)
	}
	if root, _, _ := strings.Cut(c.Field, "."); liveRoots[root] && !isTemplate(c.Field) {
		return liveCondition(c, ctx)
	}
	legacySrc, err := ConditionCEL(c)
	if err != nil {
		return "", false, &Untranslatable{Reason: err.Error()}
	}
	if ctx.Self == nil {
		return legacySrc, false, nil
	}
	ref, s, ok := conditionField(rootSchema(ctx.Self), c.Field, opts)
	if !ok {
		return legacySrc, false, nil
	}
	var e string
	switch k, _ := kindOf(s); k {
	case vString:
		e = stringCondition(c, ref, noMarker(s, strings.Split(c.Field, "."), opts))
	case vBool:
		e = boolCondition(c, ref)
	case vInt:
		e = intCondition(c, ref)
	case vDouble:
		e = numberCondition(c, ref)
	}
	if e == "" {
		return legacySrc, false, nil
	}
	if c.Negate {
		e = "!(" + e + ")"
	}
	return e, true, nil
}

// childrenCondition translates a condition on the children
// (children.deployment.status.readyReplicas) to the legacy.* helper form
// over the CEL variable children: the same view, read by the same lookup.
func childrenCondition(c *katalog.Condition, ctx *engine.Context) (string, bool, error) {
	rest, ok := strings.CutPrefix(c.Field, "children.")
	readsChildren := false
	for _, v := range ctx.Vars {
		readsChildren = readsChildren || v.Name == engine.ChildrenVar
	}
	if !ok || rest == "" || !readsChildren {
		return "", false, &Untranslatable{Reason: "the condition reads the custom resource's children as a whole, which has no CEL form here"}
	}
	src, err := ConditionCEL(c)
	if err != nil {
		return "", false, &Untranslatable{Reason: err.Error()}
	}
	for _, fn := range []string{"legacy.str", "legacy.typeOf"} {
		src = strings.ReplaceAll(src, fn+"(self, "+celString(c.Field)+")", fn+"(children, "+celString(rest)+")")
	}
	if strings.Contains(src, "(self, ") {
		return "", false, &Untranslatable{Reason: "the condition reads the custom resource's children in a form with no CEL translation here"}
	}
	return src, false, nil
}

// conditionField is the optional chain reading a condition's dot path: none
// when any step is missing (the original read "" then), and the schema at
// its end.
func conditionField(root *structuralschema.Structural, path string, opts TranslateOptions) (string, *structuralschema.Structural, bool) {
	if path == "" || strings.HasPrefix(path, ".") {
		return "", nil, false
	}
	t := &translator{opts: opts}
	segs := strings.Split(path, ".")
	ref := "self"
	s := root
	optional := false
	for i, seg := range segs {
		if s == nil || seg == "" {
			return "", nil, false
		}
		switch {
		case hasProp(s, seg):
			if !isCELIdent(seg) {
				return "", nil, false
			}
			p := s.Properties[seg]
			always := (isRequired(s, seg) || t.alwaysMeta(segs[:i+1]) || opts.Defaulted && p.Default.Object != nil) && !p.Nullable
			if optional || !always {
				ref += ".?" + seg
				optional = true
			} else {
				ref += "." + seg
			}
			s = &p
		case s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil:
			ref += "[?" + celString(seg) + "]"
			optional = true
			s = s.AdditionalProperties.Structural
		default:
			return "", nil, false
		}
	}
	if !optional {
		ref = "optional.of(" + ref + ")"
	}
	return ref, s, true
}

// noMarker: the string at path can never be the text "<no value>".
func noMarker(s *structuralschema.Structural, path []string, opts TranslateOptions) bool {
	if vv := s.ValueValidation; vv != nil && len(vv.Enum) > 0 {
		for _, e := range vv.Enum {
			if e.Object == "<no value>" {
				return false
			}
		}
		return true
	}
	// the facts hold only for strings without any white space
	return (&translator{opts: opts}).stringFacts(s, path).noSpace
}

// stringCondition: the %v of a string is the string; missing is "".
// noMarker: the schema rules out the text "<no value>" (which the original
// exists/notExists treated as missing).
func stringCondition(c *katalog.Condition, ref string, noMarker bool) string {
	x := ref + ".orValue('')"
	v := celString(c.Value)
	switch c.Operator {
	case "equals":
		return x + " == " + v
	case "notEquals":
		return x + " != " + v
	case "contains":
		return x + ".contains(" + v + ")"
	case "notContains":
		return "!" + x + ".contains(" + v + ")"
	case "prefix":
		return x + ".startsWith(" + v + ")"
	case "notPrefix":
		return "!" + x + ".startsWith(" + v + ")"
	case "suffix":
		return x + ".endsWith(" + v + ")"
	case "notSuffix":
		return "!" + x + ".endsWith(" + v + ")"
	case "regex":
		return x + ".matches(" + v + ")"
	case "exists":
		if noMarker {
			return x + " != ''"
		}
		return "!(" + x + " in ['', '<no value>'])"
	case "notExists":
		if noMarker {
			return x + " == ''"
		}
		return x + " in ['', '<no value>']"
	case "in", "notIn":
		items := splitList(c.Value)
		q := make([]string, len(items))
		for i, it := range items {
			q[i] = celString(it)
		}
		e := x + " in [" + strings.Join(q, ", ") + "]"
		if c.Operator == "notIn" {
			return "!(" + e + ")"
		}
		return e
	}
	return ""
}

// boolCondition: a boolean prints true or false, missing is "". The
// original result for each of the three states decides the CEL form.
func boolCondition(c *katalog.Condition, ref string) string {
	var re *regexp.Regexp
	if c.Operator == "regex" {
		re, _ = regexp.Compile(c.Value)
	}
	r := func(field string) bool { return applyOperator(c.Operator, field, c.Value, re) }
	abs, t, f := r(""), r("true"), r("false")
	switch {
	case !abs && t && !f:
		return ref + ".orValue(false) == true"
	case !abs && !t && f:
		return ref + ".orValue(true) == false"
	case abs && !t && f:
		return ref + ".orValue(false) != true"
	case abs && t && !f:
		return ref + ".orValue(true) != false"
	case !abs && t && f:
		return ref + ".hasValue()"
	case abs && !t && !f:
		return "!" + ref + ".hasValue()"
	}
	return "" // constant: keep the helper form, which shows the original operator
}

// intCondition: an integer prints in decimal, missing is "", and numeric
// operators read "" as 0.
func intCondition(c *katalog.Condition, ref string) string {
	x := ref + ".orValue(0)"
	switch c.Operator {
	case "equals", "notEquals":
		n, ok := canonicalInt(c.Value)
		if !ok {
			return ""
		}
		e := x + " == " + c.Value
		if n == 0 {
			e = ref + " == optional.of(0)"
		}
		if c.Operator == "notEquals" {
			if n == 0 {
				return ref + " != optional.of(0)"
			}
			return x + " != " + c.Value
		}
		return e
	case "gt", "lt", "gte", "lte":
		f, err := parseLegacyFloat(c.Value)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return ""
		}
		return x + " " + map[string]string{"gt": ">", "lt": "<", "gte": ">=", "lte": "<="}[c.Operator] + " " + numLit(f)
	case "between", "notBetween":
		lo, hi, ok := parseBetween(c.Value)
		if !ok || math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
			return ""
		}
		if c.Operator == "between" {
			return x + " >= " + numLit(lo) + " && " + x + " <= " + numLit(hi)
		}
		return x + " < " + numLit(lo) + " || " + x + " > " + numLit(hi)
	case "exists":
		return ref + ".hasValue()"
	case "notExists":
		return "!" + ref + ".hasValue()"
	case "in", "notIn":
		var nums []string
		absentIn, zeroIn := false, false
		for _, it := range splitList(c.Value) {
			if it == "" {
				absentIn = true
				continue
			}
			if n, ok := canonicalInt(it); ok {
				nums = append(nums, it)
				zeroIn = zeroIn || n == 0
			}
		}
		if len(nums) == 0 || absentIn {
			return ""
		}
		e := x + " in [" + strings.Join(nums, ", ") + "]"
		if zeroIn {
			e = ref + ".hasValue() && " + e
		}
		if c.Operator == "notIn" {
			return "!(" + e + ")"
		}
		return e
	}
	return ""
}

// numberCondition: how a number prints depends on how it was decoded
// (1000000 or 1e+06), so only numeric operators (which parse it back) and
// presence have exact forms.
func numberCondition(c *katalog.Condition, ref string) string {
	x := ref + ".orValue(0.0)"
	switch c.Operator {
	case "gt", "lt", "gte", "lte":
		f, err := parseLegacyFloat(c.Value)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return ""
		}
		return x + " " + map[string]string{"gt": ">", "lt": "<", "gte": ">=", "lte": "<="}[c.Operator] + " " + celDouble(f)
	case "between", "notBetween":
		lo, hi, ok := parseBetween(c.Value)
		if !ok || math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
			return ""
		}
		if c.Operator == "between" {
			return x + " >= " + celDouble(lo) + " && " + x + " <= " + celDouble(hi)
		}
		return x + " < " + celDouble(lo) + " || " + x + " > " + celDouble(hi)
	case "exists":
		return ref + ".hasValue()"
	case "notExists":
		return "!" + ref + ".hasValue()"
	}
	return ""
}

func canonicalInt(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && strconv.FormatInt(n, 10) == s
}

// numLit writes a bound compared with an integer: an int literal when it
// is whole (exact for |x| < 2^53), else a double (CEL compares across
// numeric types).
func numLit(f float64) string {
	if whole(f) {
		return strconv.FormatInt(int64(f), 10)
	}
	return celDouble(f)
}

// TranslateStructuredCEL implements engine.StructuredCEL: the idiomatic CEL
// form of a structured condition over an object the API server has defaulted,
// or why there is none (the legacy.* helper form needs this runtime's CEL).
func (b *Backend) TranslateStructuredCEL(c *katalog.Condition, ctx *engine.Context) (string, error) {
	if c.Time != nil || c.DayOfWeek != nil || c.Cron != "" {
		return "", &Untranslatable{Reason: "it reads the clock, which admission does not"}
	}
	if !isTemplate(c.Field) && engine.PrunedPath(ctx.Self, strings.Split(c.Field, ".")) != nil {
		// The API server prunes the field from every object: the condition
		// always reads it missing ("" to the original), so its outcome is
		// fixed.
		var re *regexp.Regexp
		if c.Operator == "regex" {
			re, _ = regexp.Compile(c.Value)
		}
		return strconv.FormatBool(applyOperator(c.Operator, "", c.Value, re) != c.Negate), nil
	}
	src, idiomatic, err := TranslateStructured(c, ctx, TranslateOptions{Namespaced: true, Defaulted: true})
	if err != nil {
		return "", err
	}
	if idiomatic {
		return src, nil
	}
	if untypedAt(ctx.Self, strings.Split(c.Field, ".")) {
		return dynConditionCEL(c)
	}
	if t := typeAt(ctx.Self, strings.Split(c.Field, ".")); (t == "array" || t == "object") && (c.Operator == "exists" || c.Operator == "notExists") {
		// A list or a map prints non-empty ("[]", "map[]"): it exists when
		// present, as the original read it.
		e := optionalRef(c.Field) + ".hasValue()"
		if c.Operator == "notExists" != c.Negate {
			e = "!" + e
		}
		return e, nil
	}
	return "", &Untranslatable{Reason: "the field's schema type does not make a plain comparison exact"}
}

// typeAt is the schema type at path ("" when unknown).
func typeAt(s *structuralschema.Structural, path []string) string {
	for _, seg := range path {
		if s == nil {
			return ""
		}
		p, ok := s.Properties[seg]
		if !ok {
			return ""
		}
		s = &p
	}
	if s == nil {
		return ""
	}
	return s.Type
}

// untypedAt reports whether the schema says nothing of the value at path
// (no schema, or below x-kubernetes-preserve-unknown-fields).
func untypedAt(s *structuralschema.Structural, path []string) bool {
	for _, seg := range path {
		if s == nil || s.XPreserveUnknownFields && len(s.Properties) == 0 {
			return true
		}
		p, ok := s.Properties[seg]
		if !ok {
			return s.XPreserveUnknownFields
		}
		s = &p
	}
	return s == nil || s.XPreserveUnknownFields && len(s.Properties) == 0
}

// dynConditionCEL is a structured condition over a field without a schema,
// in Kubernetes CEL: the field's value printed as the original printed it
// (a string as is, a number or bool by string(), missing as ""); numeric
// operators read an int, a double or a numeric string (anything else is an
// evaluation error, where the original read 0).
func dynConditionCEL(c *katalog.Condition) (string, error) {
	ref := optionalRef(c.Field)
	str := "(" + ref + ".hasValue() ? (type(" + ref + ".value()) == string ? " + ref + ".value() : string(" + ref + ".value())) : '')"
	num := "(" + ref + ".hasValue() ? double(" + ref + ".value()) : 0.0)"
	var e string
	switch c.Operator {
	case "gt", "lt", "gte", "lte":
		f, err := parseLegacyFloat(c.Value)
		if err != nil {
			return "", &Untranslatable{Reason: fmt.Sprintf("%s needs a number, got %q", c.Operator, c.Value)}
		}
		e = num + " " + map[string]string{"gt": ">", "lt": "<", "gte": ">=", "lte": "<="}[c.Operator] + " " + celDouble(f)
	case "between", "notBetween":
		lo, hi, ok := parseBetween(c.Value)
		if !ok {
			return "", &Untranslatable{Reason: fmt.Sprintf("%s needs \"min,max\", got %q", c.Operator, c.Value)}
		}
		e = celDouble(lo) + " <= " + num + " && " + num + " <= " + celDouble(hi)
		if c.Operator == "notBetween" {
			e = "!(" + e + ")"
		}
	default:
		if _, isType := typeOperatorName[c.Operator]; isType {
			return "", &Untranslatable{Reason: "type operators read the value's Go type, which admission does not see"}
		}
		legacy, err := conditionCEL(c.Operator, c.Field, c.Value, false)
		if err != nil {
			return "", &Untranslatable{Reason: err.Error()}
		}
		e = strings.ReplaceAll(legacy, "legacy.str(self, "+celString(c.Field)+")", str)
		if strings.Contains(e, "legacy.") {
			return "", &Untranslatable{Reason: "it needs this runtime's helper functions"}
		}
	}
	if c.Negate {
		e = "!(" + e + ")"
	}
	return e, nil
}

// optionalRef is a dot path over self as optional selections.
func optionalRef(path string) string {
	ref := "self"
	for _, seg := range strings.Split(path, ".") {
		if isCELIdent(seg) {
			ref += ".?" + seg
		} else {
			ref += "[?" + celString(seg) + "]"
		}
	}
	return ref
}

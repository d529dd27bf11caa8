package engine

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/strfmt"

	"github.com/orkspace/orkestra-cel/katalog"
)

// CompileOptions tune compilation.
type CompileOptions struct {
	// CostLimit is the static per-expression cost limit (0: backend default).
	CostLimit uint64
	// MaxForEach bounds the children of one forEach declaration whose field
	// has no maxItems/maxProperties (0: DefaultMaxForEach).
	MaxForEach int
	// StrictTotality makes a conversion expression that can fail on an
	// object its source schema accepts an error instead of a warning.
	StrictTotality bool
}

// MaxExpressions bounds the expressions one katalog compiles (conditions
// included): compilation stops at the entry that passes it.
const MaxExpressions = 5000

// Compile turns a loaded katalog into an immutable plan: every string value,
// condition and conversion path compiled and type-checked where it lands. All
// problems are reported, not only the first; the plan is usable only when the
// diagnostics hold no error.
func Compile(k *katalog.Katalog, b Backends, opts CompileOptions) (*Plan, katalog.Diagnostics) {
	c := &compiler{b: b, opts: opts}
	if len(k.Notes) > 0 {
		c.notes(k)
	}
	p := &Plan{Katalog: k, Conversions: map[schema.GroupKind]*Conversion{}}
	reconciler := reconcilingEntries(k)
	for _, src := range k.CRDs {
		if src.CRD == nil || src.Schema() == nil {
			continue // the loader reported why
		}
		c.entry = src.Name
		e := &Entry{
			Name:       src.Name,
			Source:     src,
			GVK:        src.GVK(),
			GVR:        src.GVR(),
			Namespaced: src.CRD.Object.Spec.Scope != apiextensionsv1.ClusterScoped,
			Enabled:    src.Enabled,
			Workers:    src.Workers,
			Resync:     src.Resync,
			Reconciles: reconciler[src.CRD] == src,
			Schema:     src.Schema(),
			Hooks:      map[string][]*Resource{},
			Namespaces: src.Namespaces,
			DependsOn:  src.DependsOn,
		}
		c.vars = nil
		c.view = src.Schema()
		if src.Normalize != nil {
			e.Normalize = c.normalize(src)
		}
		c.entryLegacySelf = auditRoot(src, c.view)
		c.legacySelf = c.entryLegacySelf
		if e.ReadsChildren = mentionsChildren(src); e.ReadsChildren {
			// (An environment with children is built only where needed.)
			c.vars = []Var{{Name: ChildrenVar, Schema: childrenSchema(k, src)}}
		}
		c.timed = nil
		if src.Box != nil {
			e.HasBox = true
			e.Finalizers = src.Box.Finalizers
			if len(e.Finalizers) == 0 {
				// spec.finalizers is the katalog-wide default (upstream).
				e.Finalizers = k.Finalizers
			}
			for _, h := range katalog.Hooks {
				if hook := src.Box.Hooks[h]; hook != nil {
					for _, r := range hook.Resources {
						if cr := c.resource(src, r); cr != nil {
							e.Hooks[h] = append(e.Hooks[h], cr)
						}
					}
					c.checkIdentities(e.Hooks[h])
				}
			}
			if g := src.Box.Gates; g != nil {
				e.Gate = c.conditions(src, g.ReconcileWhen, g.ReconcileOr, "operatorBox.preReconcile")
				e.EnqueueGate = c.conditions(src, g.EnqueueWhen, g.EnqueueOr, "operatorBox.preReconcile.enqueueGate")
			}
			if src.Box.Status != nil {
				for i, f := range src.Box.Status.Fields {
					if sf := c.statusField(src, i, f); sf != nil {
						e.Status = append(e.Status, sf)
					}
				}
			}
		}
		c.vars = nil // a conversion sees only the object converted
		c.legacySelf, c.entryLegacySelf, c.view = nil, nil, nil
		e.Admission = c.admission(src)
		e.Timed = c.timed
		if src.Conversion != nil {
			if conv := c.conversion(src); conv != nil {
				p.Conversions[conv.GroupKind] = conv
				p.Stats.Paths += len(conv.Paths)
			}
		} else if len(src.CRD.Served) > 1 && reconciler[src.CRD] == src && !hasConversion(k, src.CRD) {
			c.warnf(src.Pos, "", "CRD %s serves %d versions (%s) but no entry declares conversion; the API server will only rewrite apiVersion between them", src.CRD.Object.Name, len(src.CRD.Served), strings.Join(src.CRD.Served, ", "))
		}
		p.Entries = append(p.Entries, e)
		if c.exprs > MaxExpressions {
			c.errorf(src.Pos, "", "the katalog has more than %d expressions (%d up to this entry), the limit of one katalog: each compiled expression keeps 2 to 35 KB; split the operator into several katalogs", MaxExpressions, c.exprs)
			break
		}
	}
	c.entry = ""
	p.Stats.Entries = len(p.Entries)
	p.Stats.Expressions = c.exprs
	return p, c.diags
}

// notes gives the katalog's user-defined template functions to the legacy
// backend.
func (c *compiler) notes(k *katalog.Katalog) {
	nb, ok := c.b.Legacy.(NotesBackend)
	if !ok {
		c.errorf(k.Notes[0].Pos, "notes", "notes: (user-defined template functions) need the legacy adapter, which is not enabled in this build")
		return
	}
	legacy, diags := nb.WithNotes(k.Notes)
	c.diags = append(c.diags, diags...)
	c.b.Legacy = legacy
}

func hasConversion(k *katalog.Katalog, crd *katalog.CRD) bool {
	for _, e := range k.CRDs {
		if e.CRD == crd && e.Conversion != nil {
			return true
		}
	}
	return false
}

// reconcilingEntries picks, per CRD, the entry that reconciles: the one at
// the storage version, else the first enabled entry. Each object is then
// reconciled once even when several entries serve its CRD.
func reconcilingEntries(k *katalog.Katalog) map[*katalog.CRD]*katalog.CRDEntry {
	out := map[*katalog.CRD]*katalog.CRDEntry{}
	for _, e := range k.CRDs {
		if e.CRD == nil || !e.Enabled {
			continue
		}
		cur, ok := out[e.CRD]
		if !ok || (cur.APITypes.Version != e.CRD.StorageVersion && e.APITypes.Version == e.CRD.StorageVersion) {
			out[e.CRD] = e
		}
	}
	return out
}

type compiler struct {
	b     Backends
	opts  CompileOptions
	entry string
	diags katalog.Diagnostics
	exprs int
	// vars are the variables CEL expressions of the current entry (and
	// forEach declaration) may read besides self; legacySelf, when set, is
	// the schema legacy templates see as their root instead of self (a
	// forEach declaration adds .item and friends to it).
	vars       []Var
	legacySelf *structuralschema.Structural
	// entryLegacySelf is the entry's own legacy root outside forEach: nil,
	// or self with ._normalizeChanges when normalize audits.
	entryLegacySelf *structuralschema.Structural
	// view is the schema of the custom resource as the entry's expressions
	// read it: the CRD version's, with the fields normalize adds.
	view *structuralschema.Structural
	// timed are the entry's values and conditions that read the clock.
	timed []Timed
}

// noteTimed records x when it reads the clock.
func (c *compiler) noteTimed(x any) {
	if t, ok := x.(Timed); ok && t.ReadsClock() {
		c.timed = append(c.timed, t)
	}
}

// selfFor is the root schema an expression of language lang sees.
func (c *compiler) selfFor(lang Language, self *structuralschema.Structural) *structuralschema.Structural {
	if lang == Legacy && c.legacySelf != nil {
		return c.legacySelf
	}
	return self
}

func (c *compiler) errorf(pos katalog.Pos, field, format string, args ...any) {
	c.diags = append(c.diags, katalog.Diagnostic{Pos: pos, Entry: c.entry, Field: field, Message: fmt.Sprintf(format, args...)})
}

func (c *compiler) warnf(pos katalog.Pos, field, format string, args ...any) {
	c.diags = append(c.diags, katalog.Diagnostic{Pos: pos, Severity: katalog.Warning, Entry: c.entry, Field: field, Message: fmt.Sprintf(format, args...)})
}

// target describes where a value lands.
type target struct {
	field       string
	self        *structuralschema.Structural
	selfVersion string
	coerce      Coerce
	allowRandom func(field string) bool
	// rawRefs: a legacy template that is one plain field reference
	// ({{ .spec.list }}) yields the field's value, not its printing — as
	// upstream reads toNamespaces items (pkg/resources/template/helper.go,
	// resolveRawValue).
	rawRefs func(field string) bool
	// checkRequired reports required target fields a map leaves unset
	// (conversion outputs construct whole objects).
	checkRequired bool
	// total asks where expressions can fail on valid objects (conversions).
	total bool
	// labels: the values are labels (a conversion's metadata.labels).
	labels bool
}

func (c *compiler) resource(e *katalog.CRDEntry, r *katalog.Resource) *Resource {
	kind := katalog.ResourceKinds[r.Kind]
	base := "operatorBox." + r.FieldPath()
	t := target{
		field:       base,
		self:        c.view,
		selfVersion: e.APITypes.Version,
		coerce:      CoerceTyped,
		allowRandom: func(field string) bool { return r.Once && strings.HasPrefix(field, base+".data.") },
		rawRefs:     func(field string) bool { return strings.HasPrefix(field, base+".toNamespaces[") },
	}
	if kind.Open {
		t.coerce = CoerceGuess
	}
	errsBefore := len(c.diags.Errors())
	var fe *ForEach
	if r.ForEach != nil {
		fe = c.forEach(e, r, base)
		defer c.endForEach(c.vars)
		if fe != nil {
			c.beginForEach(e, fe)
		}
	}
	var fields []NodeField
	hasName := false
	for _, f := range r.Fields.Map {
		expected := kind.Fields[f.Key]
		ft := t
		ft.field = base + "." + f.Key
		if f.Key == "name" {
			hasName = true
		}
		fields = append(fields, NodeField{Key: f.Key, Value: c.value(f.Value, expected, ft)})
	}
	if !hasName {
		name := "${self.metadata.name}-" + kind.NameSuffix
		expr, diags := c.b.CEL.CompileValue(name, &Context{Entry: c.entry, Field: base + ".name", Pos: r.Pos, Self: c.view, SelfVersion: e.APITypes.Version, Expected: kind.Fields["name"], CostLimit: c.opts.CostLimit, Vars: c.vars})
		c.diags = append(c.diags, diags...)
		if expr != nil {
			fields = append([]NodeField{{Key: "name", Value: NewExpr(base+".name", expr)}}, fields...)
		}
	}
	out := &Resource{
		Source:      r,
		Kind:        kind,
		Hook:        r.Hook,
		Fields:      NewMap(base, r.Pos, fields),
		Reconcile:   r.Reconcile,
		Once:        r.Once,
		RotateAfter: r.RotateAfter,
	}
	out.ForEach = fe
	if fe != nil && len(c.diags.Errors()) == errsBefore {
		// (A name that failed to compile says nothing of the item.)
		c.checkItemIdentity(r, out, fe, base)
	}
	out.GVK = literalGVK(kind, out.Fields)
	if av := out.Fields.Get("apiVersion"); kind.Open && out.GVK == nil && av != nil && av.IsLiteral() {
		if _, err := schema.ParseGroupVersion(fmt.Sprint(av.Literal)); err != nil {
			c.errorf(av.Pos, base+".apiVersion", "apiVersion %v is not group/version (such as example.io/v1): %v", av.Literal, err)
		}
	}
	out.When = c.conditions(e, r.When, r.Or, base)
	return out
}

// literalGVK is a child's kind when it is known before evaluation.
func literalGVK(kind *katalog.KindSpec, fields *Node) *schema.GroupVersionKind {
	if !kind.Open {
		gvk := schema.FromAPIVersionAndKind(kind.APIVersion, kind.Kind)
		return &gvk
	}
	av, k := fields.Get("apiVersion"), fields.Get("kind")
	if av == nil || k == nil || !av.IsLiteral() || !k.IsLiteral() {
		return nil
	}
	avs, _ := av.Literal.(string)
	ks, _ := k.Literal.(string)
	gv, err := schema.ParseGroupVersion(avs)
	if err != nil || ks == "" {
		return nil
	}
	gvk := gv.WithKind(ks)
	return &gvk
}

// conditions compiles when (all must hold) and or (any must hold) into one
// condition, nil when there is none.
func (c *compiler) conditions(e *katalog.CRDEntry, when, or *katalog.When, base string) Condition {
	var parts []Condition
	if !when.Empty() {
		if cond := c.when(e, when, true, base+".when"); cond != nil {
			parts = append(parts, cond)
		}
	}
	if !or.Empty() {
		if cond := c.when(e, or, false, base+".or"); cond != nil {
			parts = append(parts, cond)
		}
	}
	switch len(parts) {
	case 0:
		return nil
	case 1:
		return parts[0]
	}
	return &allOf{parts: parts, pos: parts[0].Pos()}
}

func (c *compiler) when(e *katalog.CRDEntry, w *katalog.When, all bool, field string) Condition {
	var parts []Condition
	for i, x := range w.Exprs {
		f := field
		if len(w.Exprs)+len(w.Conditions) > 1 {
			f = fmt.Sprintf("%s[%d]", field, i)
		}
		if x.Kind != katalog.StringValue {
			c.errorf(x.Pos, f, "a condition must be a CEL string such as \"self.spec.enabled\", got %s %s", x.Kind, x.Str)
			continue
		}
		ctx := &Context{Entry: c.entry, Field: f, Pos: x.ContentPos(), Self: c.selfFor(Classify(x.Str), c.view), SelfVersion: e.APITypes.Version, CostLimit: c.opts.CostLimit, Vars: c.vars}
		backend := c.b.CEL
		switch Classify(x.Str) {
		case Legacy:
			backend = c.b.Legacy
		case Mixed:
			c.errorf(x.ContentPos(), f, "a condition may not mix ${ and {{; write it in CEL")
			continue
		}
		if backend == nil {
			c.errorf(x.ContentPos(), f, "legacy templates are not enabled in this build")
			continue
		}
		cond, diags := backend.CompileCondition(x.Str, ctx)
		c.diags = append(c.diags, diags...)
		c.exprs++
		if cond != nil {
			c.noteTimed(cond)
			parts = append(parts, cond)
		}
	}
	if len(w.Conditions) > 0 {
		if c.b.Legacy == nil {
			c.errorf(w.Pos, field, "structured conditions need the legacy adapter, which is not enabled in this build")
		} else {
			ctx := &Context{Entry: c.entry, Field: field, Pos: w.Pos, Self: c.selfFor(Legacy, c.view), SelfVersion: e.APITypes.Version, CostLimit: c.opts.CostLimit, Vars: c.vars}
			cond, diags := c.b.Legacy.CompileStructured(w.Conditions, all, ctx)
			c.diags = append(c.diags, diags...)
			c.exprs += len(w.Conditions)
			if cond != nil {
				c.noteTimed(cond)
				parts = append(parts, cond)
			}
		}
	}
	if len(parts) == 0 {
		return nil
	}
	if len(parts) == 1 {
		return parts[0]
	}
	if all {
		return &allOf{parts: parts, pos: w.Pos}
	}
	return &anyOf{parts: parts, pos: w.Pos}
}

func (c *compiler) statusField(e *katalog.CRDEntry, i int, f *katalog.StatusField) *StatusField {
	field := fmt.Sprintf("operatorBox.status.fields[%d]", i)
	path := strings.Split(f.Path, ".")
	statusSchema := property(e.Schema(), "status")
	var expected *structuralschema.Structural
	switch {
	case statusSchema == nil && e.Schema().XPreserveUnknownFields:
		// An untyped entry: the status is whatever the value is.
	case statusSchema == nil:
		// The API server drops a status its schema does not declare; upstream
		// wrote it anyway and lost it, so this is a warning, not an error.
		c.warnf(f.Pos, field+".path", "the CRD version %s has no status schema, so the API server drops status.%s; the field is not written — add it to the CRD's schema", e.APITypes.Version, f.Path)
		return nil
	default:
		s := statusSchema
		for j, seg := range path {
			next := property(s, seg)
			if next == nil {
				if s.XPreserveUnknownFields {
					s = nil
					break
				}
				if hint := katalog.DidYouMean(seg, propertyNames(s)); hint != "" {
					c.errorf(f.Pos, field+".path", "status.%s is not in the status schema of %s%s", strings.Join(path[:j+1], "."), e.APITypes.Version, hint)
				} else {
					c.warnf(f.Pos, field+".path", "status.%s is not in the status schema of %s, so the API server drops it; the field is not written — add it to the CRD's schema", strings.Join(path[:j+1], "."), e.APITypes.Version)
				}
				return nil
			}
			s = next
		}
		expected = s
	}
	t := target{field: field + ".value", self: c.view, selfVersion: e.APITypes.Version, coerce: CoerceTyped}
	switch {
	case expected != nil && f.Type != "" && f.Type != "auto" && !typeAgrees(f.Type, expected):
		// The schema wins: the API server would refuse the other type.
		c.warnf(f.Pos, field+".type", "type: %s, but the status schema types status.%s as %s; the value is written as %s (the API server would refuse %s)", f.Type, f.Path, DescribeSchema(expected), DescribeSchema(expected), DescribeSchema(typeHint(f.Type)))
	case expected != nil:
	case f.Type == "auto":
		t.coerce = CoerceAuto
	case f.Type == "" || f.Type == "string":
		// The original wrote an untyped status field as the rendered string.
		t.coerce = CoerceString
	default:
		expected = typeHint(f.Type)
	}
	sf := &StatusField{Source: f, Path: path, Value: c.value(f.Value, expected, t), ClearOnFalse: f.ClearOnFalse}
	sf.ClearsToEmpty = expected == nil || expected.Type == "string" || expected.Type == ""
	if f.When != nil {
		sf.When = c.when(e, f.When, true, field+".when")
	}
	return sf
}

// typeAgrees: a status field's `type:` names the schema's type.
func typeAgrees(t string, s *structuralschema.Structural) bool {
	h := typeHint(t)
	return s.Type == h.Type || s.XIntOrString && (t == "int" || t == "string")
}

func typeHint(t string) *structuralschema.Structural {
	m := map[string]string{"string": "string", "int": "integer", "float": "number", "bool": "boolean"}
	return &structuralschema.Structural{Generic: structuralschema.Generic{Type: m[t]}}
}

func (c *compiler) conversion(e *katalog.CRDEntry) *Conversion {
	crd := e.CRD
	conv := &Conversion{
		GroupKind:      crd.GroupKind(),
		CRD:            crd,
		Entry:          e.Name,
		StorageVersion: crd.StorageVersion,
		Versions:       crd.Served,
		Schemas:        crd.Schemas,
		Paths:          map[[2]string]*Path{},
	}
	for _, p := range e.Conversion.Paths {
		from, to := crd.Schemas[p.From], crd.Schemas[p.To]
		if from == nil || to == nil {
			continue // the loader reported the unknown version
		}
		base := fmt.Sprintf("conversion.paths[%d]", p.Index)
		t := target{self: from, selfVersion: p.From, coerce: CoerceGuess, checkRequired: true, total: true}
		cp := &Path{Source: p, From: p.From, To: p.To, ToAPIVersion: crd.Object.Spec.Group + "/" + p.To}
		if p.Spec != nil {
			t.field = base + ".spec"
			cp.Spec = c.value(p.Spec, property(to, "spec"), t)
		}
		if p.Status != nil {
			t.field = base + ".status"
			cp.Status = c.value(p.Status, property(to, "status"), t)
		}
		stringMap := katalog.ResourceKinds["configMaps"].Fields["data"]
		if p.Labels != nil {
			lt := t
			lt.field, lt.labels = base+".metadata.labels", true
			cp.Labels = c.value(p.Labels, stringMap, lt)
		}
		if p.Annotations != nil {
			t.field = base + ".metadata.annotations"
			cp.Annotations = c.value(p.Annotations, stringMap, t)
		}
		conv.Paths[[2]string{p.From, p.To}] = cp
	}
	// Every pair of served versions must be reachable, directly or through
	// the storage version.
	for _, a := range crd.Served {
		for _, b := range crd.Served {
			if a == b {
				continue
			}
			if _, ok := conv.Route(a, b); !ok {
				hint := fmt.Sprintf("add a path from %s to %s", a, b)
				if a != crd.StorageVersion && b != crd.StorageVersion {
					hint += fmt.Sprintf(", or paths %s→%s and %s→%s through the storage version", a, crd.StorageVersion, crd.StorageVersion, b)
				}
				c.errorf(e.Conversion.Pos, "conversion.paths", "no conversion from %s to %s: %s", a, b, hint)
			}
		}
	}
	conv.Identity = isIdentity(conv)
	return conv
}

// value compiles a katalog value into a node, checking it against expected
// (nil: anything).
func (c *compiler) value(v *katalog.Value, expected *structuralschema.Structural, t target) *Node {
	switch v.Kind {
	case katalog.StringValue:
		return c.stringValue(v, expected, t)
	case katalog.MapValue:
		return c.mapValue(v, expected, t)
	case katalog.ListValue:
		var items []*Node
		var itemSchema *structuralschema.Structural
		if expected != nil {
			if expected.Type != "" && expected.Type != "array" {
				c.errorf(v.Pos, t.field, "%s expects %s, got a list", t.field, DescribeSchema(expected))
				return NewLiteral(t.field, v.Pos, nil)
			}
			itemSchema = expected.Items
		}
		for i, item := range v.List {
			it := t
			it.field = fmt.Sprintf("%s[%d]", t.field, i)
			items = append(items, c.value(item, itemSchema, it))
		}
		return NewList(t.field, v.Pos, items)
	case katalog.NullValue:
		return NewLiteral(t.field, v.Pos, nil)
	}
	// int, float, bool literals
	lit, err := literalFor(v.Scalar, v.Str, expected)
	if err != "" {
		c.errorf(v.Pos, t.field, "%s", err)
	}
	return NewLiteral(t.field, v.Pos, lit)
}

// plainLegacyRef matches a legacy template that is one field reference.
var plainLegacyRef = regexp.MustCompile(`^\{\{\s*\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\}\}$`)

// rawRef is a plain legacy field reference read as its value: the CEL
// reference to the same field, keeping the source as written.
type rawRef struct {
	Expr
	src string
}

func (r *rawRef) Source() string { return r.src }
func (r *rawRef) Engine() string { return "legacy" }

func (c *compiler) stringValue(v *katalog.Value, expected *structuralschema.Structural, t target) *Node {
	pos := v.ContentPos()
	lang := Classify(v.Str)
	if lang == Literal {
		lit, err := literalFor(v.Str, v.Str, expected)
		if err != "" {
			c.errorf(v.Pos, t.field, "%s", err)
		}
		return NewLiteral(t.field, v.Pos, lit)
	}
	ctx := &Context{
		Entry: c.entry, Field: t.field, Pos: pos, Self: c.selfFor(lang, t.self), SelfVersion: t.selfVersion,
		Expected: expected, Coerce: t.coerce, CostLimit: c.opts.CostLimit,
		AllowRandom: t.allowRandom != nil && t.allowRandom(t.field),
		Vars:        c.vars,
		Total:       t.total,
		LabelValue:  t.labels && expected != nil && expected.Type == "string",
	}
	if t.total && !c.opts.StrictTotality {
		ctx.TotalSeverity = katalog.Warning
	}
	if lang == Legacy && t.rawRefs != nil && t.rawRefs(t.field) {
		if m := plainLegacyRef.FindStringSubmatch(v.Str); m != nil {
			lang, ctx.Coerce = CEL, CoerceTyped
			expr, diags := c.b.CEL.CompileValue("${self."+m[1]+"}", ctx)
			c.diags = append(c.diags, diags...)
			c.exprs++
			if expr == nil {
				return NewLiteral(t.field, v.Pos, nil)
			}
			return NewExpr(t.field, &rawRef{Expr: expr, src: v.Str})
		}
	}
	var backend Backend
	switch lang {
	case Mixed:
		c.errorf(pos, t.field, "a string may not mix ${…} (CEL) and {{…}} (legacy template); write it in one language, e.g. run `orkestra migrate` to move it to CEL")
		return NewLiteral(t.field, v.Pos, nil)
	case CEL:
		backend = c.b.CEL
	case Legacy:
		if c.b.Legacy == nil {
			c.errorf(pos, t.field, "legacy templates are not enabled in this build")
			return NewLiteral(t.field, v.Pos, nil)
		}
		backend = c.b.Legacy
	}
	expr, diags := backend.CompileValue(v.Str, ctx)
	c.diags = append(c.diags, diags...)
	c.exprs++
	if expr == nil {
		return NewLiteral(t.field, v.Pos, nil)
	}
	c.noteTimed(expr)
	return NewExpr(t.field, expr)
}

func (c *compiler) mapValue(v *katalog.Value, expected *structuralschema.Structural, t target) *Node {
	if expected != nil && expected.Type != "" && expected.Type != "object" {
		c.errorf(v.Pos, t.field, "%s expects %s, got a map", t.field, DescribeSchema(expected))
		return NewLiteral(t.field, v.Pos, nil)
	}
	var fields []NodeField
	set := map[string]bool{}
	for _, f := range v.Map {
		ft := t
		ft.field = t.field + "." + f.Key
		var fs *structuralschema.Structural
		if expected != nil {
			switch {
			case expected.Properties != nil:
				p, ok := expected.Properties[f.Key]
				if !ok {
					if !expected.XPreserveUnknownFields {
						c.errorf(f.KeyPos, ft.field, "%s has no field %q%s", t.field, f.Key, didYouMeanFields(f.Key, expected))
						continue
					}
				} else {
					fs = &p
				}
			case expected.AdditionalProperties != nil && expected.AdditionalProperties.Structural != nil:
				fs = expected.AdditionalProperties.Structural
			case !expected.XPreserveUnknownFields && expected.Type == "object":
				c.errorf(f.KeyPos, ft.field, "%s is an object without declared fields; the API server would prune %q", t.field, f.Key)
				continue
			}
		}
		set[f.Key] = true
		fields = append(fields, NodeField{Key: f.Key, Value: c.value(f.Value, fs, ft)})
	}
	if t.checkRequired && expected != nil && expected.ValueValidation != nil {
		for _, req := range expected.ValueValidation.Required {
			if !set[req] {
				c.errorf(v.Pos, t.field, "required field %s.%s is not set; map it from the source (e.g. %s: \"${self.%s}\") or give a literal", t.field, req, req, strings.TrimPrefix(fieldAfterPath(t.field)+"."+req, "."))
			}
		}
	}
	return NewMap(t.field, v.Pos, fields)
}

func formatOf(s *structuralschema.Structural) string {
	if s.ValueValidation == nil || s.Type != "string" {
		return ""
	}
	return s.ValueValidation.Format
}

// fieldAfterPath strips the conversion.paths[i] prefix from a field path.
func fieldAfterPath(field string) string {
	if i := strings.Index(field, "]."); i >= 0 {
		return field[i+2:]
	}
	return field
}

func property(s *structuralschema.Structural, name string) *structuralschema.Structural {
	if s == nil || s.Properties == nil {
		return nil
	}
	p, ok := s.Properties[name]
	if !ok {
		return nil
	}
	return &p
}

func propertyNames(s *structuralschema.Structural) []string {
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func didYouMeanFields(key string, s *structuralschema.Structural) string {
	names := propertyNames(s)
	if d := katalog.DidYouMean(key, names); d != "" {
		return d
	}
	if len(names) == 0 {
		return ""
	}
	return "; it has " + strings.Join(names, ", ")
}

// DescribeSchema names the type a schema expects, for messages: "an
// integer", "a list", … ("anything" for nil or untyped).
func DescribeSchema(s *structuralschema.Structural) string {
	switch {
	case s == nil:
		return "anything"
	case s.XIntOrString:
		return "an integer or a string"
	case s.Type == "integer":
		return "an integer"
	case s.Type == "number":
		return "a number"
	case s.Type == "boolean":
		return "a boolean"
	case s.Type == "string":
		return "a string"
	case s.Type == "array":
		return "a list"
	case s.Type == "object":
		return "an object"
	}
	return "anything"
}

// literalFor types a literal scalar for its target: YAML scalars become the
// target's type when they can (a quoted "80" into an integer field is 80, as
// the original katalogs wrote them; `true` into a string field is "true").
// It returns an error message when the literal cannot fit, breaks an enum, or
// is not valid for the target's format (date-time, email, uuid, …).
func literalFor(scalar any, text string, s *structuralschema.Structural) (any, string) {
	if s == nil || s.XPreserveUnknownFields && s.Type == "" {
		return scalar, ""
	}
	var out any
	switch {
	case s.XIntOrString:
		if i, ok := scalar.(int64); ok {
			return i, ""
		}
		return text, ""
	case s.Type == "string":
		out = text
		if f, ok := scalar.(float64); ok {
			out = strconv.FormatFloat(f, 'f', -1, 64)
		}
	case s.Type == "integer":
		switch x := scalar.(type) {
		case int64:
			out = x
		case float64:
			if x != float64(int64(x)) {
				return nil, fmt.Sprintf("expects an integer, got %v", x)
			}
			out = int64(x)
		case string:
			i, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
			if err != nil {
				return nil, fmt.Sprintf("expects an integer, got the string %q", x)
			}
			out = i
		default:
			return nil, fmt.Sprintf("expects an integer, got %v", scalar)
		}
	case s.Type == "number":
		switch x := scalar.(type) {
		case int64, float64:
			out = x
		case string:
			f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if err != nil {
				return nil, fmt.Sprintf("expects a number, got the string %q", x)
			}
			out = f
		default:
			return nil, fmt.Sprintf("expects a number, got %v", scalar)
		}
	case s.Type == "boolean":
		switch x := scalar.(type) {
		case bool:
			out = x
		case string:
			b, err := strconv.ParseBool(strings.TrimSpace(x))
			if err != nil {
				return nil, fmt.Sprintf("expects true or false, got the string %q", x)
			}
			out = b
		default:
			return nil, fmt.Sprintf("expects true or false, got %v", scalar)
		}
	case s.Type == "object":
		return nil, fmt.Sprintf("expects an object, got %q", text)
	case s.Type == "array":
		return nil, fmt.Sprintf("expects a list, got %q", text)
	default:
		return scalar, ""
	}
	if f := formatOf(s); f != "" && strfmt.Default.ContainsName(f) {
		if str, ok := out.(string); ok && !strfmt.Default.Validates(f, str) {
			return out, fmt.Sprintf("%q is not a valid %s (the schema's format)", str, f)
		}
	}
	if s.ValueValidation != nil && len(s.ValueValidation.Enum) > 0 {
		allowed := make([]string, 0, len(s.ValueValidation.Enum))
		for _, e := range s.ValueValidation.Enum {
			if fmt.Sprint(e.Object) == fmt.Sprint(out) {
				return out, ""
			}
			allowed = append(allowed, fmt.Sprint(e.Object))
		}
		return out, fmt.Sprintf("%v is not one of the allowed values %s%s", out, strings.Join(allowed, ", "), katalog.DidYouMean(fmt.Sprint(out), allowed))
	}
	return out, ""
}

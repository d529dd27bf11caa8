package engine

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/katalog"
)

// target describes where a value lands.
type target struct {
	field       string
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
	// skipsFailure: Context.SkipsFailure.
	skipsFailure bool
}

func (c *compiler) resource(sc compileScope, r *katalog.Resource) *Resource {
	kind := katalog.ResourceKinds[r.Kind]
	base := "operatorBox." + r.FieldPath()
	t := target{
		field:       base,
		coerce:      CoerceTyped,
		allowRandom: func(field string) bool { return r.Once && strings.HasPrefix(field, base+".data.") },
		rawRefs:     func(field string) bool { return strings.HasPrefix(field, base+".toNamespaces[") },
	}
	if kind.Open {
		t.coerce = CoerceGuess
	}
	errsBefore := len(c.diags.Errors())
	var inputs *Inputs
	if r.Motif != nil {
		inputs = c.inputs(sc, r.Motif)
		sc = sc.withInputs(inputs)
	}
	var fe *ForEach
	if r.ForEach != nil {
		if fe = c.forEach(sc, r, base); fe != nil {
			sc = sc.withForEach(fe)
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
		fields = append(fields, NodeField{Key: f.Key, Value: c.value(sc, f.Value, expected, ft)})
	}
	if !hasName {
		name := "${self.metadata.name}-" + kind.NameSuffix
		ctx := sc.context(CEL, base+".name", r.Pos, c.opts.CostLimit)
		ctx.Expected = kind.Fields["name"]
		expr, diags := c.b.CEL.CompileValue(name, ctx)
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
		Modes:       sc.entry.Box.ModesOf(r),
		Once:        r.Once,
		RotateAfter: r.RotateAfter,
		Inputs:      inputs,
	}
	out.ForEach = fe
	if fe != nil && len(c.diags.Errors()) == errsBefore {
		// (A name that failed to compile says nothing of the item.)
		c.checkItemIdentity(sc, r, out, fe, base)
	}
	out.GVK = literalGVK(kind, out.Fields)
	if av := out.Fields.Get("apiVersion"); kind.Open && out.GVK == nil && av != nil && av.IsLiteral() {
		if _, err := schema.ParseGroupVersion(fmt.Sprint(av.Literal)); err != nil {
			c.errorf(sc, av.Pos, base+".apiVersion", "apiVersion %v is not group/version (such as example.io/v1): %v", av.Literal, err)
		}
	}
	out.When = c.conditions(sc, r.When, r.Or, base)
	if a := r.Autoscale; a != nil {
		out.Autoscale = &Autoscale{Source: a}
		if a.Up != nil {
			out.Autoscale.Up = &ScaleRule{Source: a.Up, When: c.conditions(sc, a.Up.When, a.Up.Or, a.Up.Field+".conditions")}
		}
		if a.Down != nil {
			out.Autoscale.Down = &ScaleRule{Source: a.Down, When: c.conditions(sc, a.Down.When, a.Down.Or, a.Down.Field+".conditions")}
		}
	}
	out.ReadyWhen = c.readyWhen(sc, r, out)
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

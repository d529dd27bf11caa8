package gotmpl

import (
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/orkspace/orkestra-cel/engine"
)

// In a forEach declaration .item (or its alias), .index and .value are the
// current item: they translate to the CEL variables each (or the alias),
// index and value, typed by the forEach field's schema — never to self.…,
// which would read the custom resource instead. The rest of the object
// still translates.
func TestForEachItemRoots(t *testing.T) {
	trSetup(t)
	item := &structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"},
		Properties:      map[string]structuralschema.Structural{"name": {Generic: structuralschema.Generic{Type: "string"}}},
		ValueValidation: &structuralschema.ValueValidation{Required: []string{"name"}}}
	integer := &structuralschema.Structural{Generic: structuralschema.Generic{Type: "integer"}}
	ctx := toString.ctx()
	ctx.Vars = []engine.Var{{Name: engine.ChildrenVar}, {Name: engine.EachVar, Schema: item}, {Name: engine.IndexVar, Schema: integer}, {Name: "region", Schema: item}, {Name: engine.ValueVar}}
	for src, want := range map[string]string{
		"{{ .item.name }}":                "${each.name.trim()}",
		"{{ .region.name }}":              "${region.name.trim()}",
		"{{ .index }}":                    "${string(index)}",
		"{{ .value.size }}":               "${legacy.field(value, 'size').optFlatMap(v, legacy.value(v, 'string'))}",
		"{{ .metadata.name }}":            "${self.metadata.name}",
		"x-{{ .item.name }}-{{ .index }}": "x-${each.name}-${index}",
	} {
		got, err := TranslateValue(src, ctx, TranslateOptions{Namespaced: true})
		if err != nil || got != want {
			t.Errorf("%s: got %q (%v), want %q", src, got, err, want)
		}
	}
	// Outside a forEach nothing is an item.
	if got, err := TranslateValue("{{ .metadata.name }}", toString.ctx(), TranslateOptions{Namespaced: true}); err != nil || got != "${self.metadata.name}" {
		t.Errorf("outside a forEach: %q, %v", got, err)
	}
}

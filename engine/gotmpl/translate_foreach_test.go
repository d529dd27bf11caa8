package gotmpl

import (
	"errors"
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
)

// In a forEach declaration .item (or its alias), .index and .value are the
// current item: translating them to self.… would read the custom resource
// instead, so migrate keeps such templates (and says why); the rest of the
// object still translates.
func TestForEachItemRootsStayLegacy(t *testing.T) {
	trSetup(t)
	ctx := toString.ctx()
	ctx.Vars = []engine.Var{{Name: engine.ChildrenVar}, {Name: engine.EachVar}, {Name: engine.IndexVar}, {Name: "region"}}
	for src, root := range map[string]string{
		"{{ .item.name }}":   "item",
		"{{ .region.name }}": "region",
		"{{ .index }}":       "index",
		"{{ .value.size }}":  "value",
	} {
		_, err := TranslateValue(src, ctx, TranslateOptions{Namespaced: true})
		var u *Untranslatable
		if !errors.As(err, &u) || !strings.HasPrefix(u.Reason, "."+root+" is the forEach item, which migrate does not translate yet") {
			t.Errorf("%s: %v", src, err)
		}
	}
	if out, err := TranslateValue("{{ .metadata.name }}", ctx, TranslateOptions{Namespaced: true}); err != nil || !strings.Contains(out, "self.metadata.name") {
		t.Errorf("the object's fields still translate: %q, %v", out, err)
	}
	// Outside a forEach nothing is an item.
	if _, err := TranslateValue("{{ .metadata.name }}", toString.ctx(), TranslateOptions{Namespaced: true}); err != nil {
		t.Error(err)
	}
}

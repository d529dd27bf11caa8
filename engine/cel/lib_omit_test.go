package cel

import (
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
)

// omit() leaves its field out (ErrAbsent, a map key dropped), takes the
// type of the other branch (checked where it lands), and is refused where
// there is no field to leave out. kro: docs concepts/rgd/04-cel-libraries.md
// ("Omit").
func TestOmit(t *testing.T) {
	b := newBackend(t, Options{})
	runValueCases(t, b, []valueCase{
		{name: "leaves the field out", src: "${self.spec.replicas > 5 ? self.spec.replicas : omit()}", expected: "integer", wantErr: engine.ErrAbsent},
		{name: "the other branch", src: "${self.spec.replicas > 1 ? self.spec.replicas : omit()}", expected: "integer", want: int64(3)},
		{name: "a map key", src: "${ {'a': self.spec.replicas, 'b': self.spec.enabled ? omit() : 2} }", expected: "intMap", want: map[string]any{"a": int64(3)}},
		{name: "typed by the other branch", src: "${self.spec.enabled ? self.spec.image : omit()}", expected: "integer",
			diags: []string{"katalog.yaml:10:20: [widget] spec.replicas: expression ${self.spec.enabled ? self.spec.image : omit()} yields string, but spec.replicas expects an integer; convert with int(self.spec.enabled ? self.spec.image : omit())"}},
		{name: "not inside text", src: "x-${self.spec.enabled ? self.spec.image : omit()}", expected: "string",
			diags: []string{"katalog.yaml:10:62: [widget] spec.replicas: omit() leaves the whole field out, not part of a string: write the field's value as one ${…}, e.g. ${cond ? 'a-' + x : omit()}"}},
		{name: "a list cannot have holes", src: "${[1, omit()]}", expected: "ints", errText: "expression ${[1, omit()]}: a list element is optional.none() or omit(); lists cannot have holes: filter the list instead"},
	})
	_, diags := b.CompileCondition("self.spec.enabled ? true : omit()", &engine.Context{Entry: "widget", Field: "operatorBox.onReconcile.deployments[0].readyWhen", Pos: testPos, Self: widget(t)})
	if got := diags.Error(); !strings.Contains(got, "katalog.yaml:10:47: [widget] operatorBox.onReconcile.deployments[0].readyWhen: omit() leaves a field out of the object a value builds; readyWhen is a condition, which has no field to leave out: write true or false") {
		t.Errorf("condition diagnostics: %s", got)
	}
}

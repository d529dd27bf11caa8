package engine_test

import (
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
)

// Sentinels read in gates, in both engines: CEL sentinels.<name> (a bool),
// legacy {{ <name> }} ("true"/"false", upstream's resolver functions:
// orkspace/orkestra pkg/template WithSentinels, and the shorthand's OR
// semantics in pkg/types/types_operatorbox.go SentinelsAllowed).
func TestSentinelGates(t *testing.T) {
	_, plan, diags := compileBody(t, `      operatorBox:
        preReconcile:
          sentinels: [generationChanged, labelsChanged]
          reconcileGate:
            when: "sentinels.generationChanged && self.spec.replicas > 0"
          enqueueGate:
            when:
              - field: "{{ labelsChanged }}"
                equals: "true"
        watch:
          - apiVersion: v1
            kind: ConfigMap
            enqueueGate:
              when: "sentinels.uidChanged || sentinels.labelsChanged && self.data.mode == 'on'"
              sentinels: [uidChanged]
`)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if !strings.Contains(diags.Error(), "22:15: warning: [app] operatorBox.watch[0].enqueueGate.sentinels: with a sentinels list the gate passes when one of them is true and its when/or are not evaluated") {
		t.Errorf("no warning that the list decides: %v", diags)
	}
	e := plan.Entries[0]
	cr := map[string]any{"spec": map[string]any{"image": "x", "replicas": int64(2)}}
	eval := func(c engine.Condition, obj map[string]any, names []string, vals map[string]bool) bool {
		t.Helper()
		s := engine.NewScope(obj)
		engine.SetSentinels(s, names, vals)
		ok, err := c.Eval(s)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !eval(e.Gate, cr, e.Sentinels, map[string]bool{"generationChanged": true}) || eval(e.Gate, cr, e.Sentinels, map[string]bool{"labelsChanged": true}) {
		t.Error("CEL reconcile gate does not follow sentinels.generationChanged")
	}
	if !eval(e.EnqueueGate, cr, e.Sentinels, map[string]bool{"labelsChanged": true}) || eval(e.EnqueueGate, cr, e.Sentinels, nil) {
		t.Error("legacy enqueue gate does not follow {{ labelsChanged }}")
	}
	g := e.Observations[0].Gate
	if strings.Join(g.Sentinels, ",") != "uidChanged,generationChanged,labelsChanged" || strings.Join(g.List, ",") != "uidChanged" {
		t.Errorf("watch gate computes %v, list %v", g.Sentinels, g.List)
	}
	cm := map[string]any{"data": map[string]any{"mode": "on"}}
	if !eval(g.When, cm, g.Sentinels, map[string]bool{"labelsChanged": true}) || eval(g.When, map[string]any{"data": map[string]any{"mode": "off"}}, g.Sentinels, map[string]bool{"labelsChanged": true}) {
		t.Error("watch gate does not read the watched object and its sentinels")
	}
	if e.ReadsManagedFields {
		t.Error("managedFields kept without managedFieldsChanged")
	}
}

func TestSentinelLoadErrors(t *testing.T) {
	cases := []struct{ name, box, want string }{
		{"CEL typo", `        preReconcile:
          sentinels: [generationChanged]
          reconcileGate:
            when: "sentinels.generationChange"
`, `undefined field 'generationChange'; did you mean generationChanged?`},
		{"CEL undeclared", `        preReconcile:
          sentinels: [generationChanged]
          reconcileGate:
            when: "sentinels.labelsChanged"
`, `undefined field 'labelsChanged'`},
		{"legacy undeclared", `        preReconcile:
          sentinels: [generationChanged]
          enqueueGate:
            when: "{{ labelsChanged }}"
`, `sentinel labelsChanged is not declared here (declared: generationChanged); add it to preReconcile.sentinels`},
		{"legacy outside a gate", `        preReconcile:
          sentinels: [generationChanged]
        status:
          fields:
            - path: phase
              value: "{{ generationChanged }}"
`, `generationChanged is a sentinel, readable only in operatorBox.preReconcile's gates and a watch's enqueueGate once declared under preReconcile.sentinels`},
		{"CEL outside a gate", `        preReconcile:
          sentinels: [generationChanged]
        status:
          fields:
            - path: phase
              value: "${string(sentinels.generationChanged)}"
`, `undeclared reference to 'sentinels'`},
		{"gate without declarations", `        preReconcile:
          reconcileGate:
            when: "sentinels.generationChanged"
`, `undeclared reference to 'sentinels'`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, diags := compileBody(t, "      operatorBox:\n"+tc.box)
			if !strings.Contains(diags.Error(), tc.want) {
				t.Errorf("diagnostics %v\nwant %q", diags, tc.want)
			}
		})
	}
}

// managedFieldsChanged needs metadata.managedFields, which the operator's
// caches drop unless something reads them (issue 29): declaring it keeps
// them.
func TestManagedFieldsSentinelKeepsManagedFields(t *testing.T) {
	_, plan, diags := compileBody(t, `      operatorBox:
        watch:
          - apiVersion: v1
            kind: ConfigMap
            enqueueGate:
              sentinels: [managedFieldsChanged]
`)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if !plan.Entries[0].ReadsManagedFields {
		t.Error("managedFieldsChanged declared but the caches would drop managedFields")
	}
}

package engine_test

import (
	"strings"
	"testing"
)

// status.conditions: status a CEL boolean over the custom resource (and
// its children), reason and message strings; types checked at load.
func TestStatusConditionsCompile(t *testing.T) {
	_, plan, diags := compileBody(t, `      operatorBox:
        status:
          conditions:
            - type: Scaled
              status: "self.spec.?replicas.orValue(0) > 1"
              reason: "${self.spec.?replicas.orValue(0) > 1 ? 'Many' : 'One'}"
              message: "${string(self.spec.?replicas.orValue(0))} replicas"
            - type: example.com/Pinned
              status: true
`)
	if diags.HasErrors() {
		t.Fatal(diags.Errors())
	}
	// The test CRD's status has no conditions: a warning says so.
	if !strings.Contains(diags.Error(), "11:15: warning: [app] operatorBox.status.conditions: the status schema of v1 has no conditions, so the API server drops them; declare status.conditions (a list of objects) in the CRD") {
		t.Errorf("diagnostics = %v", diags)
	}
	cs := plan.Entries[0].Conditions
	if len(cs) != 2 || cs[0].Type != "Scaled" || cs[0].Status == nil || cs[0].Reason == nil || cs[0].Message == nil || cs[1].Status != nil || !cs[1].Const {
		t.Fatalf("conditions = %+v", cs)
	}
}

func TestStatusConditionErrors(t *testing.T) {
	for _, tc := range []struct{ name, conds, want string }{
		{"Ready is the runtime's", `            - type: Ready
              status: "true"
`, `11:21: [app] operatorBox.status.conditions[0].type: the runtime writes the Ready condition itself (True when every child is ready: readyWhen on the children says when); give this condition another type`},
		{"a type twice", `            - {type: A, status: "true"}
            - {type: A, status: "false"}
`, `12:22: [app] operatorBox.status.conditions[1].type: condition A is already declared at 11:22; declare each type once`},
		{"an invalid type", `            - {type: "not valid", status: "true"}
`, `condition type "not valid" is not valid`},
		{"an invalid reason", `            - {type: A, status: "true", reason: "no spaces"}
`, `reason "no spaces" is not valid`},
		{"status must be a bool", `            - {type: A, status: "self.spec.image"}
`, "status must be a bool, but `self.spec.image` yields string"},
		{"status misspelt", `            - {type: A, status: "self.spec.replica > 0"}
`, `undefined field 'replica'; did you mean replicas?`},
		{"type and status are needed", `            - {type: A}
`, `a condition needs type: and status:`},
		{"upstream's false", ``, `conditions: false turns off the Ready condition in the original katalog format`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			block := "          conditions:\n" + tc.conds
			if tc.conds == "" {
				block = "          conditions: false\n"
			}
			p, _, diags := compileBody(t, "      operatorBox:\n        status:\n"+block)
			got := strings.ReplaceAll(diags.Errors().Error(), p+":", "")
			if !strings.Contains(got, tc.want) {
				t.Errorf("errors:\n%s\nwant %q", got, tc.want)
			}
		})
	}
}

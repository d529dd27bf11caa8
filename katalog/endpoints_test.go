package katalog

import (
	"strings"
	"testing"
)

// endpoints: as upstream's examples/advanced/19-endpoint-control writes it.
func TestEndpoints(t *testing.T) {
	rules := "      validation:\n        rules:\n          - field: spec.image\n            prefix: nginx\n            message: nginx only\n"
	cases := []struct {
		name, body string
		want       Endpoints
		warning    string // a warning that must be reported
		err        string // "line:col: message" of the first error
	}{
		{"absent", "", AllEndpoints, "", ""},
		{"health off", "      endpoints:\n        health: false\n", Endpoints{Info: true}, "", ""},
		{"info off", "      endpoints: {info: false}\n", Endpoints{Health: true}, "", ""},
		{"all off", "      endpoints:\n        enabled: false\n", Endpoints{}, "", ""},
		{"enabled false wins", "      endpoints: {enabled: false, health: true, info: true}\n", Endpoints{}, "", ""},
		{"enabled true", "      endpoints: {enabled: true, health: false}\n", Endpoints{Info: true}, "", ""},
		{"validation off without rules", "      endpoints: {validation: false}\n", AllEndpoints,
			"[site] endpoints.validation: validation: false turns off upstream's admission webhook for this entry; the entry declares no validation rules, so nothing changes here", ""},
		{"validation off with rules", rules + "      endpoints:\n        validation: false\n", AllEndpoints, "",
			"20:9: [site] endpoints.validation: validation: false turns off upstream's admission webhook for this entry, but this runtime enforces the entry's validation rules in the API server"},
		{"unknown key", "      endpoints: {helth: false}\n", AllEndpoints, "", `14:19: [site] endpoints.helth: unknown key "helth"; did you mean "health"?`},
		{"not a bool", "      endpoints: {health: maybe}\n", AllEndpoints, "", `14:27: [site] endpoints.health: must be true or false, got str "maybe"`},
		{"not a map", "      endpoints: [health]\n", AllEndpoints, "", "14:18: [site] endpoints: must be a map, got a list"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k, diags := Load(writeKatalog(t, header+entry+c.body))
			if c.err != "" {
				errs := diags.Errors()
				if len(errs) == 0 || !strings.Contains(errs[0].Error(), c.err) {
					t.Fatalf("errors:\n%v\nwant the first to hold %s", errs, c.err)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags.Errors())
			}
			got := k.CRDs[0].Endpoints
			got.Pos = Pos{}
			if got != c.want {
				t.Errorf("endpoints %+v, want %+v", got, c.want)
			}
			if c.warning != "" && !strings.Contains(diags.Warnings().Error(), c.warning) {
				t.Errorf("warnings:\n%v\nwant %s", diags.Warnings(), c.warning)
			}
		})
	}
}

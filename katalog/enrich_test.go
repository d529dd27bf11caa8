package katalog

import (
	"strings"
	"testing"
)

// enrich: [pods] is read; the other kinds of data upstream embeds are
// errors naming what reads the same information (upstream:
// pkg/reconciler/children.go, examples/use-cases/enrich). Entry lines
// start at line 14, column 7.
func TestEnrichDecodes(t *testing.T) {
	cases := []struct {
		name, lines string
		pods        bool
		want        []string
	}{
		{"pods", "      enrich: [pods]\n", true, nil},
		{"events are not collected", "      enrich: [pods, events]\n", true,
			[]string{`14:22: [site] enrich[1]: enrich: events is not supported by this runtime: a child's Warning events (_warnings) are not collected; read the child's status conditions instead (hasCondition, conditionReason, conditionMessage); it collects pods only (enrich: [pods])`}},
		{"an unknown kind", "      enrich: [pod]\n", false,
			[]string{`14:16: [site] enrich[0]: enrich: "pod" is not a kind of data upstream collects; this runtime collects pods (enrich: [pods]); did you mean "pods"?`}},
		{"enrichAll names the list", "      enrichAll: true\n", false,
			[]string{`14:7: [site] enrichAll: "enrichAll" is part of the original katalog format but not supported by this runtime: enrichAll collects every kind of data upstream embeds into children (pods, events, endpoints, ReplicaSets, nodes, …), and this runtime collects pods only: list enrich: [pods]`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := writeKatalog(t, header+entry+tc.lines)
			k, diags := Load(p)
			var got []string
			for _, d := range diags {
				if s := strings.TrimPrefix(d.Error(), p+":"); !strings.Contains(s, "no schema for") {
					got = append(got, s)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if k != nil && k.Entry("site") != nil && k.Entry("site").EnrichPods != tc.pods {
				t.Errorf("EnrichPods = %v, want %v", !tc.pods, tc.pods)
			}
		})
	}
}

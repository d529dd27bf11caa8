package gotmpl

import "testing"

// Upstream katalogs write dashed keys in field chains
// (examples/use-cases/profiles: .children.deployments.my-service-medium);
// they read as index calls, and nothing else changes.
func TestRewriteDashes(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{{ .metadata.labels.app-tier }}`, `{{ (index .metadata.labels "app-tier") }}`},
		{`{{ allReplicasReady .children.deployments.my-service-medium }}`, `{{ allReplicasReady (index .children.deployments "my-service-medium") }}`},
		{`{{ .a.b-c.d-e.f }}`, `{{ (index (index .a "b-c") "d-e").f }}`},
		{`{{ .app-tier }}`, `{{ (index . "app-tier") }}`},
		{`{{ $x := .spec }}{{ $x.a-b.c }}`, `{{ $x := .spec }}{{ (index $x "a-b").c }}`},
		{`{{ .metadata.labels.app-tier | default "web" }}`, `{{ (index .metadata.labels "app-tier") | default "web" }}`},
		// Unchanged: quoted text, text outside actions, trim markers,
		// negative numbers, chains without dashes.
		{`{{ printf "a.b-c %s" .x }}`, `{{ printf "a.b-c %s" .x }}`},
		{`x.y-z {{ .a }}`, `x.y-z {{ .a }}`},
		{`{{- .a -}}`, `{{- .a -}}`},
		{`{{ add .a -1 }}`, `{{ add .a -1 }}`},
		{"{{ `a.b-c` }}", "{{ `a.b-c` }}"},
		{`{{ .a.b }}-{{ .c }}`, `{{ .a.b }}-{{ .c }}`},
	}
	for _, tc := range cases {
		if got := rewriteDashes(tc.in); got != tc.want {
			t.Errorf("rewriteDashes(%s)\n got %s\nwant %s", tc.in, got, tc.want)
		}
		if _, err := Parse(tc.in); err != nil && tc.in != tc.want {
			t.Errorf("Parse(%s): %v", tc.in, err)
		}
	}
}

package engine_test

import (
	"strings"
	"testing"
)

// A status field whose template calls a function with the wrong number of
// arguments (upstream's registry-guide/01-motifs/web-service motif:
// {{ containerImage .children.deployment }}, where pkg/note's containerImage
// takes the object and a container index): upstream's engine failed the
// call on every reconcile and skipped that field, writing the others
// (pkg/template/resolver_status.go). Here the field is left out at load,
// with a warning; where upstream would have written something after all
// (clearOnFalse), or anywhere a failure is not skipped, it stays an error.
func TestStatusFieldThatAlwaysFails(t *testing.T) {
	const call = `"{{ containerImage .children.deployment }}"`
	box := `      operatorBox:
        onReconcile:
          deployments:
            - name: "{{ .metadata.name }}"
              image: "{{ .spec.image }}"
        status:
          fields:
            - path: phase
              value: ` + call + `
            - path: phase
              value: Running
              when:
                - field: spec.tier
                  equals: pro
`
	p, plan, diags := compileBody(t, box)
	if diags.HasErrors() {
		t.Fatalf("compile:\n%v", diags.Errors())
	}
	want := p + ":16:26: warning: [app] operatorBox.status.fields[0].value: containerImage takes 2 arguments, got 1: the call fails on every evaluation, as it did upstream, which never wrote this value; it is not written here either — call containerImage with 2 arguments"
	if got := diags.Warnings().Error(); !strings.Contains(got, want) {
		t.Fatalf("warnings:\n%s\nwant\n%s", got, want)
	}
	fields := plan.Entries[0].Status
	if len(fields) != 1 || fields[0].Value.Literal != "Running" {
		t.Fatalf("status fields %v, want only phase: Running (when tier is pro)", fields)
	}

	for _, c := range []struct{ name, body string }{
		{"clearOnFalse writes when its condition fails", strings.Replace(box, "              value: "+call+"\n", "              value: "+call+"\n              clearOnFalse: true\n              when:\n                - field: spec.tier\n                  equals: free\n", 1)},
		{"a child's field", strings.Replace(box, `image: "{{ .spec.image }}"`, "image: "+call, 1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, diags := compileBody(t, c.body)
			if got := diags.Errors().Error(); !strings.Contains(got, "containerImage takes 2 arguments, got 1") {
				t.Fatalf("errors:\n%s\nwant the arity error", got)
			}
		})
	}
}

package engine_test

import (
	"strings"
	"testing"
)

// Regression: two custom children of one custom resource, both without a
// name, became <cr>-custom — one object overwritten by the other on every
// reconcile, silently. Upstream requires metadata.name on custom children
// (pkg/types/custom_resource.go); here a provable collision is a load error.
func TestTwoCustomChildrenWithTheDefaultNameCollide(t *testing.T) {
	p, _, diags := compileBody(t, `      operatorBox:
        onReconcile:
          custom:
            - apiVersion: example.io/v1
              kind: Cache
              spec: {size: 1}
            - apiVersion: example.io/v1
              kind: Cache
              spec: {size: 2}
`)
	got := strings.ReplaceAll(diags.Errors().Error(), p, "k.yaml")
	want := "k.yaml:14:15: [app] operatorBox.onReconcile.custom[1]: names the same object as operatorBox.onReconcile.custom[0] (k.yaml:11:15): both are unconditional and have the same default name <cr>-custom and namespace, so each reconcile would overwrite one with the other; give each its own name"
	if got != want {
		t.Errorf("errors:\n%s\nwant:\n%s", got, want)
	}
}

func TestCollisionsProvableAtLoad(t *testing.T) {
	for _, tc := range []struct {
		name, hook string
		want       bool
	}{
		{"same literal name", `            - {name: web, image: x}
            - {name: web, image: y}
`, true},
		{"same expression", `            - {name: "${self.metadata.name}-web", image: x}
            - {name: "${self.metadata.name}-web", image: y}
`, true},
		{"different names", `            - {name: web, image: x}
            - {name: api, image: y}
`, false},
		{"same name, other namespace", `            - {name: web, image: x}
            - {name: web, namespace: other, image: y}
`, false},
		{"exclusive conditions are checked when reconciling", `            - {name: web, image: x, when: "self.spec.replicas > 1"}
            - {name: web, image: y, when: "self.spec.replicas <= 1"}
`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, diags := compileBody(t, "      operatorBox:\n        onReconcile:\n          deployments:\n"+tc.hook)
			got := strings.Contains(diags.Errors().Error(), "names the same object")
			if got != tc.want {
				t.Errorf("collision reported: %v, want %v\n%v", got, tc.want, diags)
			}
		})
	}
	// One object declared under onCreate and onReconcile is one child
	// declared twice (upstream's reconcile: true shorthand), not a collision.
	_, _, diags := compileBody(t, `      operatorBox:
        onCreate:
          configMaps:
            - {name: cfg, data: {a: b}}
        onReconcile:
          configMaps:
            - {name: cfg, data: {a: b}}
`)
	if diags.HasErrors() {
		t.Errorf("onCreate and onReconcile of one object: %v", diags)
	}
}

package engine_test

import (
	"strings"
	"testing"
)

// readyWhen is CEL over the observed child, typed by its kind's schema
// (Kubernetes' for built-in kinds, the katalog's CRD for a custom kind it
// serves); a forEach child's item is readable; dependsOn orders the
// declarations in waves. kro: website/docs/docs/concepts/rgd/
// 02-resource-definitions/03-readiness.md.
func TestReadyWhenCompiles(t *testing.T) {
	_, plan, diags := compileBody(t, `      operatorBox:
        onReconcile:
          deployments:
            - id: web
              image: "${self.spec.image}"
              readyWhen:
                - "self.status.?readyReplicas.orValue(0) == self.spec.replicas"
                - "{{ allReplicasReady . }}"
            - id: workers
              name: "${self.metadata.name}-${each.name}"
              image: x
              forEach: {field: spec.regions}
              readyWhen: "self.status.?availableReplicas.orValue(0) >= each.?replicas.orValue(1)"
              dependsOn: [web]
          custom:
            - id: peer
              apiVersion: test.orkestra.io/v1
              kind: App
              name: "${self.metadata.name}-peer"
              spec: {image: x}
              readyWhen: "self.status.?phase.orValue('') == 'Ready'"
              dependsOn: {workers: created}
          configMaps:
            - name: cfg
              data: {a: b}
`)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e := plan.Entries[0]
	waves := map[string]int{}
	for _, r := range e.Hooks["onReconcile"] {
		waves[r.Kind.Key+"/"+r.Source.ID] = r.Wave
		if (r.Source.ID != "") != (r.ReadyWhen != nil) {
			t.Errorf("%s: readyWhen %v", r.Source.ID, r.ReadyWhen)
		}
	}
	if waves["deployments/web"] != 0 || waves["deployments/workers"] != 1 || waves["custom/peer"] != 2 || waves["configMaps/"] != 0 || !e.Ordered {
		t.Errorf("waves = %v, ordered %v", waves, e.Ordered)
	}
}

func TestReadyWhenErrors(t *testing.T) {
	for _, tc := range []struct{ name, decl, want string }{
		{"a Deployment's status field misspelt", `          deployments:
            - image: x
              readyWhen: "self.status.readyReplica > 0"
`, `12:39: [app] operatorBox.onReconcile.deployments[0].readyWhen: readyWhen ` + "`self.status.readyReplica > 0`" + `: undefined field 'readyReplica'; did you mean readyReplicas?`},
		{"a custom child typed by its CRD", `          custom:
            - apiVersion: test.orkestra.io/v1
              kind: App
              name: x
              readyWhen: "self.status.phas == 'Ready'"
`, `undefined field 'phas'; did you mean phase?`},
		{"must be a bool", `          deployments:
            - image: x
              readyWhen: "self.status.readyReplicas"
`, `readyWhen must be a bool, but ` + "`self.status.readyReplicas`" + ` yields int`},
		{"self is the child, not the custom resource", `          deployments:
            - image: x
              readyWhen: "self.spec.image == 'x'"
`, `undefined field 'image'`},
		{"children are not in scope", `          deployments:
            - image: x
              readyWhen: "size(children.deployments) > 0"
`, `undeclared reference to 'children'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _, diags := compileBody(t, "      operatorBox:\n        onReconcile:\n"+tc.decl)
			got := strings.ReplaceAll(diags.Errors().Error(), p+":", "")
			if !strings.Contains(got, tc.want) {
				t.Errorf("errors:\n%s\nwant %q", got, tc.want)
			}
		})
	}
}

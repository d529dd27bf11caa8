package katalog

import (
	"strings"
	"testing"
)

// prune: and reconcile: that cannot be read are load errors with their
// position; prune does not apply to onDelete; reconcile: false under
// onReconcile warns where the original runtime would behave otherwise (it
// reads the key as a plain boolean, false the same as absent:
// iAlexeze/orkestra pkg/runners/docs/01-runner-contract.md, section B6).
func TestModeKeyDiagnostics(t *testing.T) {
	for _, tc := range []struct {
		name, box string
		want      []string
	}{
		{"declaration prune not a boolean", `
onReconcile:
  configMaps:
    - name: a
      data: {a: b}
      prune: sometimes
`, []string{"19:22: [site] operatorBox.onReconcile.configMaps[0].prune: must be true or false, got str \"sometimes\""}},
		{"hook prune a list", `
onCreate:
  prune: [true]
  configMaps:
    - name: a
`, []string{"16:18: [site] operatorBox.onCreate.prune: must be true or false, got a list"}},
		{"operatorBox prune a number", `
prune: 1
onCreate:
  configMaps:
    - name: a
`, []string{"15:16: [site] operatorBox.prune: must be true or false, got int \"1\""}},
		{"prune on onDelete", `
onDelete:
  prune: true
  configMaps:
    - name: a
      data: {a: b}
      prune: false
`, []string{
			"16:18: [site] operatorBox.onDelete.prune: prune applies to onCreate and onReconcile children; onDelete children are created while the custom resource is deleted and go with it: remove prune here",
			"20:22: [site] operatorBox.onDelete.configMaps[0].prune: prune applies to onCreate and onReconcile children; onDelete children are created while the custom resource is deleted and go with it: remove prune here",
		}},
		{"reconcile not a boolean", `
onCreate:
  configMaps:
    - name: a
      reconcile: always
`, []string{"18:26: [site] operatorBox.onCreate.configMaps[0].reconcile: must be true or false, got str \"always\""}},
		{"reconcile false under onReconcile warns", `
onReconcile:
  configMaps:
    - name: a
      reconcile: false
  jobs:
    - name: j
      image: busybox
      reconcile: false
`, []string{"18:26: warning: [site] operatorBox.onReconcile.configMaps[0].reconcile: reconcile: false under onReconcile: the object is created once and never updated (as under onCreate), and stays when its condition stops holding unless prune: true; the original Orkestra ignores reconcile: false under onReconcile and keeps updating it — declare it under onCreate to mean the same in both"}},
		{"prune under the reconciler block is not a key", `
reconciler:
  prune: true
`, []string{"16:11: [site] operatorBox.reconciler.prune: unknown key \"prune\"; allowed keys: default, imports, onCreate, onDelete, onReconcile, profile, queue, resync, workers"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, diags := loadBox(t, tc.box)
			wantDiags(t, diags, tc.want...)
		})
	}
}

// The modes each declaration loads with: the original runtime's defaults
// (iAlexeze/orkestra pkg/runners/docs/01-runner-contract.md B4: a
// drift-corrected child — onReconcile, or onCreate with reconcile: true — is
// deleted when its condition fails; pkg/runners/jobs.go: a Job never is;
// pkg/reconciler/docs/05-foreach.md: forEach only expands the current items,
// so nothing prunes the children of items that are gone), and prune: on the
// declaration, its hook or operatorBox, the nearest winning.
func TestModesOf(t *testing.T) {
	type modes struct{ reconcile, prune, items bool }
	for _, tc := range []struct {
		name, box string
		want      modes
		from      string // the prune: key that decided ("" the default)
	}{
		{"onCreate", "onCreate:\n  configMaps:\n    - name: a\n", modes{}, ""},
		{"onCreate reconcile: true", "onCreate:\n  configMaps:\n    - name: a\n      reconcile: true\n", modes{true, true, false}, ""},
		{"onReconcile", "onReconcile:\n  deployments:\n    - name: a\n      image: x\n", modes{true, true, false}, ""},
		{"onReconcile reconcile: false", "onReconcile:\n  deployments:\n    - name: a\n      image: x\n      reconcile: false\n", modes{}, ""},
		{"onReconcile job", "onReconcile:\n  jobs:\n    - name: a\n      image: x\n", modes{true, false, false}, ""},
		{"job prune: true", "onReconcile:\n  jobs:\n    - name: a\n      image: x\n      prune: true\n", modes{true, true, true}, "operatorBox.onReconcile.jobs[0].prune"},
		{"hook prune: false", "onReconcile:\n  prune: false\n  deployments:\n    - name: a\n      image: x\n", modes{true, false, false}, "operatorBox.onReconcile.prune"},
		{"operatorBox prune: true", "prune: true\nonCreate:\n  configMaps:\n    - name: a\n", modes{false, true, true}, "operatorBox.prune"},
		{"hook over operatorBox", "prune: true\nonCreate:\n  prune: false\n  configMaps:\n    - name: a\n", modes{}, "operatorBox.onCreate.prune"},
		{"declaration over hook", "prune: false\nonCreate:\n  prune: false\n  configMaps:\n    - name: a\n      prune: true\n", modes{false, true, true}, "operatorBox.onCreate.configMaps[0].prune"},
		{"the newest layout's hooks", "reconcile:\n  onReconcile:\n    prune: true\n    configMaps:\n      - name: a\n", modes{true, true, true}, "operatorBox.reconcile.onReconcile.prune"},
		{"onDelete", "onDelete:\n  configMaps:\n    - name: a\n      data: {a: b}\n      reconcile: true\n", modes{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, _, diags := loadBox(t, tc.box)
			if k == nil || k.CRDs[0].Box == nil {
				t.Fatalf("not loaded: %v", diags)
			}
			for _, d := range diags {
				if !strings.Contains(d, "warning:") {
					t.Errorf("error: %s", d)
				}
			}
			box := k.CRDs[0].Box
			var r *Resource
			for _, h := range Hooks {
				if box.Hooks[h] != nil {
					r = box.Hooks[h].Resources[0]
				}
			}
			m := box.ModesOf(r)
			if got := (modes{m.Reconcile, m.Prune, m.PruneItems}); got != tc.want {
				t.Errorf("modes %+v, want %+v", got, tc.want)
			}
			from := ""
			if m.PruneFrom != nil {
				from = m.PruneFrom.Field
				if m.PruneFrom.Pos.Line == 0 {
					t.Errorf("prune: key without a position: %+v", m.PruneFrom)
				}
			}
			if from != tc.from {
				t.Errorf("pruneFrom %q, want %q", from, tc.from)
			}
		})
	}
}

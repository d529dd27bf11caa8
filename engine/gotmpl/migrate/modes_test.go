package migrate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/katalog"
)

// prune: (on a declaration, a hook and operatorBox) and reconcile: false are
// control keys, not templates: migrate leaves their lines as written, and
// the migrated katalog loads with the same modes.
func TestMigrateKeepsModes(t *testing.T) {
	dir := copyDir(t, example)
	src := webappKatalog("modes") + `      operatorBox:
        prune: false   # the entry's default
        onCreate:
          prune: true
          configMaps:
            - name: "{{ .metadata.name }}-plan"
              data: {image: "{{ .spec.image }}"}
              when:
                - field: spec.replicas
                  greaterThan: "1"
              reconcile: false
        onReconcile:
          jobs:
            - name: "{{ .metadata.name }}-build"
              image: "{{ .spec.image }}"
              when:
                - field: status.phase
                  operator: notExists
              reconcile: false   # create once — Job is terminal
              prune: true
          deployments:
            - name: "{{ .metadata.name }}"
              image: "{{ .spec.image }}"
`
	res := migrateText(t, dir, src, 20)
	if !res.Equivalent() || len(res.Left) > 0 {
		t.Fatalf("mismatches %v, left %v", res.Mismatches, res.Left)
	}
	got := string(res.Files[0].Migrated)
	if strings.Contains(got, "{{") {
		t.Fatalf("not migrated:\n%s", got)
	}
	for _, line := range strings.Split(src, "\n") {
		if k := strings.TrimSpace(line); strings.HasPrefix(k, "prune:") || strings.HasPrefix(k, "reconcile:") {
			if !strings.Contains(got, line+"\n") {
				t.Errorf("the line %q is not in the migrated katalog:\n%s", line, got)
			}
		}
	}

	modes := func(text string) []katalog.Modes {
		p := filepath.Join(dir, "check.yaml")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		k, diags := katalog.Load(p)
		if diags.HasErrors() {
			t.Fatalf("loading:\n%v", diags.Errors())
		}
		box := k.CRDs[0].Box
		var out []katalog.Modes
		for _, h := range katalog.Hooks {
			if box.Hooks[h] == nil {
				continue
			}
			for _, r := range box.Hooks[h].Resources {
				m := box.ModesOf(r)
				m.ReconcileFrom, m.PruneFrom = nil, nil // positions move with the text
				out = append(out, m)
			}
		}
		return out
	}
	before, after := modes(src), modes(got)
	want := []katalog.Modes{{Prune: true, PruneItems: true}, {Reconcile: true}, {Prune: true, PruneItems: true}}
	if len(before) != 3 || before[0] != want[0] || before[1] != want[1] || before[2] != want[2] {
		t.Errorf("the original loads with %+v, want %+v", before, want)
	}
	if len(after) != len(before) {
		t.Fatalf("migrated: %d declarations, original %d", len(after), len(before))
	}
	for i := range before {
		if after[i] != before[i] {
			t.Errorf("declaration %d: migrated %+v, original %+v", i, after[i], before[i])
		}
	}
}

package migrate

import (
	"strings"
	"testing"
)

// A function of upstream's catalog that this runtime gained is migrated to
// its CEL counterpart (proven equivalent like every translation), or kept
// with the reason in the report: never dropped.
func TestMigrateCatalogFunctions(t *testing.T) {
	dir := copyDir(t, example)
	src := webappKatalog("catalog") + `      operatorBox:
        onCreate:
          configMaps:
            - name: "{{ .metadata.name }}"
              data:
                slug: "{{ slugify .spec.environment }}"
                hash: "config-{{ sha256sum .metadata.name }}"
                team: "{{ getLabel . \"team\" }}"
                list: "{{ toList .spec.environment }}"
`
	res := migrateText(t, dir, src, 40)
	if len(res.Translated) != 4 || len(res.Left) != 1 || !res.Equivalent() || len(res.Check) > 0 {
		t.Fatalf("translated %d, left %d, mismatches %v, check %v", len(res.Translated), len(res.Left), res.Mismatches, res.Check)
	}
	var b strings.Builder
	res.WriteReport(&b)
	if want := "operatorBox.onCreate.configMaps[0].data.list: toList has no exact CEL equivalent: the legacy engine prints a list as Go does"; !strings.Contains(b.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, b.String())
	}
	got := string(res.Files[0].Migrated)
	for _, want := range []string{`slug: "${slugify(self.spec.environment)}"`, `hash: "config-${sha256sum(self.metadata.name)}"`,
		`team: "${getLabel(self, 'team').trim()}"`, `list: "{{ toList .spec.environment }}"`} {
		if !strings.Contains(got, want) {
			t.Errorf("migrated katalog lacks %s:\n%s", want, got)
		}
	}
}

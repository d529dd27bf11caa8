package migrate

import (
	"os"
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/katalog"
)

// Issue 25: the rest of upstream's language survives migrate. Profiles stay
// as written (a literal name is no template); a profile named by a template
// is translated like any other template and the migrated katalog picks the
// same profiles; the new resource kinds' templates translate; dashed keys in
// field chains translate to CEL index expressions.
func TestMigrateProfilesKindsAndDashes(t *testing.T) {
	dir := copyDir(t, example)
	src := "profiles:\n  resourceQuotas:\n    - name: team\n      hard: {pods: \"5\"}\n" + webappKatalog("lang") + `      operatorBox:
        reconciler:
          profile: conservative
        onReconcile:
          deployments:
            - name: "{{ .metadata.name }}"
              image: "{{ .spec.image }}"
              port: "{{ .spec.port }}"
              resources: {profile: small}
              probes:
                readiness: {type: http, path: /ready, profile: fast}
          resourceQuotas:
            - name: "{{ .metadata.name }}-quota"
              profile: "{{ .spec.environment }}"
          pdb:
            - name: "{{ .metadata.name }}-pdb"
              behavior: {profile: rolling}
          roleBindings:
            - name: "{{ .metadata.name }}-rb"
              roleRef: {name: "{{ .metadata.name }}-role"}
              subjects: [{kind: ServiceAccount, name: "{{ .metadata.name }}"}]
        status:
          fields:
            - path: phase
              value: "{{ .metadata.labels.app-tier }}"
`
	res := migrateText(t, dir, src, 20)
	if !res.Equivalent() || len(res.Check) > 0 {
		t.Fatalf("mismatches %v, check %v", res.Mismatches, res.Check)
	}
	got := string(res.Files[0].Migrated)
	for _, want := range []string{
		"profile: conservative",
		"resources: {profile: small}",
		"readiness: {type: http, path: /ready, profile: fast}",
		"behavior: {profile: rolling}",
		`profile: "${self.spec.?environment.optMap(v, v.trim())}"`,
		`roleRef: {name: "${self.metadata.name}-role"}`,
		`name: "${self.metadata.name}-pdb"`,
		`value: "${self.metadata.labels[?'app-tier'].orValue('')}"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the migrated katalog lacks %s:\n%s", want, got)
		}
	}
	// The workload's port is also the probe's (the probe shorthand copies
	// it), read in two places with two types: it stays a template.
	var left bool
	for _, it := range res.Left {
		left = left || it.Legacy == "{{ .spec.port }}"
	}
	if !left || !strings.Contains(got, `port: "{{ .spec.port }}"`) {
		t.Errorf("the shared port should stay legacy and be listed: left %v", res.Left)
	}
	// The migrated katalog loads.
	if err := os.WriteFile(res.Files[0].Path, res.Files[0].Migrated, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, diags := katalog.Load(res.Files[0].Path); diags.HasErrors() {
		t.Fatal(diags.Errors())
	}
}

// A motif's inputs survive migrate: the import's with: values translate
// like any value (they read the custom resource), the motif's templates
// keep reading .inputs, and the migrated katalog loads and renders the same.
func TestMigrateMotifInputs(t *testing.T) {
	dir := copyDir(t, example)
	motif := "apiVersion: orkestra.orkspace.io/v1\nkind: Motif\nmetadata: {name: web}\ninputs:\n  - {name: image, required: true}\n  - {name: replicas, type: integer, default: 1}\nresources:\n  deployments:\n    - name: \"{{ .metadata.name }}-web\"\n      image: '{{ index .inputs \"image\" }}'\n      replicas: \"${inputs.replicas}\"\n"
	if err := os.WriteFile(dir+"/motif.yaml", []byte(motif), 0o644); err != nil {
		t.Fatal(err)
	}
	src := webappKatalog("inputs") + `      imports:
        - motif: ./motif.yaml
          with:
            image: "{{ .spec.image }}"
            replicas: "{{ .spec.replicas }}"
      operatorBox:
        onReconcile: {}
`
	res := migrateText(t, dir, src, 20)
	if !res.Equivalent() || len(res.Check) > 0 {
		t.Fatalf("mismatches %v, check %v", res.Mismatches, res.Check)
	}
	got := string(res.Files[0].Migrated)
	for _, want := range []string{`image: "${self.spec.image.trim()}"`, `replicas: "${optional.of(self.spec.replicas)}"`} {
		if !strings.Contains(got, want) {
			t.Errorf("the migrated katalog lacks %s:\n%s", want, got)
		}
	}
	var motifLeft bool
	for _, it := range res.Left {
		motifLeft = motifLeft || strings.HasSuffix(it.Pos.File, "motif.yaml") && strings.Contains(it.Reason, "a file the katalog includes (a motif or an include: fragment), which migrate does not rewrite")
	}
	if !motifLeft {
		t.Errorf("the motif's template should be left, saying why: %v", res.Left)
	}
	if err := os.WriteFile(res.Files[0].Path, res.Files[0].Migrated, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, diags := katalog.Load(res.Files[0].Path); diags.HasErrors() {
		t.Fatal(diags.Errors())
	}
}

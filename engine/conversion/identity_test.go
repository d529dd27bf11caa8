package conversion

import (
	"sort"
	"strings"
	"testing"

	celgo "github.com/google/cel-go/cel"

	"github.com/orkspace/orkestra-cel/engine"
	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/gotmpl"
	"github.com/orkspace/orkestra-cel/katalog"
)

func TestIdentityLeavesOfWebsite(t *testing.T) {
	k, diags := katalog.Load("../../examples/website/katalog.yaml")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cel, err := celengine.New(celengine.Options{Libraries: []celgo.EnvOption{gotmpl.CELLibrary()}})
	if err != nil {
		t.Fatal(err)
	}
	plan, cdiags := engine.Compile(k, engine.Backends{CEL: cel, Legacy: gotmpl.New(cel)}, engine.CompileOptions{})
	if cdiags.HasErrors() {
		t.Fatal(cdiags)
	}
	var got []string
	for n := range identityLeaves(plan) {
		got = append(got, n.Field)
	}
	sort.Strings(got)
	// Every plain copy is an identity both ways; the literals (seo.enabled,
	// theme) are not.
	want := []string{
		"conversion.paths[0].spec.image", "conversion.paths[0].spec.port", "conversion.paths[0].spec.replicas", "conversion.paths[0].spec.tier",
		"conversion.paths[1].spec.image", "conversion.paths[1].spec.port", "conversion.paths[1].spec.replicas", "conversion.paths[1].spec.tier",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("identity leaves:\n got %v\nwant %v", got, want)
	}
}

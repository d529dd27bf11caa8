package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// badKatalog has one error and one warning.
func badKatalog(t *testing.T) string {
	t.Helper()
	_, write := websiteDir(t)
	body := "apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nspec:\n  crds:\n    site:\n      crdFile: ./crd.yaml\n      apiTypes: {version: v1}\n      operatorBox:\n        onCreate:\n          configMaps:\n            - data: {a: \"${self.spec.imag}\"}\n"
	return write("k.yaml", body)
}

// check --format sarif is a valid SARIF 2.1.0 log (validated against the
// OASIS schema) with the finding at its position and rule.
func TestCheckSARIF(t *testing.T) {
	k := badKatalog(t)
	out, _, code := run(t, "", "check", "-f", k, "--format", "sarif")
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	c := jsonschema.NewCompiler()
	schema, err := c.Compile("testdata/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(doc); err != nil {
		t.Fatalf("not SARIF 2.1.0: %v\n%s", err, out)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID    string `json:"ruleId"`
				Level     string `json:"level"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string } `json:"artifactLocation"`
						Region           struct{ StartLine, StartColumn int }
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	var errs int
	for _, r := range log.Runs[0].Results {
		if r.Level == "error" {
			errs++
			loc := r.Locations[0].PhysicalLocation
			if r.RuleID != "orkestra/reconcile" || loc.Region.StartLine != 11 || loc.Region.StartColumn != 38 || !strings.HasSuffix(loc.ArtifactLocation.URI, "/k.yaml") {
				t.Fatalf("error result %+v", r)
			}
		}
	}
	if errs != 1 {
		t.Fatalf("%d errors in %s", errs, out)
	}
	// A document that is not SARIF is refused by the same schema.
	bad, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"version": "2.0.0", "runs": []}`))
	if schema.Validate(bad) == nil {
		t.Fatal("the schema accepted version 2.0.0")
	}
}

func TestCheckJSONAndGitHub(t *testing.T) {
	k := badKatalog(t)
	out, _, code := run(t, "", "check", "-f", k, "--format", "json")
	var res struct {
		OK       bool
		Findings []finding
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 1 || res.OK {
		t.Fatalf("exit %d, %v: %s", code, err, out)
	}
	var e *finding
	for i := range res.Findings {
		if res.Findings[i].Severity == "error" {
			e = &res.Findings[i]
		}
	}
	if e == nil || e.Line != 11 || e.Column != 38 || e.Entry != "site" || e.Rule != "orkestra/reconcile" || !strings.Contains(e.Message, "did you mean image") {
		t.Fatalf("findings %+v", res.Findings)
	}
	out, _, _ = run(t, "", "check", "-f", k, "--format", "github")
	if !strings.Contains(out, "::error file="+k+",line=11,col=38,title=orkestra/reconcile::[site] operatorBox.onCreate.configMaps[0].data.a: ") {
		t.Fatalf("annotations:\n%s", out)
	}
	if _, errOut, code := run(t, "", "check", "-f", k, "--format", "xml"); code != 1 || !strings.Contains(errOut, `--format "xml": use one of text, json, sarif, github`) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// Properties and data of workflow commands are escaped.
func TestGitHubEscaping(t *testing.T) {
	if got := ghProp("a:b,c%\n"); got != "a%3Ab%2Cc%25%0A" {
		t.Fatal(got)
	}
	if got := ghData("50%\r\nx"); got != "50%25%0D%0Ax" {
		t.Fatal(got)
	}
}

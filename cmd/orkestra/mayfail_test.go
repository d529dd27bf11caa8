package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	mayFailKatalog        = "../../conformance/testdata/mayfail/katalog.yaml"
	unacknowledgedKatalog = "../../conformance/testdata/mayfail/unacknowledged.yaml"
	mayFailReason         = "v1 takes free text: a tier that is not a label value, an endpoint without a name, a priority that is not an integer or a timeout that is not a duration has no v2 spelling"
)

// check --strict lists an acknowledged path's findings, exits 0 and counts
// them; the same conversion unacknowledged is an error.
func TestCheckAcknowledged(t *testing.T) {
	out, errOut, code := run(t, "", "check", "--strict", "-f", mayFailKatalog)
	want := "ok: " + mayFailKatalog + " — 2 entries, 8 expressions, 2 conversion paths; 1 conversion path may fail (mayFail), 5 acknowledged findings\n"
	if code != 0 || out != want {
		t.Fatalf("exit %d, stdout %q\nwant %q", code, out, want)
	}
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	for i, field := range []string{"26:81: acknowledged: [gadget-v1] conversion.paths[0].spec.endpoints", "26:91: acknowledged: [gadget-v1] conversion.paths[0].spec.endpoints", "27:58: acknowledged: [gadget-v1] conversion.paths[0].spec.priority", "28:63: acknowledged: [gadget-v1] conversion.paths[0].spec.timeoutSeconds", "31:26: acknowledged: [gadget-v1] conversion.paths[0].metadata.labels.tier"} {
		if len(lines) != 5 || !strings.HasPrefix(lines[i], mayFailKatalog+":"+field+": ") || !strings.HasSuffix(lines[i], `(mayFail: "`+mayFailReason+`")`) {
			t.Errorf("stderr line %d: want %s…(mayFail: …); stderr:\n%s", i+1, field, errOut)
		}
	}
	if _, errOut, code := run(t, "", "check", "--strict", "-f", unacknowledgedKatalog); code != 1 || !strings.Contains(errOut, "[gadget-v1] conversion.paths[0].metadata.labels.tier: expression ${self.spec.?tier} can fail on objects v1 accepts") || strings.Contains(errOut, "acknowledged:") {
		t.Errorf("unacknowledged: exit %d, stderr %s", code, errOut)
	}
	// Other commands do not repeat what the katalog acknowledged.
	if _, errOut, code := run(t, "", "explain", "-f", mayFailKatalog); code != 0 || errOut != "" {
		t.Errorf("explain: exit %d, stderr %q", code, errOut)
	}
}

// The machine-readable formats carry the acknowledgement: json as a
// severity with the reason, SARIF as an in-source suppression with its
// justification, GitHub as a notice.
func TestCheckAcknowledgedFormats(t *testing.T) {
	out, _, code := run(t, "", "check", "--strict", "--format", "json", "-f", mayFailKatalog)
	var doc struct {
		OK       bool      `json:"ok"`
		Findings []finding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 || !doc.OK || len(doc.Findings) != 5 {
		t.Fatalf("json: exit %d, %v: %s", code, err, out)
	}
	for _, f := range doc.Findings {
		if f.Severity != "acknowledged" || f.Reason != mayFailReason || f.Rule != "orkestra/conversion" {
			t.Errorf("json finding %+v", f)
		}
	}
	out, _, _ = run(t, "", "check", "--strict", "--format", "sarif", "-f", mayFailKatalog)
	var log struct {
		Runs []struct {
			Results []struct {
				Level        string `json:"level"`
				Suppressions []struct {
					Kind, Justification string
				} `json:"suppressions"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil || len(log.Runs) != 1 || len(log.Runs[0].Results) != 5 {
		t.Fatalf("sarif: %v: %s", err, out)
	}
	for _, r := range log.Runs[0].Results {
		if r.Level != "note" || len(r.Suppressions) != 1 || r.Suppressions[0].Kind != "inSource" || r.Suppressions[0].Justification != mayFailReason {
			t.Errorf("sarif result %+v", r)
		}
	}
	out, _, _ = run(t, "", "check", "--strict", "--format", "github", "-f", mayFailKatalog)
	if strings.Count(out, "::notice file="+mayFailKatalog) != 5 || strings.Contains(out, "::error") {
		t.Errorf("github:\n%s", out)
	}
}

// A mayFail on a path that cannot fail is a warning, an error under
// --strict.
func TestCheckMayFailWithoutFindings(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"crd.yaml", "katalog.yaml"} {
		data, err := os.ReadFile(filepath.Join(filepath.Dir(mayFailKatalog), f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "katalog.yaml" {
			data = []byte(strings.Replace(string(data), "          - from: v2\n            to: v1\n", "          - from: v2\n            to: v1\n            mayFail: just in case\n", 1))
		}
		writeTestFile(t, filepath.Join(dir, f), data)
	}
	k := filepath.Join(dir, "katalog.yaml")
	want := k + ":34:22: warning: [gadget-v1] conversion.paths[1].mayFail: the path from v2 to v1 declares mayFail, but none of its expressions can fail on an object the v2 schema accepts (check --strict finds nothing to acknowledge); remove mayFail, so that a failure a later edit brings in is reported"
	_, errOut, code := run(t, "", "check", "-f", k)
	if code != 0 || !strings.Contains(errOut, want) {
		t.Errorf("check: exit %d, stderr %s\nwant %s", code, errOut, want)
	}
	_, errOut, code = run(t, "", "check", "--strict", "-f", k)
	if code != 1 || !strings.Contains(errOut, strings.Replace(want, "warning: ", "", 1)) {
		t.Errorf("check --strict: exit %d, stderr %s", code, errOut)
	}
}

func writeTestFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A conversion that fails says whether its path was acknowledged.
func TestConvertSaysWhetherAcknowledged(t *testing.T) {
	gadget := "apiVersion: conformance.orkestra.io/v1\nkind: Gadget\nmetadata: {name: g, namespace: ns}\nspec: {priority: high, tier: Not a label!}\n"
	_, errOut, code := run(t, gadget, "convert", "-f", mayFailKatalog, "--to", "v2")
	if code == 0 || !strings.Contains(errOut, `converting Gadget ns/g from v1 to v2: path v1→v2 failed (acknowledged: mayFail "`+mayFailReason+`"): conversion.paths[0].spec.priority`) {
		t.Errorf("acknowledged: exit %d, stderr %s", code, errOut)
	}
	_, errOut, code = run(t, gadget, "convert", "-f", unacknowledgedKatalog, "--to", "v2")
	if code == 0 || !strings.Contains(errOut, `converting Gadget ns/g from v1 to v2: path v1→v2 failed (not acknowledged: the path has no mayFail): conversion.paths[0].metadata.labels.tier`) {
		t.Errorf("unacknowledged: exit %d, stderr %s", code, errOut)
	}
}

// conformance fails on a finding and runs the other groups all the same;
// the JUnit file lists every group. With the path acknowledged it passes
// and says what it left out.
func TestConformanceEveryGroup(t *testing.T) {
	junit := filepath.Join(t.TempDir(), "report.xml")
	out, _, code := run(t, "", "conformance", "-f", unacknowledgedKatalog, "--count", "20", "--junit", junit)
	if code != 1 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{"FAIL  static/compile", "FAIL  static/outputs gadgets.conformance.orkestra.io v1→v2", "PASS  roundtrip/gadgets.conformance.orkestra.io v2→v1→v2", "PASS  protocol/gadgets.conformance.orkestra.io review v1 ", "PASS  protocol/malformed requests"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report has no %q:\n%s", want, out)
		}
	}
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	for _, suite := range []string{`<testsuite name="conformance/static"`, `<testsuite name="conformance/roundtrip"`, `<testsuite name="conformance/protocol"`, `can fail on objects v1 accepts`} {
		if !strings.Contains(string(x), suite) {
			t.Errorf("JUnit has no %s", suite)
		}
	}
	out, _, code = run(t, "", "conformance", "-f", mayFailKatalog, "--count", "20")
	if code != 0 || !strings.Contains(out, "PASS  static/may fail gadgets.conformance.orkestra.io") || !strings.Contains(out, "left out: a mayFail path rejects them") {
		t.Errorf("acknowledged: exit %d:\n%s", code, out)
	}
}

// explain marks a path that may fail, and each place it can.
func TestExplainMayFail(t *testing.T) {
	out, _, code := run(t, "", "explain", "-f", mayFailKatalog, "--from", "v1")
	head := "gadgets.conformance.orkestra.io v1 → v2 (" + mayFailKatalog + `:19:13) — may fail: "` + mayFailReason + `"`
	if code != 0 || !strings.HasPrefix(out, head+"\n") || strings.Count(out, "may fail here (acknowledged); orkestra check says why at ") != 5 {
		t.Errorf("explain:\n%s\nwant first line %s", out, head)
	}
	out, _, _ = run(t, "", "explain", "-f", unacknowledgedKatalog, "--from", "v1")
	if !strings.Contains(out, ") — can fail on objects v1 accepts, and does not declare mayFail\n") || !strings.Contains(out, "(v2) metadata.labels.tier  can fail here, not acknowledged; orkestra check says why at "+unacknowledgedKatalog+":22:26") {
		t.Errorf("explain unacknowledged:\n%s", out)
	}
}

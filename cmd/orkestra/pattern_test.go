package main

import (
	"strings"
	"testing"
)

// orkestra run and dev refuse to start a deprecated katalog that nothing
// accepts, before they reach a cluster (upstream's CheckDeprecationPolicy,
// orkspace/orkestra pkg/katalog/deprecation_policy.go); check only warns.
func TestDeprecatedKatalogDoesNotStart(t *testing.T) {
	const k = "../../conformance/testdata/deprecated-pattern/katalog.yaml"
	for _, cmd := range []string{"run", "dev"} {
		_, errOut, code := run(t, "", cmd, "-f", k)
		if code != 1 || !strings.Contains(errOut, `katalog.yaml:11:1: katalog "gauges" is deprecated and does not start without an explicit acknowledgement: the gauges katalog is retired; install meters instead; end of life in`) ||
			!strings.Contains(errOut, "migrate to meters:2.0.0. To run it anyway, import it from a Komposer that accepts it:\n  lifecycle:\n    accept:\n      patterns:\n        - name: gauges\n") {
			t.Errorf("%s: exit %d\n%s", cmd, code, errOut)
		}
	}
	out, errOut, code := run(t, "", "check", "-f", k)
	if code != 0 || !strings.HasPrefix(out, "ok:") || !strings.Contains(errOut, `warning: lifecycle.deprecation: katalog "gauges" is deprecated: orkestra run and dev refuse to start it`) {
		t.Errorf("check: exit %d\n%s%s", code, out, errOut)
	}
	// The Komposer that accepts it loads without that warning.
	_, errOut, code = run(t, "", "check", "-f", "../../conformance/testdata/deprecated-pattern/komposer.yaml")
	if code != 0 || strings.Contains(errOut, "refuse to start") {
		t.Errorf("check komposer: exit %d\n%s", code, errOut)
	}
}

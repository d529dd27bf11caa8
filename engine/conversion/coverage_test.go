package conversion_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/engine/conversion"
)

func TestCoverage(t *testing.T) {
	plan := compile(t, computed)
	c := conversion.New(plan, conversion.Options{})
	conv := plan.Conversions[schema.GroupKind{Group: "test.orkestra.io", Kind: "Cache"}]
	cov := c.Coverage(conv, "v2", "v1")
	got := strings.Join(cov.Lines(), "\n")
	want := `  spec.displayName          → spec.name ${self.spec.?displayName}; exact through the stash; lossy after an edit (back: ${self.spec.?name.optMap(n, n.lowerAscii())})
  spec.mode                 no counterpart at v1: travels in the stash (exact)
  spec.tier                 → spec.size ${self.spec.?tier.optMap(t, {1: 'small', 2: 'medium', 3: 'large'}[t])}; exact through the stash; lossy after an edit (back: ${self.spec.?size.optMap(s, {'small': 1, 'medium': 2, 'large': 3, 'huge': 3}[s])})
  spec.ttl                  → spec.ttlSeconds ${self.spec.?ttl}; exact through the stash; lossy after an edit (back: ${self.spec.?ttlSeconds.orValue(300)})
  metadata.labels["owner"]  → spec.owner ${self.metadata.?labels.?owner}; exact through the stash; lossy after an edit (back: ${self.spec.?owner.orValue('nobody')})`
	if got != want {
		t.Fatalf("lines:\n%s\nwant:\n%s", got, want)
	}
	// A conformance failure at a target field finds its source.
	if l := cov.LinesFor("spec.size"); len(l) != 1 || !strings.HasPrefix(l[0], "  spec.tier  → spec.size") {
		t.Errorf("LinesFor(spec.size) = %q", l)
	}
	if c.Coverage(conv, "v1", "v3") != nil {
		t.Error("no path, no coverage")
	}
	// The website's plain copies are exact both ways; its literals are listed.
	web := compile(t, website)
	wc := conversion.New(web, conversion.Options{})
	wcov := wc.Coverage(web.Conversions[schema.GroupKind{Group: "demo.orkestra.io", Kind: "Website"}], "v1alpha1", "v1")
	for _, f := range wcov.Fields {
		if f.Field == "spec.image" && f.Back != conversion.BackExact {
			t.Errorf("spec.image: %s", f.Back)
		}
		if f.Field == "spec.theme" && (f.Back != conversion.BackStash || len(f.To) != 0) {
			t.Errorf("spec.theme: %+v", f)
		}
	}
	if len(wcov.Literals) != 1 || wcov.Literals[0].Field != "spec.seo.enabled" || wcov.Literals[0].Value != false {
		t.Errorf("literals %+v", wcov.Literals)
	}
}

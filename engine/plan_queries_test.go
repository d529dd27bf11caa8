package engine_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

func TestDNSName(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"My Katalog!", 63, "my-katalog"},
		{"--a__b--", 63, "a-b"},
		{"shop.example", 63, "shop-example"},
		{"abcdef-ghij", 7, "abcdef"}, // cut, and no dash left at the edge
		{"!!!", 63, ""},
	} {
		if got := engine.DNSName(tc.in, tc.max); got != tc.want {
			t.Errorf("DNSName(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
	if got := (&engine.Plan{Katalog: &katalog.Katalog{Name: "Web Shop"}}).DNSName(63); got != "web-shop" {
		t.Errorf("Plan.DNSName = %q", got)
	}
	if got := (&engine.Plan{}).DNSName(63); got != "" {
		t.Errorf("Plan.DNSName of a plan without katalog = %q", got)
	}
}

func TestPlanEntryQueries(t *testing.T) {
	_, plan, diags := compileBody(t, "      description: the only entry\n")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	gvk := schema.GroupVersionKind{Group: "test.orkestra.io", Version: "v1", Kind: "App"}
	if e := plan.Reconciler(gvk.GroupKind()); e == nil || e.Name != "app" {
		t.Errorf("Reconciler(%s) = %v", gvk.GroupKind(), e)
	}
	if e := plan.EntryFor(gvk); e == nil || e.Name != "app" {
		t.Errorf("EntryFor(%s) = %v", gvk, e)
	}
	other := schema.GroupVersionKind{Group: "test.orkestra.io", Version: "v9", Kind: "App"}
	if e := plan.EntryFor(other); e != nil {
		t.Errorf("EntryFor(%s) = %s, want none", other, e.Name)
	}
	if e := plan.Reconciler(schema.GroupKind{Group: "x.io", Kind: "Other"}); e != nil {
		t.Errorf("Reconciler of an unknown kind = %s", e.Name)
	}
	if got := plan.CRDNames(); len(got) != 1 {
		t.Errorf("CRDNames = %v, want the test CRD", got)
	}
	if got := plan.WebhookCRDNames(); len(got) != 0 {
		t.Errorf("WebhookCRDNames = %v, want none (no conversion)", got)
	}
}

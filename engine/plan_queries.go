package engine

import (
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/orkestra-cel/katalog"
)

// Questions asked of a plan by more than one package (the CLI, simulate,
// the webhook, the certificates, storage migration, admission, manifests):
// one answer each, here.

// Reconciler returns the entry that reconciles objects of gk, nil when none
// does (no entry serves gk, or its entries are disabled).
func (p *Plan) Reconciler(gk schema.GroupKind) *Entry {
	for _, e := range p.Entries {
		if e.Reconciles && e.GVK.GroupKind() == gk {
			return e
		}
	}
	return nil
}

// EntryFor returns the entry of the exact kind and version gvk, or nil.
func (p *Plan) EntryFor(gvk schema.GroupVersionKind) *Entry {
	for _, e := range p.Entries {
		if e.GVK == gvk {
			return e
		}
	}
	return nil
}

// CRDNames returns the names of the CRDs of the plan's entries, once each,
// in katalog order: the CRDs a storage migration looks after. Entries whose
// primary is a built-in kind have none; an untyped stand-in names the
// cluster's CRD.
func (p *Plan) CRDNames() []string {
	var out []string
	for _, e := range p.Entries {
		if e.Source == nil || e.Source.CRD == nil || e.Source.CRD.Origin == katalog.BuiltIn {
			continue
		}
		if n := e.Source.CRD.Object.Name; !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// WebhookCRDNames returns the names of the CRDs converting through the
// webhook (the plan declares their conversion and it is not the identity),
// in katalog order.
func (p *Plan) WebhookCRDNames() []string {
	var out []string
	for _, e := range p.Entries {
		if e.Source == nil || e.Source.CRD == nil || !p.ConvertsByWebhook(e.Source.CRD.GroupKind()) {
			continue
		}
		if n := e.Source.CRD.Object.Name; n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// Served returns the kinds and versions the plan serves: every version of
// every CRD a katalog entry names.
func (p *Plan) Served() []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	add := func(gvk schema.GroupVersionKind) {
		if !slices.Contains(out, gvk) {
			out = append(out, gvk)
		}
	}
	for _, e := range p.Entries {
		add(e.GVK)
		if e.Source != nil && e.Source.CRD != nil {
			for _, v := range e.Source.CRD.Served {
				add(schema.GroupVersionKind{Group: e.GVK.Group, Version: v, Kind: e.GVK.Kind})
			}
		}
	}
	for gk, c := range p.Conversions {
		for _, v := range c.Versions {
			add(gk.WithVersion(v))
		}
	}
	return out
}

var nonDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// DNSName is s as a DNS name of at most max characters: lower case, every
// run of other characters a dash, no dash at an edge ("" when nothing is
// left).
func DNSName(s string, max int) string {
	n := strings.Trim(nonDNS.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(n) > max {
		n = strings.TrimRight(n[:max], "-")
	}
	return n
}

// DNSName is the katalog's name as a DNS name of at most max characters
// (the package's DNSName); "" when it makes none.
func (p *Plan) DNSName(max int) string {
	if p.Katalog == nil {
		return ""
	}
	return DNSName(p.Katalog.Name, max)
}

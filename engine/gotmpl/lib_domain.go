package gotmpl

import (
	celengine "github.com/orkspace/orkestra-cel/engine/cel"
	"github.com/orkspace/orkestra-cel/engine/notes"
)

// The domain functions (upstream pkg/note/kube_domain.go).

var domainFamily = family{name: "domain", functions: []*function{
	{name: "domainHost", fn: notes.DomainHost, translate: trDomainHost,
		celDecl: []celengine.Overload{celengine.StringFunction("domainHost", 1, func(s string) (string, error) { return notes.DomainHost(s), nil })},
		doc:     "`domainHost` (trims space, one `https://`/`http://` and one trailing `/`; not a string gives `\"\"`)"},
	{name: "domainBare", fn: notes.DomainBare, doc: "`domainBare` (domainHost without a leading `www.`)",
		celDecl: []celengine.Overload{celengine.StringFunction("domainBare", 1, func(s string) (string, error) { return notes.DomainBare(s), nil })},
		noCEL:   "domainBare of anything but a string is \"\" in the legacy engine; write domainBare(s) in CEL for a string field"},
}}

func trDomainHost(t *translator, x *call) val {
	t.arity(x, 1, 1)
	a := x.args[0]
	if a.kind != vString {
		if len(a.fails) > 0 || a.failsOther {
			t.failf(x.node(0), "domainHost of %s is always empty, but reading it can fail, as it did in the legacy engine; write \"\" if that is meant", kindName(a))
		}
		return stringLit("")
	}
	return val{kind: vString, expr: "domainHost(" + orValue(a, "''") + ")", prec: precPrimary, ascii: a.ascii, noEdgeSpace: a.noSpace, noSpace: a.noSpace}
}

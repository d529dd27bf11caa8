package gotmpl

import (
	"github.com/google/cel-go/cel"

	"strings"

	"github.com/orkspace/orkestra-cel/engine/notes"
)

// The data functions (upstream pkg/note/data.go and the catalog's data
// entries).

var dataFamily = family{name: "data", functions: []*function{
	spaceless(noteFunction("slugify", notes.Slugify, argString, 1, "`slugify` (lower case; every run of characters but a-z, 0-9 becomes one `-`, trimmed at the ends: `My Team / Platform` → `my-team-platform`)")),
	valueFirst(noteFunction("truncateName", notes.TruncateName, []vkind{vString, vInt}, 1, "`truncateName S N` (at most N bytes, nothing added)")),
	spaceless(noteFunction("sha256sum", notes.SHA256Sum, argString, 0, "`sha256sum` (the first 8 hex characters of the SHA-256)")),
	spaceless(noteFunction("repoSlug", notes.RepoSlug, argString, 1, "`repoSlug` (a repository reference's last segment without `.git`, slugified: `git@github.com:org/payments-api.git` → `payments-api`)")),
	spaceless(noteFunction("toBase64", notes.ToBase64, argString, 2, "`toBase64` (standard encoding)")),
	noteFunction("fromBase64", notes.FromBase64, argString, 1, "`fromBase64` (`\"\"` when not base64)"),
	{name: "toJSON", fn: notes.ToJSON, doc: "`toJSON` (the JSON of any value; `{}` when it has none)", celDecl: anyFunction("toJSON", notes.ToJSON, cel.StringType, cel.DynType),
		noCEL: "the legacy output is Go's encoding/json of the value as the template holds it, and a CEL value is typed by the schema; call toJSON(v) in CEL, which encodes the same way"},
	{name: "lookup", fn: notes.Lookup, pipeFirst: true, translate: trLookup, doc: "`lookup KEY K1 V1 K2 V2 …` (the value of the first matching key; `\"\"` when none)"},
}}

// trLookup is a chain of comparisons, the first match winning.
func trLookup(t *translator, x *call) val {
	t.arity(x, 1, -1)
	key := t.want(x.args[0], vString, x.name(), x.node(0))
	var b strings.Builder
	n := 0
	for i := 1; i+1 < len(x.args); i += 2 {
		k := t.want(x.args[i], vString, x.name(), x.node(i))
		v := t.want(x.args[i+1], vString, x.name(), x.node(i+1))
		b.WriteString(p(key, precRel) + " == " + p(k, precRel) + " ? " + p(v, precOr) + " : ")
		n++
	}
	b.WriteString("''")
	if n == 0 {
		return stringLit("")
	}
	return val{kind: vString, expr: b.String(), prec: precTernary}
}

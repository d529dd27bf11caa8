package engine_test

import (
	"fmt"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// Issue 15 item 6: a 2.3 MB katalog compiled into 1.33 GB. Compilation stops
// at the entry that takes the katalog past MaxExpressions.
func TestExpressionCountBounded(t *testing.T) {
	n := engine.MaxExpressions/20 + 2 // 20 expressions an entry
	p := uniqueKatalog(t, n)
	k, diags := katalog.Load(p)
	if diags.HasErrors() {
		t.Fatal(diags.Errors())
	}
	plan, cdiags := engine.Compile(k, backends(t), engine.CompileOptions{})
	errs := cdiags.Errors()
	last := engine.MaxExpressions / 20 // the entry that passes the limit
	want := fmt.Sprintf("%s:%d:5: [app-%d] the katalog has more than %d expressions (%d up to this entry), the limit of one katalog: each compiled expression keeps 2 to 35 KB; split the operator into several katalogs",
		p, 5+28*last, last, engine.MaxExpressions, 20*(last+1))
	if len(errs) != 1 || errs[0].Error() != want {
		t.Fatalf("errors %v\nwant %s", errs, want)
	}
	if len(plan.Entries) != last+1 {
		t.Errorf("compiled %d entries, want compilation to stop at entry %d", len(plan.Entries), last+1)
	}
}

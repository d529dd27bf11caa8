package cel

import "testing"

// Every overload of the orkestra libraries states its static and runtime
// cost, and ids are unique: a row without one would silently take CEL's
// default cost (issue 19: the overload id was typed three times).
func TestLibraryRowsAreComplete(t *testing.T) {
	seen := map[string]string{}
	for lib, defs := range map[string]libDefs{"orkestra": orkestraDefs(), "orkestra.upstream": upstreamDefs(), "orkestra.conversion": conversionDefs()} {
		if len(defs) == 0 {
			t.Fatalf("%s: no overloads", lib)
		}
		for _, d := range defs {
			if d.id == "" || d.estimate == nil || d.track == nil {
				t.Errorf("%s: overload %q of %q lacks an id, a static estimate or a runtime cost", lib, d.id, d.fn)
			}
			if d.fn != "" && d.binding == nil {
				t.Errorf("%s: %s declares no binding", lib, d.id)
			}
			if prev, dup := seen[d.id]; dup {
				t.Errorf("overload id %q in %s and %s", d.id, prev, lib)
			}
			seen[d.id] = lib
		}
	}
}

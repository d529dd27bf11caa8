package cel

import (
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apiserver/pkg/cel/environment"
)

// Every overload of the orkestra libraries states its static and runtime
// cost, and ids are unique: a row without one would silently take CEL's
// default cost (issue 19: the overload id was typed three times).
func TestLibraryRowsAreComplete(t *testing.T) {
	seen := map[string]string{}
	for lib, defs := range map[string]Overloads{"orkestra": orkestraDefs(), "orkestra.clock": clockDefs(), "orkestra.conversion": conversionDefs(), "orkestra.omit": omitDefs()} {
		if len(defs) == 0 {
			t.Fatalf("%s: no overloads", lib)
		}
		for _, d := range defs {
			if d.ID == "" || d.Estimate == nil || d.Track == nil {
				t.Errorf("%s: overload %q of %q lacks an id, a static estimate or a runtime cost", lib, d.ID, d.Function)
			}
			if d.Function != "" && d.Binding == nil {
				t.Errorf("%s: %s declares no binding", lib, d.ID)
			}
			if prev, dup := seen[d.ID]; dup {
				t.Errorf("overload id %q in %s and %s", d.ID, prev, lib)
			}
			seen[d.ID] = lib
		}
	}
}

// ExtraFunctions is derived from the environments: the orkestra libraries'
// functions, the conversion additions with their macros as written, and a
// function of a library passed in; never one of Kubernetes' own.
func TestExtraFunctions(t *testing.T) {
	b := newBackend(t, Options{Libraries: []cel.EnvOption{cel.Function("extra.fn",
		cel.Overload("extra_fn_string", []*cel.Type{cel.StringType}, cel.StringType, cel.UnaryBinding(func(v ref.Val) ref.Val { return v })))}})
	got := map[string]bool{}
	for _, fn := range b.ExtraFunctions() {
		got[fn] = true
	}
	for _, fn := range []string{"extra.fn", "weekday", "randomHex", "json.encode", "fail", "omit", "cel.bind", "math.greatest", "math.round"} {
		if !got[fn] {
			t.Errorf("%s is missing from %v", fn, b.ExtraFunctions())
		}
	}
	for _, fn := range []string{"", "size", "string", "matches", "quantity", "bind", "greatest", "math.@max"} {
		if got[fn] {
			t.Errorf("%q is listed, but Kubernetes' CEL has it or it cannot be written", fn)
		}
	}
	for _, m := range newMacros(b.envSet.NewExpressionsEnv(), environment.MustBaseEnvSet(compatibilityVersion).NewExpressionsEnv()) {
		if qualifiedMacros[m] == "" {
			t.Errorf("macro %s: add how it is written to qualifiedMacros", m)
		}
	}
}

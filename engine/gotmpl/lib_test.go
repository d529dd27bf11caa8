package gotmpl

import (
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/orkspace/orkestra-cel/engine"
)

// Every row of the library is whole: a function with an implementation (or
// a builtin's arity) and a README line, a CEL translation or the reason it
// has none; a refused function with its reason and nothing else.
func TestLibraryRows(t *testing.T) {
	for _, fam := range families {
		if fam.name == "" || len(fam.functions) == 0 {
			t.Errorf("a family without a name or functions: %+v", fam)
		}
		for _, f := range fam.functions {
			switch {
			case f.name == "":
				t.Errorf("%s: a row without a name", fam.name)
			case f.refused != "":
				if f.fn != nil || f.translate != nil || f.noCEL != "" || f.doc != "" || len(f.celDecl) > 0 {
					t.Errorf("%s is refused (%s) but has an implementation, a translation or a doc line", f.name, f.refused)
				}
				continue
			case f.fn == nil && f.min == 0 && f.max == 0:
				t.Errorf("%s has neither an implementation nor a builtin's arity", f.name)
			case !strings.HasPrefix(f.doc, "`"+f.name):
				t.Errorf("%s: its README line %q does not start with its name", f.name, f.doc)
			case (f.translate == nil) == (f.noCEL == ""):
				t.Errorf("%s: a row has either a CEL translation or the reason it has none, not both or neither", f.name)
			case f.pipeHint != "" && !f.pipeFirst, f.pipeHint != "" && !strings.Contains(f.pipeHint, "%[1]s"):
				t.Errorf("%s: a pipe hint belongs to a value-first function and names it (%%[1]s)", f.name)
			case f.fn != nil && reflect.TypeOf(f.fn).Kind() != reflect.Func:
				t.Errorf("%s: the implementation is a %T", f.name, f.fn)
			}
			for _, d := range f.celDecl {
				if d.Function != f.name || d.ID == "" || d.Binding == nil || d.Estimate == nil || d.Track == nil {
					t.Errorf("%s: its CEL counterpart %q lacks a name, an id, a binding or a cost", f.name, d.ID)
				}
			}
		}
	}
}

// Every CEL function a translation calls exists in the CEL backend's
// environment with CELLibrary: those the rows declare, and the orkestra
// library's (random, clock).
func TestCELCounterpartsExist(t *testing.T) {
	trSetup(t)
	env := map[string]bool{}
	for _, fn := range trCEL.ExtraFunctions() {
		env[fn] = true
	}
	n := 0
	for _, f := range funcs {
		if f.cel == "" {
			continue
		}
		n++
		if !env[f.cel] {
			t.Errorf("%s: its CEL counterpart %s is not declared", f.name, f.cel)
		}
	}
	if n < 30 {
		t.Errorf("only %d rows name a CEL counterpart", n)
	}
}

// The original engine's functions this runtime refuses are load errors
// that say why; an unknown name is not mistaken for one.
func TestRefusedFunctions(t *testing.T) {
	if len(refusedFuncs) == 0 {
		t.Fatal("no refused function to test")
	}
	for name, f := range refusedFuncs {
		got := compileErrs(t, "{{ "+name+" .spec.config }}", testCtx(t))
		want := name + " is a function of the original engine that this runtime does not implement: " + f.refused
		if !strings.Contains(got, want) {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
	if got := compileErrs(t, "{{ noSuchFunction .spec.image }}", testCtx(t)); strings.Contains(got, "original engine") || !strings.Contains(got, `unknown function "noSuchFunction"`) {
		t.Errorf("unknown function: %q", got)
	}
}

// The README's Functions table is the rows' (lib.go functionTable); the
// value-first paragraph names every pipeFirst function, and the CEL section
// every counterpart a row declares.
func TestREADMEFunctionTable(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	if table := functionTable(); !strings.Contains(readme, table) {
		t.Errorf("the README's legacy Functions table is not the library's; replace it with:\n\n%s", table)
	}
	if table := refusedTable(); !strings.Contains(readme, table) {
		t.Errorf("the README's table of refused functions is not the library's; replace it with:\n\n%s", table)
	}
	i := strings.Index(readme, "Functions that take their value first (")
	if i < 0 {
		t.Fatal("the README lost its paragraph on value-first functions")
	}
	para := readme[i : i+strings.Index(readme[i:], "\n\n")]
	j := strings.Index(readme, "**The original engine's functions, typed.**")
	if j < 0 {
		t.Fatal("the README lost its paragraph on the original's functions in CEL")
	}
	typed := readme[j : j+strings.Index(readme[j:], "\n\n")]
	var names []string
	for name := range funcs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		f := funcs[name]
		if f.pipeFirst && !strings.Contains(para, "`"+name+"`") {
			t.Errorf("%s takes its value first, but the README's paragraph does not name it", name)
		}
		if len(f.celDecl) > 0 && !strings.Contains(typed, "`"+name+"(") {
			t.Errorf("%s has a CEL counterpart the README's CEL section does not name", name)
		}
	}
}

const upstreamSchema = `
type: object
properties:
  spec:
    type: object
    properties:
      schedule: {type: string, maxLength: 64}
      name: {type: string, maxLength: 64}
      domain: {type: string, maxLength: 253}
      child:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`

const upstreamObj = `
spec:
  schedule: "*/5 2 * * 1"
  name: WebsiteOperator
  domain: " https://acme.example.com/ "
  child:
    metadata: {name: web}
    spec:
      replicas: 3
      resources: {requests: {cpu: 250m, memory: 64Mi}}
    status:
      readyReplicas: 3
      phase: Running
      lastScheduleTime: "2026-05-19T02:00:00Z"
`

// The CEL counterparts the rows declare give the legacy functions' results
// (expected values derived by hand from upstream pkg/note, as in
// TestUpstreamFunctions).
func TestCELCounterparts(t *testing.T) {
	trSetup(t)
	self := schemaOf(t, upstreamSchema)
	obj := objectOf(t, upstreamObj)
	cases := []struct {
		src  string
		want any
		err  string
	}{
		{src: "${camelToKebab(self.spec.name)}", want: "website-operator"},
		{src: "${domainHost(self.spec.domain)}", want: "acme.example.com"},
		{src: "${cronMinute(self.spec.schedule)}", want: "*/5"},
		{src: "${cronHour(self.spec.schedule)}", want: "2"},
		{src: "${cronDom(self.spec.schedule)}", want: "*"},
		{src: "${cronMonth('0 0 1 6 *')}", want: "6"},
		{src: "${cronDow('@weekly')}", want: "0"},
		{src: "${cronMinute('')}", want: "*"},
		{src: "${cronMinute('0 0 *')}", err: `cronMinute: expected 5 fields in "0 0 *", got 3`},
		{src: "${cronValid(self.spec.schedule)}", want: true},
		// cronExpr joins five fields, * for a blank one; cronFromAny takes a
		// cron map or string (iAlexeze/orkestra examples/kubebuilder-conversion)
		{src: "${cronExpr('*/5', '0', '', ' ', '1')}", want: "*/5 0 * * 1"},
		{src: "${cronFromAny({'minute': dyn('30'), 'hour': dyn(2)})}", want: "30 2 * * *"},
		{src: "${cronFromAny('@daily')}", want: "0 0 * * *"},
		{src: "${cronFromAny(7)}", want: "* * * * *"},
		{src: "${cronNormalize(' @daily ')}", want: "0 0 * * *"},
		{src: "${cronDescribe('0 2 * * *')}", want: "At 2:0 every day"},
		{src: "${allReplicasReady(self.spec.child)}", want: true},
		{src: "${readyReplicas(self.spec.child)}", want: int64(3)},
		{src: "${resourceExists(self.spec.child)}", want: true},
		{src: "${resourceExists({'_placeholder': true})}", want: false},
		{src: "${phase(self.spec.child)}", want: "Running"},
		{src: "${resourceCPU(self.spec.child)}", want: "250m"},
		{src: "${resourceMemory(self.spec.child)}", want: "64Mi"},
		{src: "${cronJobLastScheduleTime(self.spec.child)}", want: "2026-05-19T02:00:00Z"},
		{src: "${cronJobNextScheduleTime(self.spec.child)}", want: ""},
	}
	s := engine.NewScope(obj)
	for _, tc := range cases {
		e, diags := trCEL.CompileValue(tc.src, &engine.Context{Field: "x", Pos: testPos, Self: self})
		if diags.HasErrors() {
			t.Errorf("%s: %v", tc.src, diags)
			continue
		}
		got, err := e.Eval(s)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.src, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.src, err)
		case got != tc.want:
			t.Errorf("%s = %#v, want %#v", tc.src, got, tc.want)
		}
	}
}

// Their cost is estimated: a string function over a bounded string is
// cheap, over a field bounded only by the request size it is counted.
func TestCELCounterpartsCost(t *testing.T) {
	trSetup(t)
	self := schemaOf(t, upstreamSchema)
	for src, ok := range map[string]bool{
		"${camelToKebab(self.spec.name)}":            true,
		"${allReplicasReady(self.spec.child)}":       true,
		"${camelToKebab(string(self.spec.child.x))}": false,
	} {
		_, diags := trCEL.CompileValue(src, &engine.Context{Field: "x", Pos: testPos, Self: self, CostLimit: 100})
		if diags.HasErrors() == ok || !ok && !strings.Contains(diags.Error(), "estimated cost") {
			t.Errorf("%s: %v", src, diags)
		}
	}
}

// objectOf decodes a custom resource from YAML, as the API server would
// give it (integers int64).
func objectOf(t testing.TB, y string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := utilyaml.Unmarshal([]byte(y), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

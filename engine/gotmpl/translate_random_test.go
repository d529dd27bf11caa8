package gotmpl

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// TestTranslateRandomTemplates translates templates built at random from
// the constructs the translator knows, into every kind of target, and
// checks each translation that is made against its template on the test
// objects. A translation that does not compile in CEL is a translator bug
// too, unless CEL refuses it for its cost.
func TestTranslateRandomTemplates(t *testing.T) {
	trSetup(t)
	seed := uint64(11)
	if s := os.Getenv("TRANSLATE_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	r := rand.New(rand.NewPCG(seed, 12))
	g := &tmplGen{r: r}
	n := 1500
	if testing.Short() {
		n = 300
	}
	var translated, untranslatable, legacyRejects, costly int
	for i := 0; i < n; i++ {
		if r.IntN(5) == 0 {
			// a when: template
			src := "{{ " + strings.Trim(g.boolean(0), "()") + " }}"
			ctx := trCtx(nil, engine.CoerceTyped, false)
			ctx.Field = "operatorBox.onCreate.deployments[0].when"
			if _, d := New(trCEL).CompileCondition(src, ctx); d.HasErrors() {
				legacyRejects++
				continue
			}
			out, err := TranslateCondition(src, ctx, TranslateOptions{Namespaced: true})
			if err != nil {
				untranslatable++
				continue
			}
			if _, d := trCEL.CompileCondition(out, ctx); d.HasErrors() && strings.Contains(d.Error(), "exceeds budget") {
				costly++
				continue
			}
			translated++
			checkConditionEquivalent(t, src, out, ctx)
			if t.Failed() {
				t.Fatalf("stopping at %s → %s", src, out)
			}
			continue
		}
		src := g.template()
		to := target(r.IntN(int(toConvInt) + 1))
		ctx := to.ctx()
		if _, d := New(trCEL).CompileValue(src, ctx); d.HasErrors() {
			legacyRejects++
			continue
		}
		out, err := TranslateValue(src, ctx, TranslateOptions{Namespaced: true})
		if err != nil {
			untranslatable++
			continue
		}
		if _, d := trCEL.CompileValue(out, ctx); d.HasErrors() {
			if strings.Contains(d.Error(), "exceeds budget") {
				costly++
				continue
			}
			t.Errorf("%s (target %d) → %s does not compile: %v", src, to, out, d)
			continue
		}
		translated++
		checkValueEquivalent(t, src, out, ctx)
		if t.Failed() {
			t.Fatalf("stopping at %s → %s", src, out)
		}
	}
	t.Logf("%d templates: %d translated and equivalent, %d untranslatable, %d refused by CEL's cost limit, %d rejected by the legacy checker",
		n, translated, untranslatable, costly, legacyRejects)
	if translated < n/5 {
		t.Errorf("only %d translated", translated)
	}
}

type tmplGen struct{ r *rand.Rand }

func (g *tmplGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

var (
	strFields  = []string{".spec.image", ".spec.name", ".spec.tier", ".spec.environment", ".spec.text", ".metadata.name", ".metadata.namespace", ".metadata.labels.app", ".status.phase"}
	intFields  = []string{".spec.replicas", ".spec.port", ".spec.count"}
	boolFields = []string{".spec.enabled"}
	strLits    = []string{`"gold"`, `""`, `"x"`, `" pad "`, `"web-"`, `"-"`, `"é"`, `"80"`, `"true"`}
	intLits    = []string{"0", "1", "3", "-2", "100"}
)

func (g *tmplGen) str(d int) string {
	if d > 2 {
		return g.pick(append(strFields, strLits...)...)
	}
	switch g.r.IntN(12) {
	case 0, 1, 2:
		return g.pick(strFields...)
	case 3:
		return g.pick(strLits...)
	case 4:
		return fmt.Sprintf("(default %s %s)", g.pick(strLits...), g.str(d+1))
	case 5:
		return fmt.Sprintf("(%s | default %s)", g.str(d+1), g.pick(strLits...))
	case 6:
		return fmt.Sprintf("(%s %s)", g.pick("toUpper", "toLower", "trimSpace"), g.str(d+1))
	case 7:
		return fmt.Sprintf("(replace %s %s %s)", g.str(d+1), g.pick(strLits...), g.pick(strLits...))
	case 8:
		return fmt.Sprintf("(ternary %s %s %s)", g.boolean(d+1), g.str(d+1), g.str(d+1))
	case 9:
		return fmt.Sprintf("(printf %s %s %s)", g.pick(`"%s-%d"`, `"%v/%v"`), g.str(d+1), g.integer(d+1))
	case 10:
		return fmt.Sprintf("(coalesce %s %s %s)", g.str(d+1), g.str(d+1), g.pick(`"z"`, `"gold"`))
	}
	return fmt.Sprintf("(toString %s)", g.pick(append(intFields, strFields...)...))
}

func (g *tmplGen) integer(d int) string {
	if d > 2 {
		return g.pick(append(intFields, intLits...)...)
	}
	switch g.r.IntN(9) {
	case 0, 1, 2:
		return g.pick(intFields...)
	case 3:
		return g.pick(intLits...)
	case 4:
		return fmt.Sprintf("(%s %s %s)", g.pick("add", "sub", "mul", "max", "min"), g.integer(d+1), g.integer(d+1))
	case 5:
		return fmt.Sprintf("(mod %s %s)", g.integer(d+1), g.pick("2", "7", ".spec.port"))
	case 6:
		return fmt.Sprintf("(default %s %s)", g.pick(intLits...), g.integer(d+1))
	case 7:
		return fmt.Sprintf("(len %s)", g.pick(".spec.tags", ".spec.labels", ".metadata.name"))
	}
	return fmt.Sprintf("(toInt %s)", g.pick(".spec.ratio", ".spec.enabled", ".spec.port"))
}

func (g *tmplGen) boolean(d int) string {
	if d > 2 {
		return g.pick(boolFields...)
	}
	switch g.r.IntN(8) {
	case 0:
		return g.pick(boolFields...)
	case 1:
		return fmt.Sprintf("(eq %s %s)", g.pick(strFields...), g.pick(strLits...))
	case 2:
		return fmt.Sprintf("(ne %s %s)", g.pick(intFields...), g.pick(intLits...))
	case 3:
		return fmt.Sprintf("(%s %s %s)", g.pick("lt", "le", "gt", "ge"), g.pick(intFields...), g.pick(intLits...))
	case 4:
		return fmt.Sprintf("(%s %s %s)", g.pick("and", "or"), g.boolean(d+1), g.boolean(d+1))
	case 5:
		return fmt.Sprintf("(not %s)", g.boolean(d+1))
	case 6:
		return fmt.Sprintf("(%s %s %s)", g.pick("hasPrefix", "hasSuffix", "contains"), g.str(d+1), g.pick(strLits...))
	}
	return fmt.Sprintf("(empty %s)", g.pick(".spec.tags", ".spec.environment", ".spec.replicas", ".spec.enabled"))
}

func (g *tmplGen) action() string {
	var e string
	switch g.r.IntN(4) {
	case 0, 1:
		e = g.str(0)
	case 2:
		e = g.integer(0)
	default:
		e = g.boolean(0)
	}
	e = strings.TrimSuffix(strings.TrimPrefix(e, "("), ")")
	return "{{ " + e + " }}"
}

func (g *tmplGen) template() string {
	switch g.r.IntN(6) {
	case 0:
		return g.pick("", " ", "pre-") + g.action() + g.pick("", "-post", " ", ":") + g.action()
	case 1:
		return fmt.Sprintf("{{ if %s }}%s{{ else }}%s{{ end }}", strings.Trim(g.boolean(0), "()"), g.pick("a", "", " b "), g.action())
	case 2:
		return g.action() + g.pick(" x", "-svc", "")
	}
	return g.action()
}

// TestTranslateStructuredRandom: every operator on fields of every type,
// with operands that match, do not match, or do not parse, negated or not.
func TestTranslateStructuredRandom(t *testing.T) {
	trSetup(t)
	fields := []string{"spec.image", "spec.name", "spec.tier", "spec.environment", "spec.replicas", "spec.port", "spec.count",
		"spec.ratio", "spec.enabled", "spec.size", "metadata.name", "metadata.labels.app", "status.phase", "spec.labels.x"}
	values := []string{"", "0", "1", "3", "80", "-2", "2.5", "1,5", "0,100", "true", "false", "True", "gold", "gold,free", "free, enterprise,",
		"^web", "[0-9]+", "e", "<no value>", " 5", "5abc", "1e3", "03"}
	ops := []string{"equals", "notEquals", "contains", "notContains", "prefix", "notPrefix", "suffix", "notSuffix", "regex",
		"exists", "notExists", "gt", "lt", "gte", "lte", "between", "notBetween", "in", "notIn"}
	ctx := trCtx(nil, engine.CoerceTyped, false)
	ctx.Field = "operatorBox.onCreate.deployments[0].when"
	idiomatic := 0
	r := rand.New(rand.NewPCG(3, 4))
	n := 1500
	if testing.Short() {
		n = 300
	}
	for i := 0; i < n; i++ {
		f, op, v, neg := fields[r.IntN(len(fields))], ops[r.IntN(len(ops))], values[r.IntN(len(values))], r.IntN(2) == 0
		c := &katalog.Condition{Pos: katalog.Pos{File: "k.yaml", Line: 5, Col: 3}, Field: f, Operator: op, Value: v, Negate: neg}
		old, d := New(trCEL).CompileStructured([]*katalog.Condition{c}, true, ctx)
		if d.HasErrors() {
			continue // an operand the checker rejects
		}
		got, idio, err := TranslateStructured(c, ctx, TranslateOptions{Namespaced: true})
		if err != nil {
			t.Fatalf("%s %s %q: %v", f, op, v, err)
		}
		nw, d := trCEL.CompileCondition(got, ctx)
		if d.HasErrors() {
			t.Fatalf("%s %s %q → %s: %v", f, op, v, got, d)
		}
		if idio {
			idiomatic++
		}
		for _, obj := range trObjs {
			if a, b := evalCondition(old, obj), evalCondition(nw, obj); !same(a, b, false) {
				t.Fatalf("%s %s %q (negate %v) → %s differs on %v: legacy %s, cel %s", f, op, v, neg, got, obj, a, b)
			}
		}
	}
	t.Logf("%d conditions, %d translated to idiomatic CEL, the rest to the legacy.* helpers; all equivalent", n, idiomatic)
}

package gotmpl

import (
	"strings"
	"testing"
	"time"

	"github.com/orkspace/orkestra-cel/engine"
	"github.com/orkspace/orkestra-cel/katalog"
)

// TestTranslateUpstreamFunctions: one case per function of the original
// that the adapter gained (rows in lib_*.go, their semantics in
// funcs_upstream_test.go): the exact CEL, then equivalence on the generated
// objects.
func TestTranslateUpstreamFunctions(t *testing.T) {
	trSetup(t)
	defer engine.SetClock(func() time.Time { return time.Date(2026, 7, 14, 10, 0, 0, 0, time.UTC) })()
	cases := []struct {
		name, src string
		to        target
		want      string
		fail      string
	}{
		{"boolTernary", `{{ boolTernary .spec.enabled "Suspended" "Active" }}`, toString, `${self.spec.enabled ? 'Suspended' : 'Active'}`, ""},
		{"boolTernary of eq", `{{ boolTernary (eq .spec.tier "gold") 100 20 }}`, toInt, `${self.spec.?tier.orValue('') == 'gold' ? 100 : 20}`, ""},
		{"boolDefault", `{{ boolDefault .spec.enabled false }}`, toBool, `${self.spec.?enabled.orValue(false)}`, ""},
		{"boolDefault into a string", `{{ boolDefault .spec.enabled true }}`, toString, `${string(self.spec.?enabled.orValue(true))}`, ""},
		{"boolDefault of a string", `{{ boolDefault .spec.name true }}`, toBool, "", "only for a boolean"},
		{"boolDefault with a field as the fallback", `{{ boolDefault .spec.enabled .spec.enabled }}`, toBool, "", "only as true or false"},
		{"typeMap of a map", `{{ typeMap .spec.labels }}`, toBool, `${self.spec.?labels.hasValue()}`, ""},
		{"typeMap of a string", `{{ typeMap .spec.name }}`, toBool, `${type(self.spec.name) == map}`, ""},
		{"typeMap of metadata", `{{ typeMap .metadata }}`, toBool, `${true}`, ""},
		{"typeMap of an open object", `{{ typeMap .spec.config }}`, toBool, `${self.spec.?config.hasValue()}`, ""},
		{"typeMap of int-or-string", `{{ typeMap .spec.size }}`, toBool, `${self.spec.?size.optMap(v, type(v) == map).orValue(false)}`, ""},
		{"camelToKebab", `{{ camelToKebab .spec.name }}`, toString, `${camelToKebab(self.spec.name)}`, ""},
		// domainHost may leave white space at an edge ("https:// x"), which
		// the legacy output trimmed.
		{"typeMap of an untyped value", `{{ if typeMap .spec.config.x }}map{{ else }}other{{ end }}`, toString, `${self.spec.config.?x.optMap(v, type(v) == map).orValue(false) ? 'map' : 'other'}`, ""},
		{"cronNormalize", `{{ cronNormalize .spec.environment }}`, toString, `${cronNormalize(self.spec.environment)}`, ""},
		{"cronExpr", `{{ cronExpr .spec.name .spec.environment "*" "*" .spec.image }}`, toString, `${cronExpr(self.spec.name, self.spec.environment, '*', '*', self.spec.image).trim()}`, ""},
		{"cronExpr of untyped fields", `{{ cronExpr .spec.config.m .spec.config.h "*" "*" "*" }}`, toString, `${cronExpr(legacy.typed(self.spec.config.m, 'string'), legacy.typed(self.spec.config.h, 'string'), '*', '*', '*').trim()}`, ""},
		{"domainHost", `{{ domainHost .spec.environment }}`, toString, `${domainHost(self.spec.?environment.orValue('')).trim()}`, ""},
		{"domainHost of a number", `{{ domainHost .metadata.generation }}`, toString, `${''}`, ""},
		{"domainHost of a number that can fail", `{{ domainHost .spec.port }}`, toString, "", "always empty"},
		{"cronMinute", `{{ cronMinute .spec.environment }}`, toString, `${cronMinute(self.spec.environment).trim()}`, ""},
		{"cronDow of a literal", `{{ cronDow "@weekly" }}`, toString, `${cronDow('@weekly')}`, ""},
		{"cronValid", `{{ cronValid .spec.environment }}`, toBool, `${cronValid(self.spec.environment)}`, ""},
		{"cronDescribe", `{{ cronDescribe .spec.name }}`, toString, `${cronDescribe(self.spec.name)}`, ""},
		{"allReplicasReady of self", `{{ allReplicasReady . }}`, toBool, `${allReplicasReady(self)}`, ""},
		{"resourceCPU with a default", `{{ resourceCPU . | default "100m" }}`, toString, `${(resourceCPU(self) != '' ? resourceCPU(self) : '100m').trim()}`, ""},
		{"an object function of a missing map", `{{ resourceExists .spec.labels }}`, toBool, `${self.spec.?labels.hasValue() ? resourceExists(self.spec.?labels.value()) : false}`, ""},
		{"children", `{{ allReplicasReady .children.deployment }}`, toBool, "", "children"},
		{"weekday", `{{ weekday }}`, toBool, `${weekday()}`, ""},
		{"timeInWindow", `{{ and weekday (timeInWindow "09:00" "18:00") }}`, toBool, `${weekday() && timeInWindow('09:00', '18:00')}`, ""},
		// nextCron gives "" for a schedule that does not parse: the text's
		// trailing space would then be trimmed.
		{"nextCron", `next: {{ nextCron "0 9 * * 1-5" }}`, toString, `${('next: ' + nextCron('0 9 * * 1-5')).trim()}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := c.to.ctx()
			got, err := TranslateValue(c.src, ctx, TranslateOptions{Namespaced: true})
			if c.fail != "" {
				if err == nil || !strings.Contains(err.Error(), c.fail) {
					t.Fatalf("%s: got %q, %v; want untranslatable (%s)", c.src, got, err, c.fail)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", c.src, err)
			}
			if got != c.want {
				t.Errorf("%s\n got: %s\nwant: %s", c.src, got, c.want)
			}
			checkValueEquivalent(t, c.src, got, ctx)
		})
	}
}

// A note is inlined: the translation is its template's, trimmed.
func TestTranslateNotes(t *testing.T) {
	trSetup(t)
	notes := map[string]string{
		"serviceHost": "{{ .metadata.name }}.{{ .metadata.namespace }}.svc.cluster.local",
		"padded":      "  [{{ .spec.environment }}]  ",
		"loop":        "{{ range .spec.tags }}{{ . }}{{ end }}",
	}
	b, diags := New(trCEL).WithNotes([]*katalog.Note{
		noteDecl("serviceHost", notes["serviceHost"], 1), noteDecl("padded", notes["padded"], 3), noteDecl("loop", notes["loop"], 5)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cases := []struct{ src, want, fail string }{
		{`{{ serviceHost }}`, `${self.metadata.name + '.' + self.metadata.namespace + '.svc.cluster.local'}`, ""},
		{`https://{{ serviceHost }}/`, `https://${self.metadata.name + '.' + self.metadata.namespace + '.svc.cluster.local'}/`, ""},
		{`{{ padded }}`, `${'[' + self.spec.?environment.orValue('') + ']'}`, ""},
		{`{{ loop }}`, "", "in the note loop: {{ range }} has no exact CEL form"},
	}
	for _, c := range cases {
		ctx := toString.ctx()
		got, err := TranslateValue(c.src, ctx, TranslateOptions{Namespaced: true, Notes: notes})
		if c.fail != "" {
			if err == nil || !strings.Contains(err.Error(), c.fail) {
				t.Errorf("%s: got %q, %v; want untranslatable (%s)", c.src, got, err, c.fail)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s\n got: %s (%v)\nwant: %s", c.src, got, err, c.want)
			continue
		}
		old, d := b.(*Backend).CompileValue(c.src, ctx)
		if d.HasErrors() {
			t.Fatal(d)
		}
		nw, d := trCEL.CompileValue(got, ctx)
		if d.HasErrors() {
			t.Fatal(d)
		}
		for _, obj := range trObjs {
			if a, b := evalExpr(old, obj), evalExpr(nw, obj); !same(a, b, false) {
				t.Fatalf("%s → %s differ: %s / %s", c.src, got, a, b)
			}
		}
	}
}

// Where an empty conversion output became null and the target field is not
// nullable, the API server prunes the null: the translation is an optional
// whose none leaves the field unset (issue 11).
func TestTranslateConversionNull(t *testing.T) {
	trSetup(t)
	conv := func(expected string, nullable bool) *engine.Context {
		ctx := trCtx(sch(expected), engine.CoerceGuess, false)
		ctx.Field = "conversion.paths[0].spec.x"
		ctx.Expected.Nullable = nullable
		return ctx
	}
	cases := []struct {
		name, src string
		ctx       *engine.Context
		want      string
		fail      string
	}{
		{"plain string", `{{ .spec.environment }}`, conv("string", false), `${self.spec.?environment.optFlatMap(v, v.trim() != '' ? optional.of(v.trim()) : optional.none())}`, ""},
		{"computed string", `{{ .spec.tier | default "" }}`, conv("string", false), `${optional.of(self.spec.?tier.orValue('')).optFlatMap(v, v != '' ? optional.of(v) : optional.none())}`, ""},
		{"values only", `{{ .spec.tier }}{{ .spec.tags }}`, conv("string", false), "", "Go syntax"},
		{"values only, all may be empty", `{{ .spec.tier }}{{ .spec.tier }}`, conv("string", false), `${optional.of(self.spec.?tier.orValue('') + self.spec.?tier.orValue('')).optFlatMap(v, v != '' ? optional.of(v) : optional.none())}`, ""},
		{"missing integer", `{{ .spec.replicas | default 0 }}`, conv("integer", false), "", ""},
		{"nullable target keeps the null", `{{ .spec.environment }}`, conv("string", true), "", "became null"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := TranslateValue(c.src, c.ctx, TranslateOptions{Namespaced: true})
			switch {
			case c.fail != "":
				if err == nil || !strings.Contains(err.Error(), c.fail) {
					t.Fatalf("%s: got %q, %v; want untranslatable (%s)", c.src, got, err, c.fail)
				}
				return
			case err != nil:
				t.Fatalf("%s: %v", c.src, err)
			case c.want != "" && got != c.want:
				t.Errorf("%s\n got: %s\nwant: %s", c.src, got, c.want)
			}
			checkValueEquivalentNullUnset(t, c.src, got, c.ctx)
		})
	}
}

// checkValueEquivalentNullUnset is checkValueEquivalent where a null is the
// field left unset.
func checkValueEquivalentNullUnset(t *testing.T, src, cel string, ctx *engine.Context) {
	t.Helper()
	old, d := New(trCEL).CompileValue(src, ctx)
	if d.HasErrors() {
		t.Fatalf("legacy %s does not compile: %v", src, d)
	}
	nw, d := trCEL.CompileValue(cel, ctx)
	if d.HasErrors() {
		t.Fatalf("translation %s of %s does not compile: %v", cel, src, d)
	}
	for _, obj := range trObjs {
		a, b := evalExpr(old, obj), evalExpr(nw, obj)
		if a.err == nil && a.json == "null" {
			a = outcome{absent: true}
		}
		if !same(a, b, false) {
			t.Fatalf("%s → %s differ: legacy %s, cel %s", src, cel, a, b)
		}
	}
}
